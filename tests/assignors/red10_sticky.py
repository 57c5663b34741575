"""Red team 10 (2026-11-29): the seeded bug that passed the sticky and eager rules, written again in
Python (``tests/test_red10.py``; the red team's own assignor spoke the exec protocol from Node.js).

``round_robin_afresh`` deals every task at every rebalance as if nothing were held: the tasks in
natural order, round-robin over the staying members in natural order (each member's share by its
threads), then each stateful task's standbys on the next members that do not run it. Always
balanced, never sticky: seed 002, "the more "sticky" the assignment in Streams the better, so we
tend to avoid this kind of simple round-robin assignment on subsequent rebalances".

``keep_then_deal`` is the same dealing with the one step it lacks: each member first keeps its
own actives up to its share (the remainder of the shares going to the members holding the most),
then the rest are dealt to the members with room (no bug).

``mixed_orders`` is ``keep_then_deal`` with two sort helpers mixed up: the shares are worked out
over the members in plain string order, then handed out by position over the members in
natural order. With ids ``I1 .. I9`` the two orders agree and it is correct; with ``I8, I9,
I10`` (``check --first-id 8``) a member holding more gets a smaller share, and a balanced layout
is dealt again (red team 10's ``strflip``).

``antisticky`` is ``keep_then_deal`` with the remainder of the shares going to the members
holding the *fewest* (red team 10's ``antisticky``): a balanced layout of four tasks on three
members, 2, 1, 1, is dealt again as 1, 2, 1 whenever the leader is asked about it. No membership
event shows it a balanced layout (a join or a leave unbalances four tasks on three members), so
it passed every sticky and eager default until the rebalances requested in a quiescent group were
judged (``GroupModel.requested_probes``).
"""

from __future__ import annotations

import re


def _nat(text: str):
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", text) if p)


def _shares(members: list[dict], n: int, keep: bool, anti: bool = False) -> dict[str, int]:
    """Each member's number of actives by threads (``members`` in the order the shares are worked
    out in); the remainder to the members holding the most, when keeping, else to the first
    (``anti``: to the members holding the fewest)."""
    threads = sum(m.get("capacity", 1) for m in members)
    share = {m["id"]: n * m.get("capacity", 1) // threads for m in members}
    sign = 1 if anti else -1
    first = sorted(members, key=lambda m: sign * len(m.get("active", []))) if keep else members  # stable: ties in order
    for m in first[: n - sum(share.values())]:
        share[m["id"]] += 1
    return share


def _deal(view: dict, keep: bool, mixed: bool = False, anti: bool = False) -> dict:
    members = sorted((m for m in view["members"] if not m.get("leaving")), key=lambda m: _nat(m["id"]))
    members = members or sorted(view["members"], key=lambda m: _nat(m["id"]))
    tasks = sorted((t["id"] for t in view["tasks"]), key=_nat)
    stateful = {t["id"] for t in view["tasks"] if t.get("stateful", True)}
    if mixed:  # worked out in string order, handed out by position in natural order
        by_string = sorted(members, key=lambda m: m["id"])
        worked = _shares(by_string, len(tasks), keep)
        share = {m["id"]: worked[by_string[i]["id"]] for i, m in enumerate(members)}
    else:
        share = _shares(members, len(tasks), keep, anti)
    out = {m["id"]: {"active": [], "standby": [], "warmup": []} for m in view["members"]}
    placed = set()
    if keep:
        for m in members:
            for t in sorted(m.get("active", []), key=_nat):
                if t in tasks and t not in placed and len(out[m["id"]]["active"]) < share[m["id"]]:
                    out[m["id"]]["active"].append(t)
                    placed.add(t)
    i = 0
    for t in tasks:
        if t in placed:
            continue
        while len(out[members[i % len(members)]["id"]]["active"]) >= share[members[i % len(members)]["id"]]:
            i += 1
        out[members[i % len(members)]["id"]]["active"].append(t)
        i += 1
    standbys = min(view.get("config", {}).get("num_standby_replicas", 0), len(members) - 1)
    ids = [m["id"] for m in members]
    for t in tasks:
        if t not in stateful:
            continue
        owner = next(m for m in ids if t in out[m]["active"])
        at = ids.index(owner)
        for k in range(1, standbys + 1):
            out[ids[(at + k) % len(ids)]]["standby"].append(t)
    return {"assignment": out, "probing_rebalance": False}


def round_robin_afresh(view: dict) -> dict:
    return _deal(view, keep=False)


def keep_then_deal(view: dict) -> dict:
    return _deal(view, keep=True)


def mixed_orders(view: dict) -> dict:
    return _deal(view, keep=True, mixed=True)


def antisticky(view: dict) -> dict:
    return _deal(view, keep=True, anti=True)
