"""Two KIP-441 assignors written from seed 002 alone, to red-team rebalproof.

They were written before reading rebalproof's properties, solver or built-in
assignors, so they carry their own readings of the seed wherever it leaves room:
iteration orders, tie-breaks and the order of stages differ on purpose from the
built-in ``ha`` (ties here go to the *highest* instance id, tasks are walked
most-constrained first, partitions interleaved across subtopologies).

``assign`` (the planner)
    First a *target*: the balanced layout of all actives, lags aside (the
    KIP's "proposed balanced assignment"), reached from the current owners by
    the moves and swaps that lower the imbalance (per stream thread, then per
    subtopology), so a balanced current layout is its own target (seed 002
    "Assignment Algorithm" #5). Then each stateful active goes to its target
    where that instance is most caught up, else stays on a most-caught-up
    instance (#1); standbys to the next-most-caught-up instances (#2); a warmup
    at the target of each active left off it, at most ``max_warmup_replicas``
    (#3), and a probing rebalance while any is off target; stateless tasks go
    straight to their target (#4, #6).

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

__all__ = ["assign", "assign_dealing_stateless", "assign_kafka_style", "assign_one_warmup"]

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


def _rank_key(rank):
    return 2**62 if rank == NO_STATE else rank


def _desc(mid):
    return tuple(-ord(c) for c in mid) + (1,)


# --------------------------------------------------------------------------- the planner


def _standby_need(view):
    return min(view.standbys, len(view.members) - 1)


def _current_owners(view):
    owner = {}
    for m in view.members:
        for t in sorted(m.active):
            owner.setdefault(t, m.id)
    return owner


class _Layout:
    """Counts per instance and per (subtopology, instance) of a layout of actives,
    with the change a move or a swap makes to the imbalance (sum over instances
    of n**2 / threads: lowest when every thread carries the same, seed 002
    "even distribution of work"; then the same per subtopology, "data parallel
    workload balance")."""

    def __init__(self, view, owner):
        self.caps = {m.id: m.capacity for m in view.members}
        self.owner = dict(owner)
        self.n = {m: 0 for m in self.caps}
        self.ns = {}
        for t, o in owner.items():
            self._add(t, o, 1)

    def _add(self, t, m, k):
        self.n[m] += k
        key = (_subtopology(t), m)
        self.ns[key] = self.ns.get(key, 0) + k

    def _grow(self, count, m):  # cost of one more on m
        return Fraction(2 * count + 1, self.caps[m])

    def _shrink(self, count, m):  # saving of one less on m
        return Fraction(2 * count - 1, self.caps[m])

    def place_cost(self, t, m):
        return (self._grow(self.n[m], m), self._grow(self.ns.get((_subtopology(t), m), 0), m))

    def move_cost(self, t, to):
        at, s = self.owner[t], _subtopology(t)
        return (self._grow(self.n[to], to) - self._shrink(self.n[at], at),
                self._grow(self.ns.get((s, to), 0), to) - self._shrink(self.ns[(s, at)], at))

    def swap_cost(self, t, u):
        i, j = self.owner[t], self.owner[u]
        s, r = _subtopology(t), _subtopology(u)
        return (Fraction(0),
                self._grow(self.ns.get((s, j), 0), j) - self._shrink(self.ns[(s, i)], i)
                + self._grow(self.ns.get((r, i), 0), i) - self._shrink(self.ns[(r, j)], j))

    def thread_balanced(self):
        """Seed 002 "Defining balance", read per stream thread ("instead of letting
        one thread have more tasks than another"): the busiest thread runs at most
        one task more than the idlest, over all actives and within each
        subtopology."""
        def within_one(count):
            return (max(-(-count(m) // c) for m, c in self.caps.items())
                    - min(count(m) // c for m, c in self.caps.items())) <= 1
        subs = {s for s, _ in self.ns}
        return within_one(lambda m: self.n[m]) and all(
            within_one(lambda m, s=s: self.ns.get((s, m), 0)) for s in subs)

    def put(self, t, m):
        if t in self.owner:
            self._add(t, self.owner[t], -1)
        self.owner[t] = m
        self._add(t, m, 1)


def _target(view):
    """The balanced layout of all actives, lags aside: from the current owners,
    tasks without one placed where they cost least; a layout balanced per
    thread is its own target (#5); otherwise the move or swap that lowers the
    imbalance most, until none does. (The descent alone is not enough for #5:
    with capacities 2, 2, 1 it moved a task off 2 + 2 + 0, where every thread
    runs one task or none; caught by rebalproof as fixpoint.)"""
    tasks = [t for t in view.stateful + view.stateless]
    current = _current_owners(view)
    layout = _Layout(view, {t: o for t, o in current.items() if t in set(tasks)})
    for t in sorted((t for t in tasks if t not in layout.owner), key=_interleaved):
        layout.put(t, min(view.members, key=lambda m: (layout.place_cost(t, m.id), _desc(m.id))).id)
    if layout.thread_balanced():
        return layout.owner
    zero = (Fraction(0), Fraction(0))
    for _ in range(16 * len(tasks) + 16):
        best, op = zero, None
        for t in sorted(tasks, key=_interleaved):
            for m in view.members:
                if m.id != layout.owner[t]:
                    c = layout.move_cost(t, m.id)
                    if c < best:
                        best, op = c, ("move", t, m.id)
        for x, t in enumerate(tasks):
            for u in tasks[x + 1:]:
                if layout.owner[t] != layout.owner[u] and _subtopology(t) != _subtopology(u):
                    c = layout.swap_cost(t, u)
                    if c < best:
                        best, op = c, ("swap", t, u)
        if op is None:
            break
        if op[0] == "move":
            layout.put(op[1], op[2])
        else:
            _, t, u = op
            i, j = layout.owner[t], layout.owner[u]
            layout.put(t, j)
            layout.put(u, i)
    return layout.owner


def _place_standbys(view, owner, target):
    """#2: standbys on the next-most-caught-up instances; among equals the
    task's target instance (a standby there warms it up), then the previous
    holder, then the fewest standbys per thread."""
    need = _standby_need(view)
    standby, load = {}, {m.id: 0 for m in view.members}
    for t in view.stateful:
        chosen = set()
        for _ in range(need):
            pool = [m for m in view.members if m.id != owner[t] and m.id not in chosen]
            best = min(pool, key=lambda m: (
                _rank_key(view.rank(m, t)), m.id != target[t], t not in m.standby,
                _thread_load(load[m.id] + 1, m.capacity), _desc(m.id)))
            chosen.add(best.id)
            load[best.id] += 1
        standby[t] = chosen
    return standby


def assign(raw):
    """The planner: see the module docstring."""
    view = read_view(raw)
    target = _target(view)
    current = _current_owners(view)
    owner = {t: target[t] for t in view.stateless}
    # #1: a stateful active goes to its target only where that is most caught up;
    # otherwise it stays with a most-caught-up owner, else the least loaded one.
    counts = {m.id: 0 for m in view.members}
    for t in view.stateful:
        best = view.most_caught_up(t)
        if view.member(target[t]) in best:
            owner[t] = target[t]
            counts[target[t]] += 1
    for t in sorted((t for t in view.stateful if t not in owner),
                    key=lambda t: (len(view.most_caught_up(t)), _interleaved(t))):
        best = view.most_caught_up(t)
        keep = [m for m in best if m.id == current.get(t)]
        pick = keep[0] if keep else min(best, key=lambda m: (
            _thread_load(counts[m.id] + 1, m.capacity), _desc(m.id)))
        owner[t] = pick.id
        counts[pick.id] += 1
    standby = _place_standbys(view, owner, target)
    # #3: every active off its target is a movement under way; it needs a warmup
    # at the target unless a standby is there already.
    warmup, budget, movements = {}, view.max_warmups, 0
    off = [t for t in view.stateful if owner[t] != target[t]]
    for t in sorted(off, key=lambda t: (t not in view.member(target[t]).warmup, _interleaved(t))):
        if target[t] not in standby[t] and budget > 0:
            warmup[t] = {target[t]}
            budget -= 1
    return _answer(view, owner, standby, warmup, bool(off))


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
    warmup, budget, movements = {}, view.max_warmups, 0

    def least_loaded(cands, t, load):
        return min(cands, key=lambda m: (t not in m.active, _thread_load(load[m.id] + 1, m.capacity), m.id))

    # Active movements.
    for t in tasks:
        dest = view.member(owner[t])
        best = view.most_caught_up(t)
        if dest in best:
            continue
        to = least_loaded(best, t, counts)
        movements += 1
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
            movements += 1
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
    # A probing rebalance while any movement is under way (a standby left at
    # the destination warms it up as well as a warmup would).
    return _answer(view, owner, standby, warmup, movements > 0)


# --------------------------------------------------------------------------- stateless dealt


def assign_dealing_stateless(raw):
    """The planner, except that whenever it changes anything the stateless
    tasks are dealt afresh (sorted, each to the first instance by id with room
    left in the planner's count for it), as Kafka's assignor places them
    without regard to who ran them. Same load, same balance; a settled
    assignment is still returned unchanged (#5). Seed 002 #6 asks stability
    only as "should ... try ... if possible"."""
    view = read_view(raw)
    answer = assign(raw)
    current = _current_owners(view)
    given = {t: m for m, a in answer["assignment"].items() for t in a["active"]}
    if all(given[t] == current.get(t) for t in given) and not answer["probing_rebalance"]:
        return answer
    stateless = set(view.stateless)
    room = {m: sum(1 for t in a["active"] if t in stateless) for m, a in answer["assignment"].items()}
    for a in answer["assignment"].values():
        a["active"] = [t for t in a["active"] if t not in stateless]
    for t in sorted(stateless):
        m = next(m for m in sorted(room) if room[m] > 0)
        room[m] -= 1
        answer["assignment"][m]["active"] = sorted(answer["assignment"][m]["active"] + [t])
    return answer


# --------------------------------------------------------------------------- one warmup at a time


def assign_one_warmup(raw):
    """The planner, using one warmup at a time whatever ``max_warmup_replicas``
    allows: the config is a maximum ("the maximum number of extra replicas to
    assign for the purpose of moving a task", seed 002), used here as a throttle
    turned all the way down; balance is still reached "gradually ... over time"
    ("Iterative Balancing Assignments")."""
    config = dict(raw.get("config") or {})
    config["max_warmup_replicas"] = min(1, int(config.get("max_warmup_replicas", 2)))
    return assign(dict(raw, config=config))
