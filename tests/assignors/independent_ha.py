"""Two KIP-441 assignors written from seed 002 alone, to red-team rebalproof.

They were written before reading rebalproof's properties, solver or built-in
assignors, so they carry their own readings of the seed wherever it leaves room:
iteration orders, tie-breaks and the order of stages differ on purpose from the
built-in ``ha`` (ties here go to the *highest* instance id, tasks are walked
most-constrained first, partitions interleaved across subtopologies).

``assign`` (the planner)
    Keeps a balanced, valid assignment as it is (seed 002 "Assignment
    Algorithm" #5: "if the current assignment is already balanced, it must not
    alter the assignment"); otherwise places every stateful active on one of its
    most-caught-up instances (#1), balancing stream threads among them, gives
    standbys to the next-most-caught-up instances (#2), plans warmups for the
    moves that would improve balance were their destination caught up, at most
    ``max_warmup_replicas`` (#3, "max_warmup_replicas"), and packs stateless tasks with the fewest moves
    (#4, #6, "Stateless tasks").

``assign_kafka_style``
    In the manner of Kafka's production assignor: round-robin the stateful
    actives over the stream threads of the instances sorted by id, then move
    each active whose instance is not most-caught-up to the least loaded
    most-caught-up instance (previous owner first) and leave a warmup behind;
    standbys to the least loaded instances, then moved to better ranked ones the
    same way; stateless tasks each to the least loaded instance.

Both read ``py:`` views: ``dict`` in, ``dict`` out (README "The contracts").
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

__all__ = ["assign", "assign_kafka_style"]

NO_STATE = float("inf")


# --------------------------------------------------------------------------- the view


@dataclass(frozen=True)
class Member:
    """One instance as the leader sees it."""

    id: str
    capacity: int
    leaving: bool
    active: frozenset
    standby: frozenset
    warmup: frozenset
    lags: tuple  # (task, lag) pairs


@dataclass(frozen=True)
class View:
    """The leader's view, read once from the input dict."""

    standbys: int
    acceptable_lag: int
    max_warmups: int
    stateful: tuple
    stateless: tuple
    members: tuple  # sorted by id, descending: ties go to the highest id here

    def member(self, mid):
        for m in self.members:
            if m.id == mid:
                return m
        raise KeyError(mid)

    def rank(self, member, task):
        """Seed 002 "Computing the most-caught-up instances": lag floored at the
        acceptable recovery lag, no state ranks after every reported lag."""
        lags = dict(member.lags)
        if task in lags:
            lag = lags[task]
            return 0 if lag <= self.acceptable_lag else lag
        if task in member.active:
            return 0  # an active copy with no report counts as lag 0 (contract)
        return NO_STATE

    def most_caught_up(self, task, among=None):
        pool = [m for m in self.members if among is None or m.id in among]
        best = min(self.rank(m, task) for m in pool)
        return [m for m in pool if self.rank(m, task) == best]


def read_view(raw):
    cfg = raw.get("config") or {}
    stateful, stateless = [], []
    for t in raw["tasks"]:
        (stateful if t.get("stateful", True) else stateless).append(t["id"])
    members = []
    for m in raw["members"]:
        members.append(Member(
            id=m["id"],
            capacity=int(m.get("capacity", 1) or 1),
            leaving=bool(m.get("leaving", False)),
            active=frozenset(m.get("active") or ()),
            standby=frozenset(m.get("standby") or ()),
            warmup=frozenset(m.get("warmup") or ()),
            lags=tuple(sorted((m.get("lags") or {}).items())),
        ))
    members.sort(key=lambda m: m.id, reverse=True)
    return View(
        standbys=int(cfg.get("num_standby_replicas", 0)),
        acceptable_lag=int(cfg.get("acceptable_recovery_lag", 10000)),
        max_warmups=int(cfg.get("max_warmup_replicas", 2)),
        stateful=tuple(sorted(stateful, key=_interleaved)),
        stateless=tuple(sorted(stateless, key=_interleaved)),
        members=tuple(members),
    )


def _subtopology(task):
    return task.split("_", 1)[0]


def _interleaved(task):
    """Partition first, then subtopology: 0_0, 1_0, 0_1, 1_1, ..."""
    sub, _, part = task.partition("_")
    return (int(part) if part.isdigit() else 0, part, sub)


def _thread_load(count, capacity):
    return Fraction(count, capacity)


def _answer(view, active, standby, warmup, probing):
    out = {}
    for m in sorted(view.members, key=lambda m: m.id):
        out[m.id] = {
            "active": sorted(t for t, o in active.items() if o == m.id),
            "standby": sorted(t for t, hs in standby.items() if m.id in hs),
            "warmup": sorted(t for t, hs in warmup.items() if m.id in hs),
        }
    return {"assignment": out, "probing_rebalance": bool(probing)}


def _thread_balanced(view, counts):
    """Seed 002 "Defining balance" (instance balance), read per stream thread
    ("instead of letting one thread have more tasks than another"): the busiest
    thread has at most one task more than the idlest."""
    hi = max(-(-counts[m.id] // m.capacity) for m in view.members)
    lo = min(counts[m.id] // m.capacity for m in view.members)
    return hi - lo <= 1


def _water_fill(view, total, base=None, prefer=None):
    """Counts per instance reaching ``total`` tasks one at a time, each to the
    instance whose threads would be least loaded; ties to ``prefer`` (larger
    first), then the highest id."""
    counts = dict(base or {m.id: 0 for m in view.members})
    prefer = dict(prefer or {})
    for _ in range(total - sum(counts.values())):
        best = min(view.members, key=lambda m: (
            _thread_load(counts[m.id] + 1, m.capacity), -prefer.get(m.id, 0), _desc(m.id)))
        counts[best.id] += 1
        prefer[best.id] = prefer.get(best.id, 0) - 1
    return counts


def _rank_key(rank):
    return 2**62 if rank == NO_STATE else rank


def _desc(mid):
    return tuple(-ord(c) for c in mid) + (1,)


# --------------------------------------------------------------------------- the planner


def _standby_need(view):
    return min(view.standbys, len(view.members) - 1)


def _settled(view):
    """The current assignment, if it is valid and balanced (#5), else None."""
    owner = {}
    for m in view.members:
        for t in m.active:
            if t in owner:
                return None
            owner[t] = m.id
    if set(owner) != set(view.stateful) | set(view.stateless):
        return None
    need = _standby_need(view)
    standby = {}
    for t in view.stateful:
        if view.member(owner[t]) not in view.most_caught_up(t):
            return None
        holders = [m for m in view.members if t in m.standby]
        if len(holders) != need or any(m.id == owner[t] for m in holders):
            return None
        others = sorted(view.rank(m, t) for m in view.members if m.id != owner[t])
        if sorted(view.rank(m, t) for m in holders) != others[:need]:
            return None
        standby[t] = {m.id for m in holders}
    stateful_counts = {m.id: sum(1 for t in view.stateful if owner[t] == m.id) for m in view.members}
    total_counts = {m.id: len(m.active) for m in view.members}
    if not (_thread_balanced(view, stateful_counts) and _thread_balanced(view, total_counts)):
        return None
    return _answer(view, owner, standby, {}, False)


def _place_stateful(view):
    """#1: every stateful active on a most-caught-up instance, threads balanced
    as far as that allows, previous owners kept while within their share."""
    owner, counts = {}, {m.id: 0 for m in view.members}
    share = _water_fill(view, len(view.stateful))
    # Keep the previous owner where it is most caught up and within its share.
    for t in view.stateful:
        for m in view.most_caught_up(t):
            if t in m.active and counts[m.id] < share[m.id]:
                owner[t] = m.id
                counts[m.id] += 1
    # The rest, most constrained first, each to its least loaded candidate.
    rest = sorted((t for t in view.stateful if t not in owner),
                  key=lambda t: (len(view.most_caught_up(t)), _interleaved(t)))
    for t in rest:
        same_sub = lambda m: sum(1 for u, o in owner.items() if o == m.id and _subtopology(u) == _subtopology(t))
        best = min(view.most_caught_up(t), key=lambda m: (
            _thread_load(counts[m.id] + 1, m.capacity), t not in m.standby, same_sub(m), _desc(m.id)))
        owner[t] = best.id
        counts[best.id] += 1
    # Local improvement: move an active to a caught-up instance whose threads
    # would stay lighter than the giver's are now.
    for _ in range(4 * len(view.stateful) + 4):
        moved = False
        for t in view.stateful:
            giver = view.member(owner[t])
            for m in view.most_caught_up(t):
                if m.id != giver.id and _thread_load(counts[m.id] + 1, m.capacity) < _thread_load(counts[giver.id], giver.capacity):
                    owner[t] = m.id
                    counts[giver.id] -= 1
                    counts[m.id] += 1
                    moved = True
                    break
        if not moved:
            break
    return owner, counts


def _place_standbys(view, owner):
    """#2: standbys on the next-most-caught-up instances; among equals the
    previous holder, then the fewest standbys per thread."""
    need = _standby_need(view)
    standby, load = {}, {m.id: 0 for m in view.members}
    for t in view.stateful:
        chosen = set()
        for _ in range(need):
            pool = [m for m in view.members if m.id != owner[t] and m.id not in chosen]
            best = min(pool, key=lambda m: (
                view.rank(m, t), t not in m.standby, _thread_load(load[m.id] + 1, m.capacity), _desc(m.id)))
            chosen.add(best.id)
            load[best.id] += 1
        standby[t] = chosen
    return standby


def _plan_warmups(view, owner, counts, standby):
    """#3: an extra replica, at most ``max_warmup_replicas`` in all, for a task
    that would move to a less loaded instance by the same rule as
    ``_place_stateful``'s improvement step were that instance caught up; a
    standby already there (so still behind) does the same job. Returns
    (warmups, whether a movement is under way)."""
    sim = dict(counts)
    warmup, budget, moving = {}, view.max_warmups, False
    for t in view.stateful:
        giver = view.member(owner[t])
        takers = [m for m in view.members if m.id != giver.id
                  and _thread_load(sim[m.id] + 1, m.capacity) < _thread_load(sim[giver.id], giver.capacity)]
        if not takers:
            continue
        warm = [m for m in takers if m.id in standby[t]]
        if warm:
            pick = warm[0]
        elif budget > 0:
            pick = min(takers, key=lambda m: (
                _thread_load(sim[m.id] + 1, m.capacity), t not in m.warmup, view.rank(m, t), _desc(m.id)))
            warmup.setdefault(t, set()).add(pick.id)
            budget -= 1
        else:
            continue
        moving = True
        sim[giver.id] -= 1
        sim[pick.id] += 1
    return warmup, moving


def _place_stateless(view, stateful_counts):
    """#4/#6: stateless tasks packed for the best total balance given the
    stateful actives, keeping each where it was as far as the target allows."""
    held = {m.id: sorted(t for t in m.active if t in set(view.stateless)) for m in view.members}
    total = len(view.stateful) + len(view.stateless)
    target = _water_fill(view, total, base=stateful_counts, prefer={m: len(h) for m, h in held.items()})
    room = {m: target[m] - stateful_counts[m] for m in target}
    owner = {}
    claimed = set()
    for m in view.members:
        for t in held[m.id]:
            if t not in claimed and room[m.id] > 0:
                owner[t] = m.id
                room[m.id] -= 1
                claimed.add(t)
    for t in view.stateless:
        if t in owner:
            continue
        best = min(view.members, key=lambda m: (-room[m.id], _desc(m.id)))
        owner[t] = best.id
        room[best.id] -= 1
    return owner


def assign(raw):
    """The planner: see the module docstring."""
    view = read_view(raw)
    kept = _settled(view)
    if kept is not None:
        return kept
    owner, counts = _place_stateful(view)
    standby = _place_standbys(view, owner)
    warmup, moving = _plan_warmups(view, owner, counts, standby)
    owner.update(_place_stateless(view, counts))
    return _answer(view, owner, standby, warmup, moving)


# --------------------------------------------------------------------------- Kafka style


def _thread_slots(view):
    """Stream threads in round-robin order over instances sorted by id."""
    by_id = sorted(view.members, key=lambda m: m.id)
    slots = []
    for r in range(max(m.capacity for m in by_id)):
        slots.extend(m.id for m in by_id if m.capacity > r)
    return slots


def assign_kafka_style(raw):
    """Round-robin, then movements to caught-up instances with warmups left
    behind (see the module docstring)."""
    view = read_view(raw)
    tasks = sorted(view.stateful)
    slots = _thread_slots(view)
    owner = {t: slots[i % len(slots)] for i, t in enumerate(tasks)}
    counts = {m.id: 0 for m in view.members}
    for t in tasks:
        counts[owner[t]] += 1
    warmup, budget = {}, view.max_warmups

    def least_loaded(cands, t, load):
        return min(cands, key=lambda m: (t not in m.active, _thread_load(load[m.id] + 1, m.capacity), m.id))

    # Active movements.
    for t in tasks:
        dest = view.member(owner[t])
        best = view.most_caught_up(t)
        if dest in best:
            continue
        to = least_loaded(best, t, counts)
        owner[t] = to.id
        counts[dest.id] -= 1
        counts[to.id] += 1
        if budget > 0:
            warmup.setdefault(t, set()).add(dest.id)
            budget -= 1
    # Standbys: least loaded first, then moved to better ranked instances.
    need = _standby_need(view)
    sload = {m.id: 0 for m in view.members}
    standby = {}
    for t in tasks:
        chosen = []
        for _ in range(need):
            pool = [m for m in sorted(view.members, key=lambda m: m.id)
                    if m.id != owner[t] and m.id not in chosen]
            pick = min(pool, key=lambda m: (_thread_load(sload[m.id] + 1, m.capacity), m.id))
            chosen.append(pick.id)
            sload[pick.id] += 1
        standby[t] = set(chosen)
    for t in tasks:
        for sid in sorted(standby[t], key=lambda h: (-_rank_key(view.rank(view.member(h), t)), h)):
            pool = [m for m in view.members if m.id != owner[t] and m.id not in standby[t]
                    and view.rank(m, t) < view.rank(view.member(sid), t)]
            if not pool:
                continue
            bestrank = min(view.rank(m, t) for m in pool)
            to = min((m for m in pool if view.rank(m, t) == bestrank),
                     key=lambda m: (_thread_load(sload[m.id] + 1, m.capacity), m.id))
            standby[t].discard(sid)
            standby[t].add(to.id)
            sload[sid] -= 1
            sload[to.id] += 1
            if budget > 0:
                warmup.setdefault(t, set()).add(sid)
                budget -= 1
    for t in list(warmup):  # a standby there now warms it up already
        warmup[t] -= standby[t] | {owner[t]}
        if not warmup[t]:
            del warmup[t]
    # Stateless: each to the least loaded instance.
    for t in sorted(view.stateless):
        to = min(sorted(view.members, key=lambda m: m.id),
                 key=lambda m: _thread_load(counts[m.id] + 1, m.capacity))
        owner[t] = to.id
        counts[to.id] += 1
    return _answer(view, owner, standby, warmup, bool(warmup))
