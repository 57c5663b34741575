"""The pre-KIP-429 sticky assignor, written from the seeds alone (red team, round 2).

Seed 002 "Related Work", "Kafka Consumer StickyAssignor": "The assignment algorithm begins by
copying the prior assignment and then removing any assignments that have become invalid
(consumer has left or partition no longer exists). ... Then we iterate over the unassigned
partitions and assign each one to the consumer that can host it and has that has the smallest
current assignment. ... Then, we enter the balancing phase. ... In each pass, it attempts to
move each partition to a better place, and it continues with more passes until no more
improvements are possible". Seed 001 "Stop-The-World Effect" is the eager protocol it runs
under (every member gives up everything at each rebalance; the leader still sees what each
owned). Streams adds standbys: ``num_standby_replicas`` copies of each stateful task on other
members (seed 002, ``num_standbys``); the sticky assignor has no warmups and never probes.

Written without reading rebalproof's properties, solver or built-in assignors. Choices where
the seeds are silent, made unlike the obvious ones on purpose:

- One class of tasks: stateful and stateless are counted together, as the consumer assignor
  counts partitions; load is tasks per stream thread (``capacity``).
- Two members claiming one task (possible mid-protocol): the less loaded keeps it, ties to the
  *highest* id. A leaving member is an ordinary member (the sticky assignor knows no leaving).
- Unassigned tasks go, in *reverse* id order, to the least loaded member, ties to the highest id.
- A balancing move takes the *highest*-id task of the busiest member to the idlest one while the
  busiest carries more per thread than the idlest would after the move; a task the idlest holds
  a standby of goes first.
- Standbys: prior standby (or warmup) holders other than the new active's host are kept, up to
  the count; the rest go to the members with the fewest standbys per thread, ties to the highest id.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["assign"]


def _desc(mid: str) -> tuple:
    """A key that sorts ids from the highest down (natural order: I10 after I9)."""
    digits = "".join(c for c in mid if c.isdigit())
    return (-int(digits) if digits else 0, tuple(-ord(c) for c in mid))


def _natural(task: str) -> tuple:
    sub, _, part = task.partition("_")
    return (int(sub) if sub.isdigit() else sub, int(part) if part.isdigit() else part)


def assign(raw: dict) -> dict:
    """The sticky assignment of ``raw`` (a RebalanceInput dict); see the module docstring."""
    cfg = raw.get("config") or {}
    members = {m["id"]: m for m in raw["members"]}
    cap = {mid: int(m.get("capacity", 1) or 1) for mid, m in members.items()}
    tasks = sorted((t["id"] for t in raw["tasks"]), key=_natural)
    stateful = {t["id"] for t in raw["tasks"] if t.get("stateful", True)}
    need = min(int(cfg.get("num_standby_replicas", 0)), len(members) - 1)

    # 1. Copy the prior assignment, keeping what is still valid.
    owner: dict[str, str] = {}
    count = {mid: 0 for mid in members}
    claims = {t: [mid for mid, m in members.items() if t in (m.get("active") or [])] for t in tasks}
    for t in tasks:
        if claims[t]:
            keep = min(claims[t], key=lambda mid: (Fraction(count[mid], cap[mid]), _desc(mid)))
            owner[t] = keep
            count[keep] += 1

    def idlest(candidates):
        return min(candidates, key=lambda mid: (Fraction(count[mid] + 1, cap[mid]), _desc(mid)))

    # 2. The unassigned tasks to the member with the smallest assignment.
    for t in reversed(tasks):
        if t not in owner:
            to = idlest(members)
            owner[t] = to
            count[to] += 1

    standby_of = {mid: set(m.get("standby") or ()) | set(m.get("warmup") or ()) for mid, m in members.items()}

    # 3. Balancing passes: move a task from the busiest to the idlest while that helps.
    for _ in range(4 * len(tasks) + 4):
        busiest = max(members, key=lambda mid: (Fraction(count[mid], cap[mid]), _desc(mid)))
        to = idlest(m for m in members if m != busiest) if len(members) > 1 else None
        if to is None or Fraction(count[busiest], cap[busiest]) <= Fraction(count[to] + 1, cap[to]):
            break
        mine = sorted((t for t, o in owner.items() if o == busiest), key=_natural, reverse=True)
        t = next((t for t in mine if t in standby_of[to]), mine[0])
        owner[t] = to
        count[busiest] -= 1
        count[to] += 1

    # 4. Standbys.
    standbys: dict[str, list[str]] = {}
    load = {mid: 0 for mid in members}
    for t in tasks:
        if t not in stateful:
            continue
        kept = [mid for mid in sorted(members, key=_desc) if t in standby_of[mid] and mid != owner[t]][:need]
        standbys[t] = kept
        for mid in kept:
            load[mid] += 1
    for t in tasks:
        if t not in stateful:
            continue
        while len(standbys[t]) < need:
            free = [mid for mid in members if mid != owner[t] and mid not in standbys[t]]
            to = min(free, key=lambda mid: (Fraction(load[mid] + 1, cap[mid]), _desc(mid)))
            standbys[t].append(to)
            load[to] += 1

    out = {}
    for mid in sorted(members, key=_desc):
        out[mid] = {
            "active": sorted((t for t, o in owner.items() if o == mid), key=_natural),
            "standby": sorted((t for t, hs in standbys.items() if mid in hs), key=_natural),
            "warmup": [],
        }
    return {"assignment": out, "probing_rebalance": False}
