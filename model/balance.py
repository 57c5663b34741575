"""Balance as KIP-441 defines it ("Defining 'balance'"), generalised to capacities.

KIP-441: an assignment is balanced when it shows both
- *instance balance*: the instance with the most tasks has no more than 1 more than the one
  with the least;
- *subtopology balance*: the tasks of each subtopology are spread evenly over the cluster.

With capacities (stream threads), "within 1" becomes: no single task moved from instance
``i`` to instance ``j`` would leave ``j`` less loaded per thread than ``i`` was, i.e. for all
``i, j``: ``n_i / c_i <= (n_j + 1) / c_j`` (:func:`within_one`). With equal capacities this is
exactly ``max - min <= 1``. The KIP leaves capacities open, and a second reading is as
faithful: its two sentences taken literally, instances within one task and no thread running
more than one task more than another (:func:`threads_within_one`); a third: each instance
holds its share of the tasks by threads rounded down or up (:func:`share_within_one`); and a
fourth: the thread sentence alone, no thread running more than one task more than another
wherever it runs (:func:`thread_loads_within_one`, Kafka's own sticky assignors).
The solver and the built-in assignors aim at the first (:attr:`BalanceReport.balanced`); the
properties accept a count balanced by any of them (:attr:`BalanceReport.balanced_either`), so an
implementation is not faulted for the reading it chose. Subtopology balance applies the same rule to each subtopology's tasks
(the KIP's literal "instances executing it" count is met by layouts its own example
rejects, so we check the spread it asks for). Active copies are what is balanced;
leaving members (KIP-429 v2) are on their way out and are not counted. All copies (active,
standby and warmup alike: Kafka's warmups are standbys, and its assignor packs stateless tasks
against every assigned task) are measured too, as ``copies_within_one``/``copies_spread``.

Examples
--------
>>> within_one({"I1": 2, "I2": 1}, {"I1": 1, "I2": 1})
True
>>> within_one({"I1": 3, "I2": 1}, {"I1": 1, "I2": 1})
False
>>> within_one({"I1": 4, "I2": 2}, {"I1": 2, "I2": 1})
True
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from rebalproof.model.assignment import Assignment
from rebalproof.model.names import sorted_ids, subtopology_of
from rebalproof.model.view import RebalanceInput

__all__ = [
    "within_one", "threads_within_one", "share_within_one", "thread_loads_within_one", "READINGS", "spread", "BalanceReport", "measure_balance",
    "is_balanced", "balanced_either", "balanced_every_way", "copies_balanced_every_way", "copies_by_member", "copies_evened", "balance_signature", "counts_by_reading",
]


def within_one(counts: dict[str, int], capacities: dict[str, int]) -> bool:
    """True when no move of one task between two instances makes the busier one less busy per thread."""
    members = list(counts)
    for i in members:
        if counts[i] == 0:
            continue
        for j in members:
            if i != j and counts[i] * capacities[j] > (counts[j] + 1) * capacities[i]:
                return False
    return True


def threads_within_one(counts: dict[str, int], capacities: dict[str, int]) -> bool:
    """True when the KIP's two literal sentences hold: instances within one task, threads within one task.

    The second reading of "within one" with capacities. KIP-441 "Defining balance": "The instance
    with the most tasks has no more than 1 more task than the instance with the least tasks"
    (counts, capacities aside), and "Constraints and Cost Function": "instead of letting one
    thread have more tasks than another" (each instance's tasks spread over its threads, the
    busiest thread anywhere, ``ceil(n_i / c_i)``, runs at most one task more than the idlest,
    ``floor(n_j / c_j)``). With equal capacities it is :func:`within_one`; it accepts more where
    threads are idle: one task on a one-thread instance beside a two-thread instance with none
    (every thread runs 1 or 0 tasks, the instances hold 1 and 0).

    >>> threads_within_one({"I1": 1, "I2": 0}, {"I1": 1, "I2": 2}), within_one({"I1": 1, "I2": 0}, {"I1": 1, "I2": 2})
    (True, False)
    >>> threads_within_one({"I1": 2, "I2": 1}, {"I1": 1, "I2": 2}), threads_within_one({"I1": 2, "I2": 0}, {"I1": 2, "I2": 2})
    (False, False)
    """
    if counts and max(counts.values()) - min(counts.values()) > 1:
        return False
    return thread_loads_within_one(counts, capacities)


def share_within_one(counts: dict[str, int], capacities: dict[str, int]) -> bool:
    """True when every instance holds its share of the tasks by threads, rounded down or up.

    The third reading of "within one" with capacities: KIP-441's "The instance with the most
    tasks has no more than 1 more task than the instance with the least tasks" says, with equal
    instances, that each holds the mean rounded down or up; with stream threads each instance's
    mean is its share, ``k * c_i / C`` of the ``k`` tasks over ``C`` threads in all (the quota
    rule of proportional apportionment). Red team 4's independent flow assignor balances this
    way: 1, 0 and 2 tasks on 1, 2 and 4 threads (shares 3/7, 6/7 and 12/7), which neither
    other reading accepts (and where Kafka's own balancing moves nothing either).

    >>> share_within_one({"I1": 1, "I2": 0, "I3": 2}, {"I1": 1, "I2": 2, "I3": 4})
    True
    >>> within_one({"I1": 1, "I2": 0, "I3": 2}, {"I1": 1, "I2": 2, "I3": 4}), threads_within_one({"I1": 1, "I2": 0, "I3": 2}, {"I1": 1, "I2": 2, "I3": 4})
    (False, False)
    >>> share_within_one({"I1": 3, "I2": 1}, {"I1": 1, "I2": 1}), share_within_one({"I1": 2, "I2": 0, "I3": 2}, {"I1": 1, "I2": 2, "I3": 4})
    (False, False)
    """
    k = sum(counts.values())
    threads = sum(capacities[m] for m in counts)
    return all((k * capacities[m]) // threads <= n <= -(-(k * capacities[m]) // threads) for m, n in counts.items())


def thread_loads_within_one(counts: dict[str, int], capacities: dict[str, int]) -> bool:
    """True when no thread anywhere runs more than one task more than another, instances aside.

    The fourth reading of "within one" with capacities: KIP-441 "Constraints and Cost Function"
    alone, "We try to distribute tasks evenly across the cluster, instead of letting one thread
    have more tasks than another" (each instance's tasks spread over its threads, the busiest
    thread, ``ceil(n_i / c_i)``, at most one task above the idlest, ``floor(n_j / c_j)``), without
    :func:`threads_within_one`'s instance sentence. Kafka's own sticky assignors balance this way
    (KIP-924's and KIP-1071's ``StickyTaskAssignor`` move nothing while every thread runs within
    one task of every other), and so does its high-availability assignor's placement across
    subtopologies. With one thread per instance it is :func:`within_one`; with more it accepts an
    idle instance beside one running a task per thread.

    >>> thread_loads_within_one({"I1": 3, "I2": 0}, {"I1": 3, "I2": 3}), threads_within_one({"I1": 3, "I2": 0}, {"I1": 3, "I2": 3})
    (True, False)
    >>> thread_loads_within_one({"I1": 4, "I2": 0}, {"I1": 3, "I2": 3}), thread_loads_within_one({"I1": 2, "I2": 1}, {"I1": 1, "I2": 2})
    (False, False)
    """
    if not counts:
        return True
    busiest = max(-(-counts[m] // capacities[m]) for m in counts)
    idlest = min(counts[m] // capacities[m] for m in counts)
    return busiest - idlest <= 1


#: The four readings of "within one" with capacities, in the order the module doc gives them.
READINGS = (within_one, threads_within_one, share_within_one, thread_loads_within_one)


def spread(counts: dict[str, int], capacities: dict[str, int]) -> float:
    """Most minus least tasks per thread: 0 is perfect; with equal capacities ``max - min``."""
    if not counts:
        return 0.0
    loads = [counts[m] / capacities[m] for m in counts]
    return max(loads) - min(loads)


@dataclass(frozen=True, kw_only=True, slots=True)
class BalanceReport:
    """How balanced an assignment is; ``balanced`` is KIP-441's verdict."""

    active_within_one: bool
    active_spread: float
    copies_within_one: bool
    copies_spread: float
    subtopology_within_one: bool
    subtopology_spread: tuple[tuple[str, float], ...]
    #: the actives, and each subtopology's, within one by a reading of :data:`READINGS`
    active_either: bool = False
    subtopology_either: bool = False
    #: the subtopologies within one by no reading, each with its actives per member (non-leaving)
    subtopologies_unbalanced: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()

    @property
    def balanced(self) -> bool:
        """Balanced by :func:`within_one` (the reading the solver and the built-in assignors aim at)."""
        return self.active_within_one and self.subtopology_within_one

    @property
    def balanced_either(self) -> bool:
        """Balanced by either reading of "within one" with capacities, count by count (what the properties accept)."""
        return self.balanced or (self.active_either and self.subtopology_either)

    def describe(self) -> str:
        worst = max((s for _, s in self.subtopology_spread), default=0.0)
        return (
            f"{'balanced' if self.balanced else 'not balanced'}: active spread {self.active_spread:g}, "
            f"all-copies spread {self.copies_spread:g}, worst subtopology spread {worst:g}"
        )


def _counts(view: RebalanceInput, assignment: Assignment):
    """(capacities, actives, all copies, actives per subtopology) of the non-leaving members: a task
    listed twice is one copy (no-colocation's business, as every property counts it), a task the
    input does not name is no load, so the counts are of distinct tasks of the input."""
    members = [m for m in view.members if not m.leaving]
    caps = {m.id: m.capacity for m in members}
    held = [(m.id, assignment.of(m.id)) for m in members]
    actives = {m: len({t for t in a.active if view.has_task(t)}) for m, a in held}
    copies = {m: len({t for t in a.copies if view.has_task(t)}) for m, a in held}
    per_sub: dict[str, dict[str, int]] = {}
    for task_id in view.task_ids:
        sub = subtopology_of(task_id)
        if sub not in per_sub:
            per_sub[sub] = dict.fromkeys(caps, 0)
    for m, a in held:
        for task_id in set(a.active):
            if view.has_task(task_id):
                per_sub[subtopology_of(task_id)][m] += 1
    return caps, actives, copies, per_sub


def measure_balance(view: RebalanceInput, assignment: Assignment) -> BalanceReport:
    """Balance of ``assignment`` over the input's non-leaving members (copies of unknown tasks ignored)."""
    caps, actives, copies, per_sub = _counts(view, assignment)
    subs = tuple((s, spread(per_sub[s], caps)) for s in sorted_ids(per_sub))
    unbalanced = tuple(
        (s, tuple((m, per_sub[s][m]) for m in sorted_ids(caps)))
        for s in sorted_ids(per_sub)
        if not _within_one_either(per_sub[s], caps)
    )
    return BalanceReport(
        active_within_one=within_one(actives, caps),
        active_spread=spread(actives, caps),
        copies_within_one=within_one(copies, caps),
        copies_spread=spread(copies, caps),
        subtopology_within_one=all(within_one(per_sub[s], caps) for s in per_sub),
        subtopology_spread=subs,
        active_either=_within_one_either(actives, caps),
        subtopology_either=not unbalanced,
        subtopologies_unbalanced=unbalanced,
    )


def _within_one_either(counts: dict[str, int], capacities: dict[str, int]) -> bool:
    """Within one by any of the readings with capacities (:data:`READINGS`)."""
    return any(reading(counts, capacities) for reading in READINGS)


def is_balanced(view: RebalanceInput, assignment: Assignment) -> bool:
    """KIP-441 balance: instance balance and subtopology balance of the actives."""
    return measure_balance(view, assignment).balanced


def balanced_either(view: RebalanceInput, assignment: Assignment) -> bool:
    """KIP-441 balance by either reading of "within one" with capacities (:attr:`BalanceReport.balanced_either`)."""
    return measure_balance(view, assignment).balanced_either


def counts_by_reading(view: RebalanceInput, assignment: Assignment, subtopology: str | None = None):
    """Per reading of :data:`READINGS`, ``(actives, the subtopologies, all copies)`` each within
    one or not: the subtopologies all of them, or only ``subtopology`` when given."""
    caps, actives, copies, per_sub = _counts(view, assignment)
    subs = [per_sub[subtopology]] if subtopology is not None and subtopology in per_sub else list(per_sub.values())
    return tuple(
        (reading(actives, caps), all(reading(c, caps) for c in subs), reading(copies, caps)) for reading in READINGS
    )


def balanced_every_way(view: RebalanceInput, assignment: Assignment) -> bool:
    """KIP-441 balance of the actives (instance and subtopology) by *every* reading of "within one"
    with capacities: what an assignment must be for every implementation to call it balanced,
    whichever reading it chose. With equal capacities it is :func:`is_balanced`."""
    caps, actives, _, per_sub = _counts(view, assignment)
    return all(reading(actives, caps) and all(reading(c, caps) for c in per_sub.values()) for reading in READINGS)


def copies_by_member(view: RebalanceInput, assignment: Assignment) -> dict[str, int]:
    """All copies (active, standby and warmup alike) of each non-leaving member, as balance counts them."""
    return _counts(view, assignment)[2]


def copies_balanced_every_way(view: RebalanceInput, assignment: Assignment) -> bool:
    """All copies (active, standby and warmup alike) per member within one by *every* reading of
    :data:`READINGS`: KIP-441 balances "as today" ("Note that "balance" in this KIP, as today, is
    purely a function of task distribution over the instances"), and the Streams assignor of that
    day, like Kafka's sticky assignors since, counts every assigned task, standbys included, so an
    implementation may rightly move a standby to even out a layout whose actives are balanced."""
    caps, _, copies, _ = _counts(view, assignment)
    return all(reading(copies, caps) for reading in READINGS)


def copies_evened(view: RebalanceInput, before: Assignment, after: Assignment) -> bool:
    """Whether ``after`` evens out all copies (active, standby and warmup alike) better than
    ``before``: within one by a reading ``before`` is not, or a smaller spread of the per-thread
    loads, or a smaller sum of their squares over the threads (``sum n_i**2 / c_i``: one copy moved
    from a fuller thread to an emptier one lowers it, whatever the extremes do).

    KIP-441's authors on moving tasks: "ensure that we don't change the assignments unless it
    actually improves the cluster balance" (seed 002, review comments). A change of replicas that
    leaves the counts where they were, up to members of equal threads trading places, improves
    no reading of balance.

    >>> from rebalproof.model.view import Member, Task
    >>> v = RebalanceInput(tasks=(Task(id="0_0"), Task(id="0_1")), members=(Member(id="I1"), Member(id="I2"), Member(id="I3")))
    >>> before = Assignment.build({"I1": {"active": ["0_0"], "standby": ["0_1"]}, "I2": {"active": ["0_1"], "standby": ["0_0"]}})
    >>> swapped = Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"active": ["0_1"], "standby": ["0_0"]}, "I3": {"standby": ["0_1"]}})
    >>> copies_evened(v, before, swapped)  # 2, 2, 0 before: 1, 2, 1 after
    True
    >>> copies_evened(v, swapped, Assignment.build({"I1": {"active": ["0_0"], "standby": ["0_1"]}, "I2": {"active": ["0_1"]}, "I3": {"standby": ["0_0"]}}))
    False
    """
    caps, _, old, _ = _counts(view, before)
    _, _, new, _ = _counts(view, after)
    if any(reading(new, caps) and not reading(old, caps) for reading in READINGS):
        return True
    if _exact_spread(new, caps) < _exact_spread(old, caps):
        return True
    return _square_load(new, caps) < _square_load(old, caps)


def _exact_spread(counts: dict[str, int], capacities: dict[str, int]) -> Fraction:
    """:func:`spread` in exact arithmetic (a tie compared in floats could read as a change)."""
    loads = [Fraction(n, capacities[m]) for m, n in counts.items()]
    return max(loads) - min(loads) if loads else Fraction(0)


def _square_load(counts: dict[str, int], capacities: dict[str, int]) -> Fraction:
    return sum((Fraction(n * n, capacities[m]) for m, n in counts.items()), Fraction(0))


def balance_signature(view: RebalanceInput, assignment: Assignment) -> tuple:
    """Everything a reading of balance can read of ``assignment``: the threads and actives of each
    member, its threads and copies, and for each subtopology its threads and actives per member,
    each as a multiset (sorted), the subtopologies as a multiset too. Every reading of
    :data:`READINGS`, every spread and every other measure of balance over capacities is a function
    of it, so two assignments with the same signature are exactly as balanced by any of them."""
    caps, actives, copies, per_sub = _counts(view, assignment)
    return (
        tuple(sorted((caps[m], n) for m, n in actives.items())),
        tuple(sorted((caps[m], n) for m, n in copies.items())),
        tuple(sorted(tuple(sorted((caps[m], n) for m, n in counts.items())) for counts in per_sub.values())),
    )
