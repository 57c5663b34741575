"""``balanced``: the actives are balanced as KIP-441 defines it, reported as a measure.

The measure is :func:`rebalproof.model.balance.measure_balance` (instance balance by capacity
and subtopology balance of the actives, leaving members not counted), in ``Verdict.measure``
together with ``probing_rebalance`` and, when the answer is not balanced, ``attainable``.

What a rule set promises differs (KIP-441 "Iterative Balancing Assignments": an assignment
"may result in an unbalanced distribution of tasks in favor of returning to processing as
soon as possible", while probing rebalances continue "until it is able to create a balanced
assignment"):

"Within one" with capacities has four readings (:mod:`rebalproof.model.balance`): per thread
of load, ``n_i / c_i <= (n_j + 1) / c_j``; the KIP's sentences taken literally (instances within
one task, threads within one task); each instance holding its share of the tasks by threads,
rounded down or up; and the thread sentence alone (no thread runs more than one task more than
another, whatever instance it is on: Kafka's own assignors). A count balanced by any of them is
balanced here, so an implementation is not faulted for the reading it chose; the message says
when only another than the first holds (``by_threads: true``).

- :func:`balanced` — the ``ha`` reading: balanced, **or** a probing rebalance is scheduled
  (the assignor traded balance for caught-up actives and is moving state with warmups).
  Not balanced with no probing rebalance is a violation when a balanced assignment of these
  tasks over these capacities exists at all (lags aside: warmups can move any state).
  An unbalanced answer **holds** when no balanced assignment exists (capacities can make
  instance and subtopology balance incompatible: three one-task subtopologies over capacities
  1 and 2), saying so in the message and with ``attainable: false``, as long as its instances
  are within one (instance balance alone is always attainable: KIP-441's assignor "creates as
  balanced an assignment as possible"); the check is
  **inconclusive** when deciding that would exceed the search budget, or when
  ``max_warmup_replicas`` is 0 (below KIP-441's minimum of 1, no warmup can move state, so
  probing may not help).
- :func:`balanced_at_once` — the ``sticky``/``eager`` reading: *instance* balance (actives
  within one by capacity, over the non-leaving members) in every answer. Assignors that ignore
  lags can always reach it at once (the D'Hondt split), so a probing rebalance excuses
  nothing. Subtopology spread is KIP-441's addition ("Defining balance"): it is measured and
  said in the message, not promised.

Both readings count leaving members first as shutting down (not counted, as
:func:`~rebalproof.model.balance.measure_balance` does) and, if that fails, as ordinary
members (``ha`` ignores the KIP-429 tag); the better verdict stands, with
``leaving_counted: true`` in the measure when it came from the second reading.

Examples
--------
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> members = (Member(id="I1", capacity=1), Member(id="I2", capacity=2))
>>> balance_attainable(RebalanceInput(tasks=(Task(id="0_0"), Task(id="1_0")), members=members))
True
>>> balance_attainable(RebalanceInput(tasks=(Task(id="0_0"), Task(id="1_0"), Task(id="2_0")), members=members))
False
"""

from __future__ import annotations

import math
from fractions import Fraction

from rebalproof.model.assignment import Assignment
from rebalproof.model.balance import BalanceReport, measure_balance
from rebalproof.model.names import id_key, sorted_ids, subtopology_of
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.common import as_if_staying
from rebalproof.properties.verdict import Status, Verdict

__all__ = ["balanced", "balanced_at_once", "balance_attainable", "balance_measure", "SEARCH_BUDGET"]

SEARCH_BUDGET = 20_000
"""Most class totals (or splits of one subtopology over the capacity classes) :func:`balance_attainable`
keeps before answering None (undecided)."""


def balance_attainable(view: RebalanceInput, *, budget: int = SEARCH_BUDGET) -> bool | None:
    """Whether some assignment of the input's tasks is balanced (lags aside); None when undecided.

    Over the non-leaving members, as :func:`~rebalproof.model.balance.measure_balance` counts.
    With equal capacities a balanced assignment always exists (deal the tasks in subtopology
    order round-robin). Otherwise the members of one capacity form a class, and a layout is
    described by how many tasks each class holds per subtopology: within a class the tasks can
    always be dealt so that its members' counts differ by at most one in every subtopology and
    in total (each subtopology's extra tasks go to the class's next members in turn), and
    :func:`_class_within_one` decides "within one" from the class sums alone. A dynamic
    programme over the subtopologies keeps the distinct class totals reached (pruned to those
    that can still end within one); exact, with no solver. None only when more than ``budget``
    class totals or per-subtopology options would be kept (far beyond the clusters people run).
    """
    members = [m for m in view.members if not m.leaving]
    if not members or not view.tasks:
        return True
    caps = tuple(m.capacity for m in members)
    if len(set(caps)) == 1:
        return True
    classes = tuple(sorted({c: caps.count(c) for c in caps}.items()))  # (capacity, members)
    per_sub: dict[str, int] = {}
    for task_id in view.task_ids:
        per_sub[subtopology_of(task_id)] = per_sub.get(subtopology_of(task_id), 0) + 1
    finals = _class_vectors(sum(per_sub.values()), classes, budget)
    if finals is None:
        return None
    if not finals:
        return False
    top = [max(f[i] for f in finals) for i in range(len(classes))]
    least = [min(f[i] for f in finals) for i in range(len(classes))]
    remaining = sum(per_sub.values())
    totals: set[tuple[int, ...]] = {tuple(0 for _ in classes)}
    splits: dict[int, set | None] = {}  # subtopology size -> its splits (subtopologies often share a size)
    for sub in sorted_ids(per_sub):
        if per_sub[sub] not in splits:
            splits[per_sub[sub]] = _class_vectors(per_sub[sub], classes, budget)
        options = splits[per_sub[sub]]
        if options is None:
            return None
        remaining -= per_sub[sub]
        totals = {
            t
            for t in (tuple(a + b for a, b in zip(total, option)) for total in totals for option in options)
            if all(t[i] <= top[i] and t[i] + remaining >= least[i] for i in range(len(classes)))
        }
        if not totals or len(totals) > budget:
            return None if totals else False
    return any(total in finals for total in totals)


def _class_within_one(sums: tuple[int, ...], classes: tuple[tuple[int, int], ...]) -> bool:
    """:func:`~rebalproof.model.balance.within_one` of the counts that deal ``sums[i]`` tasks over
    the ``classes[i] = (capacity, members)`` as evenly as they go (floor or ceiling each): every
    busiest member of one class against every idlest one of each class."""
    for (c, m), s in zip(classes, sums):
        busiest = -(-s // m)
        if busiest == 0:
            continue
        for (d, n), t in zip(classes, sums):
            idlest = t // n
            if busiest * d > (idlest + 1) * c:
                return False
    return True


def _class_vectors(k: int, classes: tuple[tuple[int, int], ...], budget: int) -> set[tuple[int, ...]] | None:
    """Every split of ``k`` tasks over the classes that is within one (:func:`_class_within_one`);
    None over ``budget``.

    A count vector ``n`` is within one iff some ``lam`` has ``lam*c_j - 1 <= n_j <= lam*c_j`` for
    every member ``j`` (take ``lam`` the largest load ``n_i/c_i``), so a class of capacity ``c``
    and ``m`` members holds between ``m*lo`` and ``m*hi`` tasks (``lo``, ``hi`` those bounds), for
    ``lam`` among the loads ``n/c`` with ``n <= k``.
    """
    found: set[tuple[int, ...]] = set()
    if k == 0:
        return {tuple(0 for _ in classes)}
    for lam in sorted({Fraction(n, c) for n in range(1, k + 1) for c, _ in classes}):
        ranges = []
        for c, m in classes:
            lo, hi = max(0, math.ceil(lam * c) - 1), math.floor(lam * c)
            ranges.append(range(m * lo, m * hi + 1))
        if sum(r.start for r in ranges) > k or sum(r.stop - 1 for r in ranges) < k:
            continue
        for split in _splits(k, ranges):
            if _class_within_one(split, classes):
                found.add(split)
            if len(found) > budget:
                return None
    return found


def _splits(k: int, ranges: list[range]):
    """Every tuple with one value from each range, summing to ``k``."""
    if len(ranges) == 1:
        if k in ranges[0]:
            yield (k,)
        return
    rest_low = sum(r.start for r in ranges[1:])
    rest_high = sum(r.stop - 1 for r in ranges[1:])
    for value in ranges[0]:
        if rest_low <= k - value <= rest_high:
            for tail in _splits(k - value, ranges[1:]):
                yield (value,) + tail


def balance_measure(view: RebalanceInput, assignment: Assignment, report: BalanceReport | None = None) -> dict:
    """The JSON-ready figures of :func:`~rebalproof.model.balance.measure_balance`, plus probing."""
    report = report or measure_balance(view, assignment)
    return {
        "balanced": report.balanced_either,
        "by_threads": report.balanced_either and not report.balanced,
        "active_within_one": report.active_within_one,
        "active_spread": report.active_spread,
        "subtopology_within_one": report.subtopology_within_one,
        "worst_subtopology_spread": max((s for _, s in report.subtopology_spread), default=0.0),
        "copies_within_one": report.copies_within_one,
        "copies_spread": report.copies_spread,
        "probing_rebalance": assignment.probing_rebalance,
    }


def _loads(view: RebalanceInput, assignment: Assignment) -> str:
    """Busiest and idlest non-leaving members by actives per thread, e.g. ``I1 has 3 actives ...``."""
    members = [m for m in view.members if not m.leaving]
    if not members:
        return "no member stays"
    load = {m.id: (len(set(assignment.of(m.id).active)), m.capacity) for m in members}  # a task listed twice is one active
    order = sorted(load, key=lambda m: (Fraction(load[m][0], load[m][1]), id_key(m)))
    busy, idle = order[-1], order[0]

    def say(m):
        n, c = load[m]
        return f"{m} has {n} active{'s' if n != 1 else ''}" + (f" on {c} threads" if c != 1 else "")

    return f"{say(busy)}, {say(idle)}"


def _unbalanced(view: RebalanceInput, assignment: Assignment, report: BalanceReport) -> str:
    parts = []
    if not report.active_either:
        parts.append(f"instances not within one ({_loads(view, assignment)})")
    if not report.subtopology_either:
        capacity = {m.id: m.capacity for m in view.members}
        for sub, counts in report.subtopologies_unbalanced:
            said = ", ".join(f"{m} {n}" + (f" on {capacity[m]} threads" if capacity[m] != 1 else "") for m, n in counts)
            parts.append(f"subtopology {sub} not spread within one ({said})")
    return "not balanced: " + "; ".join(parts)


_BY_THREADS = ("balanced by another reading of within one with capacities: as the KIP's sentences read literally "
               "(instances within one task, no thread running more than one task more than another), or each instance "
               "holding its share of the tasks by threads, rounded down or up")

_ORDER = {Status.HOLDS: 0, Status.INCONCLUSIVE: 1, Status.VIOLATED: 2}


def _either_reading(view: RebalanceInput, assignment: Assignment, judge) -> Verdict:
    """``judge`` with leaving members shutting down; if that fails, also with them as ordinary members.

    KIP-441 and the baseline know no leaving members, so an assignor may count them either way
    (:mod:`rebalproof.properties.common`); the better verdict stands.
    """
    first = judge(view, assignment)
    ordinary = as_if_staying(view) if first.status is not Status.HOLDS else None
    if ordinary is None:
        return first
    second = judge(ordinary, assignment)
    if _ORDER[second.status] >= _ORDER[first.status]:
        return first
    return Verdict(
        property=second.property,
        status=second.status,
        message=f"counting leaving members as ordinary ones: {second.message}",
        measure={**second.measure, "leaving_counted": True},
    )


def balanced(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """The ``ha`` reading: balanced, or a probing rebalance is scheduled (see module doc)."""
    return _either_reading(view, assignment, _balanced)


def balanced_at_once(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """The ``sticky``/``eager`` reading: the actives are within one by capacity (see module doc)."""
    return _either_reading(view, assignment, _balanced_at_once)


def _balanced(view: RebalanceInput, assignment: Assignment) -> Verdict:
    report = measure_balance(view, assignment)
    measure = balance_measure(view, assignment, report)

    def verdict(status: Status, message: str) -> Verdict:
        return Verdict(property="balanced", status=status, message=message, measure=measure)

    if report.balanced:
        return verdict(Status.HOLDS, report.describe())
    if report.balanced_either:
        return verdict(Status.HOLDS, f"{_BY_THREADS}; {report.describe().split(': ', 1)[1]}")
    what = _unbalanced(view, assignment, report)
    if assignment.probing_rebalance:
        return verdict(Status.HOLDS, f"{what}; a probing rebalance is scheduled (KIP-441 iterative balancing)")
    attainable = balance_attainable(view)
    measure["attainable"] = attainable
    if attainable is None:
        return verdict(Status.INCONCLUSIVE, f"{what}; whether any balanced assignment exists is undecided within {SEARCH_BUDGET} class totals")
    if not attainable and report.active_either:
        return verdict(Status.HOLDS, f"{what}; no balanced assignment of these tasks over these capacities exists")
    if view.config.max_warmup_replicas == 0:
        return verdict(
            Status.INCONCLUSIVE,
            f"{what} and no probing rebalance; max_warmup_replicas is 0 (KIP-441's minimum is 1), so no warmup can move state toward balance",
        )
    if not attainable:  # instances not within one either, though a D'Hondt split always puts them within one
        return verdict(Status.VIOLATED, f"{what}, no probing rebalance is scheduled, and though no assignment balances "
                                        "every subtopology too, instance balance alone is always attainable")
    return verdict(Status.VIOLATED, f"{what}, a balanced assignment exists and no probing rebalance is scheduled")


def _balanced_at_once(view: RebalanceInput, assignment: Assignment) -> Verdict:
    report = measure_balance(view, assignment)
    measure = balance_measure(view, assignment, report)
    if report.active_either:
        spread = "" if report.subtopology_either else " (subtopology spread is measured, not promised)"
        how = "" if report.active_within_one else f" ({_BY_THREADS})"
        return Verdict(property="balanced", status=Status.HOLDS, message=f"instance balance holds{how}: {report.describe()}{spread}", measure=measure)
    return Verdict(
        property="balanced",
        status=Status.VIOLATED,
        message=f"not balanced: instances not within one ({_loads(view, assignment)}), though an assignor that ignores lags can always balance them",
        measure=measure,
    )
