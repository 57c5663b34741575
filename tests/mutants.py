"""The mutation suite (issue #10 item 7): realistic wrong KIP-441 assignors, one bug each.

Every mutant is the worked example of a correct implementation, ``examples/ha_assignor.py``
(``correct`` below), with one mistake of the kind real implementations make; each is a ``py:``
assignor (a dict in, a dict out), run from the repository root as
``rebalproof check --assignor py:tests.mutants:<name>``. :data:`MUTANTS` says, for each, the
property ``check`` must name, the bounds it is checked at, and why those bounds: some bugs only
show with more standbys, more members, stateless tasks or after a leader fail-over, so smaller
bounds miss them; the two lag bugs show only with boundary lags (a caught-up copy reported at
exactly ``acceptable_recovery_lag``, on by default for ``py:``). ``tests/test_mutants.py`` runs
every row and the correct assignors at the same bounds.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from examples.ha_assignor import assign as correct
from examples.ha_assignor import id_key
from tests.assignors.independent_seeded import lag_strict, rank_unfloored  # red team 2's, reused

__all__ = ["MUTANTS", "Mutant", "correct", "lag_strict", "rank_unfloored"]


def _stateful(request: dict) -> list[str]:
    return sorted((t["id"] for t in request["tasks"] if t.get("stateful", True)), key=id_key)


def _stateless(request: dict) -> list[str]:
    return sorted((t["id"] for t in request["tasks"] if not t.get("stateful", True)), key=id_key)


def _members(answer: dict) -> list[str]:
    return sorted(answer["assignment"], key=id_key)


def _settled(request: dict, answer: dict) -> bool:
    """The answer keeps every member's actives: the group was settled."""
    return all(sorted(m.get("active", [])) == sorted(answer["assignment"][m["id"]]["active"]) for m in request["members"])


# -- the mutants ------------------------------------------------------------------------------
def owner_blind(request: dict) -> dict:
    """Round-robin over the sorted tasks, ignoring owners and lags (and standbys)."""
    members = sorted((m["id"] for m in request["members"]), key=id_key)
    out = {m: {"active": [], "standby": [], "warmup": []} for m in members}
    for i, task in enumerate(sorted((t["id"] for t in request["tasks"]), key=id_key)):
        out[members[i % len(members)]]["active"].append(task)
    return {"assignment": out}


def kafka_13600(request: dict) -> dict:
    """KAFKA-13600's pattern: a task nobody is caught up on is handed out by load like a new
    one, so its active may go to a member with no state while another (its restoring owner, a
    warmup) has partial state."""
    limit = request.get("config", {}).get("acceptable_recovery_lag", 10000)
    seen = copy.deepcopy(request)
    for task in _stateful(request):
        lags = [m.get("lags", {}).get(task, 0 if task in m.get("active", []) else None) for m in seen["members"]]
        if any(lag is not None and lag <= limit for lag in lags):
            continue
        for m in seen["members"]:
            m.get("lags", {}).pop(task, None)
            for role in ("active", "standby", "warmup"):
                if task in m.get(role, []):
                    m[role] = [t for t in m[role] if t != task]
    return correct(seen)


def standby_as_warmup(request: dict) -> dict:
    """The required standbys are sent in the warmup list (a label mix-up), and, as for any
    warmup out, a probing rebalance is asked for: the assignor never considers itself done.
    (The labels alone change no verdict: a copy beyond the active counts by number.)"""
    answer = correct(request)
    for roles in answer["assignment"].values():
        roles["warmup"] = sorted(set(roles["warmup"]) | set(roles["standby"]), key=id_key)
        roles["standby"] = []
    answer["probing_rebalance"] = any(roles["warmup"] for roles in answer["assignment"].values())
    return answer


def task_twice(request: dict) -> dict:
    """The owner of the first stateful task is also given it as a warmup."""
    answer = correct(request)
    first = _stateful(request)[0]
    for roles in answer["assignment"].values():
        if first in roles["active"]:
            roles["warmup"] = sorted(roles["warmup"] + [first], key=id_key)
    return answer


def probe_forever(request: dict) -> dict:
    """Always asks for a probing rebalance, even when nothing is left to warm up."""
    answer = correct(request)
    answer["probing_rebalance"] = True
    return answer


def ping_pong(request: dict) -> dict:
    """In a settled group, a stateless task of the first two members goes to the other of them."""
    answer = correct(request)
    members = _members(answer)
    if len(members) < 2 or not _settled(request, answer):
        return answer
    a, b = members[0], members[1]
    roles = answer["assignment"]
    held = [(m, t) for t in _stateless(request) for m in (a, b) if t in roles[m]["active"]]
    if held:
        src, task = held[0]
        dst = b if src == a else a
        roles[src]["active"].remove(task)
        roles[dst]["active"] = sorted(roles[dst]["active"] + [task], key=id_key)
    return answer


def stateless_swap(request: dict) -> dict:
    """In a settled group two members swap their first stateless tasks (load unchanged)."""
    answer = correct(request)
    if not _settled(request, answer):
        return answer
    roles = answer["assignment"]
    holders = [(m, t) for m in _members(answer) for t in _stateless(request) if t in roles[m]["active"]]
    pairs = [(x, y) for x in holders for y in holders if x[0] != y[0]]
    if not pairs:
        return answer
    (m1, t1), (m2, t2) = pairs[0]
    roles[m1]["active"] = sorted([t for t in roles[m1]["active"] if t != t1] + [t2], key=id_key)
    roles[m2]["active"] = sorted([t for t in roles[m2]["active"] if t != t2] + [t1], key=id_key)
    return answer


def one_standby_at_most(request: dict) -> dict:
    """At most one standby per task, whatever num_standby_replicas says (shows at --standbys 2)."""
    answer = correct(request)
    kept: set = set()
    for m in _members(answer):
        roles = answer["assignment"][m]
        roles["standby"] = [t for t in roles["standby"] if t not in kept]
        kept |= set(roles["standby"])
    return answer


def two_members_only(request: dict) -> dict:
    """Plans over the first two members only (a leftover of a two-instance test setup): the
    others get nothing. Shows only with three members or more."""
    members = sorted(request["members"], key=lambda m: id_key(m["id"]))
    if len(members) <= 2:
        return correct(request)
    seen = dict(request, members=members[:2])
    answer = correct(seen)
    for m in members[2:]:
        answer["assignment"][m["id"]] = {"active": [], "standby": [], "warmup": []}
    return answer


def stateless_piled(request: dict) -> dict:
    """Stateless tasks all go to the least loaded member, its load not updated after each
    (shows only with two stateless tasks or more)."""
    answer = correct(request)
    roles = answer["assignment"]
    free = _stateless(request)
    if not free:
        return answer
    for m in roles.values():
        m["active"] = [t for t in m["active"] if t not in free]
    target = min(_members(answer), key=lambda m: (len(roles[m]["active"]), id_key(m)))
    roles[target]["active"] = sorted(roles[target]["active"] + free, key=id_key)
    return answer


def standbys_from_memory(request: dict) -> dict:
    """Places standbys only when the leader remembers the last round: after a leader fail-over
    (no previous_members) the answer has none."""
    answer = correct(request)
    if request.get("previous_members") is None:
        for roles in answer["assignment"].values():
            roles["standby"] = []
    return answer


def warmups_unbounded(request: dict) -> dict:
    """Every member without a copy of a stateful task warms it up: max_warmup_replicas ignored."""
    answer = correct(request)
    roles = answer["assignment"]
    added = False
    for t in _stateful(request):
        for m in _members(answer):
            if t not in roles[m]["active"] + roles[m]["standby"] + roles[m]["warmup"]:
                roles[m]["warmup"] = sorted(roles[m]["warmup"] + [t], key=id_key)
                added = True
    if added:
        answer["probing_rebalance"] = True
    return answer


def standbys_by_load(request: dict) -> dict:
    """Standbys dealt to the least-loaded members, lags ignored (KIP-441 requirement 2 broken)."""
    answer = correct(request)
    roles = answer["assignment"]
    members = _members(answer)
    for m in members:
        roles[m]["standby"] = []
    load = {m: len(roles[m]["active"]) for m in members}
    wanted = request.get("config", {}).get("num_standby_replicas", 0)
    for t in _stateful(request):
        owner = next((m for m in members if t in roles[m]["active"]), None)
        free = sorted((m for m in members if m != owner and t not in roles[m]["warmup"]), key=lambda m: (load[m], id_key(m)))
        for m in free[:wanted]:
            roles[m]["standby"] = sorted(roles[m]["standby"] + [t], key=id_key)
            load[m] += 1
    return answer


@dataclass(frozen=True)
class Mutant:
    """A wrong assignor, the property ``check`` names for it, and the bounds it is checked at."""

    name: str
    bug: str
    property: str
    bounds: dict
    why_bounds: str
    hides_at: dict | None = None  # smaller bounds at which ``property`` holds: the bounds matter


_BASE = dict(events=1)  # 3 instances (2 at the start), 2x2 stateful tasks, 1 standby: every witness happens

MUTANTS = (
    Mutant("owner_blind", "round-robin, owners and lags ignored", "caught-up-active", _BASE,
           "one join is enough: the new member gets an active it has no state for"),
    Mutant("kafka_13600", "a task nobody is caught up on is dealt by load (KAFKA-13600)", "caught-up-active",
           dict(_BASE, standbys=0, events=2),
           "--standbys 0: with a standby somebody is caught up and the bug hides (it passes the default bounds); "
           "a leave, then a join while the new owner restores", hides_at=dict(_BASE, events=2)),
    Mutant("standby_as_warmup", "required standbys labelled warmup, so it probes while they exist", "converges", _BASE,
           "a settled group with a standby is answered with a probe, for ever: it never settles"),
    Mutant("task_twice", "the owner also warms up its own task", "no-colocation", _BASE,
           "any rebalance shows it"),
    Mutant("probe_forever", "probing rebalance always asked", "converges", _BASE,
           "a settled group is answered with a probe, for ever: it never settles"),
    Mutant("ping_pong", "a stateless task bounces between two members", "stable", dict(_BASE, stateless=2),
           "needs a stateless task; with one the built-in ha makes no warmup, so its witnesses fail"),
    Mutant("stateless_swap", "two stateless tasks swapped in a settled group", "stable", dict(_BASE, stateless=2),
           "needs two stateless tasks on different members", hides_at=dict(_BASE, stateless=1)),
    Mutant("one_standby_at_most", "num_standby_replicas capped at 1", "standby-count",
           dict(_BASE, instances=4, initial=3, standbys=2),
           "--standbys 2 with three members or more: at --standbys 1 it is correct",
           hides_at=dict(_BASE, instances=4, initial=3)),
    Mutant("two_members_only", "plans over the first two members", "balanced", _BASE,
           "a third member must join: with two members it is correct", hides_at=dict(_BASE, instances=2)),
    Mutant("stateless_piled", "stateless tasks piled on one member", "balanced", dict(_BASE, stateless=2),
           "two stateless tasks; with one or none it is correct", hides_at=dict(_BASE, stateless=1)),
    Mutant("standbys_from_memory", "standbys forgotten after a leader fail-over", "standby-count", dict(_BASE, events=2),
           "a join, then the leader's crash (with two members left a standby is still needed); at any bounds the "
           "group's first rebalance, which built the warm start, shows it too (no leader memory there either)"),
    Mutant("warmups_unbounded", "max_warmup_replicas ignored", "warmup-bound", dict(_BASE, max_warmups=1),
           "--max-warmups 1 and a join: the new member warms up two tasks"),
    Mutant("standbys_by_load", "standbys dealt by load, lags ignored", "caught-up-standby", _BASE,
           "a join: the new member, with no state, gets a standby while the caught-up member that held it gets none"),
    # the answers of the lag bugs to the boundary readings open up a large space (the complete run
    # at --events 1 takes minutes): a depth bound past the shortest trace keeps them quick
    Mutant("lag_strict", "caught up read as lag < acceptable_recovery_lag", "caught-up-active", dict(_BASE, depth=6),
           "a join, with the owners' copies reported at the limit: it takes them for behind; without boundary lags "
           "no view shows a lag at the limit", hides_at=dict(_BASE, boundary_lags=False)),
    Mutant("rank_unfloored", "ranks not floored at acceptable_recovery_lag", "fixpoint", dict(_BASE, depth=2),
           "a settled group asked again (a requested rebalance) whose owner reports a lag at the limit and a standby 0: "
           "it moves the active",
           hides_at=dict(_BASE, boundary_lags=False)),
)
