"""``learner``: the KIP-429 learner-task assignor (seed 001 "Assignment Algorithm", versions 1.0-4.0).

Seed 001 (and its later revision 000) specify the leader's algorithm as "assign tasks in the
order of: active, learner and standby"; this module implements those steps as named phases,
together with "Optimizations" (stateless tasks, standby task utilization) and the iteration
plan's versions.

Encoding of KIP-429 in the contract (the group model relies on exactly this)
---------------------------------------------------------------------------
- A **learner task** is a copy in the ``warmup`` role. It is **ready** ("isReady") when its
  member's lag on the task is <= ``acceptable_recovery_lag``
  (:func:`~rebalproof.model.ranking.is_caught_up`).
- A task **being learned** ("beingLearned") is an active task with a learner on another
  member. At each join its owner revokes it (seed 001 "Stop-The-World Effect": "we shall only
  revoke tasks that are being learned since last round"), so the leader sees the previous
  owner *not* listing it as active but still reporting its state in ``lags`` (lag 0). The
  **previous owner** of a task is a member that holds it as active, or reports caught-up
  state for it while holding it in no role. (The group model should therefore report state
  only where it is current: any caught-up member without a role counts as previous owner.)
- **Leaving** members ("isLeaving", version 2.0) get no new copies: their tasks are learned
  elsewhere; a leaving member keeps its actives until a learner is ready, then gets nothing.
  If every member is leaving, nobody is treated as leaving (someone must run the tasks).
  Version 1.0 predates the tag and treats every member as staying.
- ``previous_members`` tells **new** instances apart ("Backing up Information on Leader").
  Version 1.0 gives learners only to new instances; when ``previous_members`` is absent (the
  leader's memory was lost in a fail-over) nobody counts as new, so version 1.0 assigns no new
  learners (seed "Leader Transfer Before Scaling": the result stays skewed).

The phases
----------
1. **Stateful actives**, each task to the first that exists of: (1) a member with a ready
   learner, (2) the previous owner, (3) an unready learner's owner, (4) a member with a
   standby (most caught up, then least loaded), (5) the least loaded member (actives per
   thread). Steps 1, 3, 4 and 5 use staying members only; step 2 may keep a task on a leaving
   member. Ties: least lag, then natural id.
2. **Existing learners kept** unless promoted (their member got the active) or on a leaving
   member; learners of stateless tasks are dropped (nothing to learn).
3. **New learners.** A member's *load* counts its stateful actives not already being learned
   plus the learners it holds. Leaving members (version 2) shed every such active; then, while
   the heaviest member per thread (ties: lowest id) would still be heavier than the lightest
   eligible recipient after a move (:func:`~rebalproof.model.balance.within_one` violated
   between them), it sheds one more. With ``imbalance=x`` (``stream.imbalance.percentage``,
   version 4.0) only members above ``expected * (1 + x)`` shed, ``expected`` being their
   capacity's share of the stateful tasks; ``x = 0`` means strict quotas. Eligible recipients:
   new staying members (version 1) or any staying member (version 2); a member never both
   sheds and receives in one round. Learner tasks carry no limit such as KIP-441's
   ``max_warmup_replicas``: KIP-429 has none, and its host-swap scenario needs four at once.
4. **Which tasks become learners** is the implementation's choice (the seeds pick differently
   in equal situations: scale-up moves T1 off S1[T1, T2], host swap moves T2 off S1[T1, T2]).
   The rule here, one for all: a donor first sheds tasks that a receiving member holds as
   standby ("Standby Task Utilization"), then its *highest*-id tasks, keeping its lowest-id
   ones (as ``sticky`` does); the shed tasks, in id order, go first to a receiving member with
   a matching standby, then to the receiving members in id order, each up to the number it
   was given in phase 3.
5. **Stateless actives** have no learner stage ("Stateful vs Stateless Tasks"): they go
   straight to where balance wants them, counting each staying member's stateful load after
   the learners move, and stay with their current owner when its share allows.
6. **Standbys**: ``num_standby_replicas`` per stateful task on staying members holding no copy
   of it, preferring current standby holders, then caught-up state (such as a previous owner
   after a learner took over), then the least loaded.

Options: ``version`` (1 or 2; default 2) and ``imbalance`` (float >= 0; default 0). Version
3.0's ``learner.partial.rebalance`` is member-side (when a member rejoins) and not an option
here. The answer never asks for a probing rebalance: KIP-429 members rejoin themselves when a
learner is ready.

Examples
--------
Seed 001 "Online Host Swapping", first rebalance: S3 and S4 are new.

>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(
...     tasks=tuple(Task(id=f"T{i}") for i in range(1, 5)),
...     members=(Member(id="S1", active=("T1", "T2")), Member(id="S2", active=("T3", "T4")),
...              Member(id="S3"), Member(id="S4")),
...     previous_members=("S1", "S2"))
>>> out = make(version=1)(view)
>>> [(m, a.active, a.warmup) for m, a in out.members]
[('S1', ('T1', 'T2'), ()), ('S2', ('T3', 'T4'), ()), ('S3', (), ('T2',)), ('S4', (), ('T4',))]
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

from rebalproof.errors import InputError
from rebalproof.model.assignment import Assignment, MemberAssignment
from rebalproof.model.assignors import AssignorInfo, register
from rebalproof.model.assignors.common import capacity_quotas, place_standbys, place_within_quotas, thread_weights
from rebalproof.model.names import id_key, sorted_ids
from rebalproof.model.ranking import is_caught_up, lag_of, rank
from rebalproof.model.view import RebalanceInput

__all__ = ["VERSIONS", "assign", "make", "INFO"]

VERSIONS = (1, 2)


@dataclass(frozen=True, slots=True)
class _Group:
    """Who is who in this round: the members treated as leaving and as staying."""

    view: RebalanceInput
    version: int
    leaving: frozenset
    staying: tuple

    def may_learn(self, member_id: str) -> bool:
        """Version 1: only new staying members take new learners; version 2: any staying member."""
        if member_id in self.leaving:
            return False
        return self.version >= 2 or self.view.is_new(member_id) is True


def _group(view: RebalanceInput, version: int) -> _Group:
    leaving = frozenset(m.id for m in view.members if m.leaving) if version >= 2 else frozenset()
    if len(leaving) == len(view.members):
        leaving = frozenset()
    staying = tuple(m for m in view.member_ids if m not in leaving)
    return _Group(view=view, version=version, leaving=leaving, staying=staying)


def _by_lag(view: RebalanceInput, task: str):
    return lambda m: lag_of(view, m, task)


def _stateful_actives(g: _Group) -> dict[str, str]:
    """Phase 1: every stateful task's active, by the seed's five steps in order.

    Candidate lists are built in id order and sorted stably, so equals stay in id order.
    """
    view = g.view
    staying = set(g.staying)
    weight = thread_weights({m.id: m.capacity for m in view.members})
    count = {m: 0 for m in view.member_ids}
    actives: dict[str, str] = {}

    def give(task, member):
        actives[task] = member
        count[member] += 1

    def ready_learners(task):
        found = [m for m in view.holders(task, "warmup") if m in staying and is_caught_up(view, m, task)]
        return sorted(found, key=_by_lag(view, task))

    def previous_owners(task):
        found = []
        for member in view.members:
            if task in member.active or (task not in member.copies and is_caught_up(view, member.id, task)):
                found.append(member.id)
        return sorted(found, key=lambda m: (task not in view.member(m).active, m in g.leaving, lag_of(view, m, task)))

    def unready_learners(task):
        found = [m for m in view.holders(task, "warmup") if m in staying]
        return sorted(found, key=_by_lag(view, task))

    def standby_holders(task):
        found = [m for m in view.holders(task, "standby") if m in staying]
        return sorted(found, key=lambda m: (rank(view, m, task), (count[m] + 1) * weight[m]))

    def least_loaded(task):
        return sorted(g.staying, key=lambda m: (count[m] + 1) * weight[m])

    for step in (ready_learners, previous_owners, unready_learners, standby_holders, least_loaded):
        for task in view.stateful_task_ids:
            if task in actives:
                continue
            candidates = step(task)
            if candidates:
                give(task, candidates[0])
    return actives


def _kept_learners(g: _Group, actives: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Phase 2: existing learners stay unless promoted, on a leaving member, or stateless."""
    kept: dict[str, tuple[str, ...]] = {}
    for task in g.view.stateful_task_ids:
        members = tuple(m for m in g.view.holders(task, "warmup") if m in g.staying and actives.get(task) != m)
        if members:
            kept[task] = members
    return kept


def _load(g: _Group, actives: dict[str, str], learners: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """Staying members' load: stateful actives not being learned, plus learners held."""
    load = {m: 0 for m in g.staying}
    for task, member in actives.items():
        if task not in learners and member in load:
            load[member] += 1
    for members in learners.values():
        for member in members:
            if member in load:
                load[member] += 1
    return load


def _learner_counts(g: _Group, actives, kept, imbalance: float) -> tuple[dict[str, int], dict[str, int], dict[str, list[str]]]:
    """Phase 3: how many learners each donor sheds and each recipient gains."""
    view = g.view
    caps = {m.id: m.capacity for m in view.members}
    weight = thread_weights(caps)
    sheddable: dict[str, list[str]] = {m: [] for m in view.member_ids}
    for task, member in actives.items():
        if task not in kept:
            sheddable[member].append(task)
    load = _load(g, actives, kept)
    recipients = [m for m in g.staying if g.may_learn(m)]
    shed = {m: 0 for m in view.member_ids}
    gain = {m: 0 for m in view.member_ids}

    def lightest(donor):
        candidates = [r for r in recipients if r != donor and shed[r] == 0]
        return min(candidates, key=lambda r: (load[r] + 1) * weight[r], default=None)  # first of equals: lowest id

    def move(donor, recipient):
        shed[donor] += 1
        gain[recipient] += 1
        load[recipient] += 1
        if donor in load:
            load[donor] -= 1

    for donor in sorted_ids(g.leaving):
        for _ in sheddable[donor]:
            recipient = lightest(donor)
            if recipient is None:
                break
            move(donor, recipient)

    total = len(view.stateful_task_ids)
    threads = sum(caps[m] for m in g.staying)
    tolerance = 1 + Fraction(imbalance)

    def over(donor):
        return imbalance == 0 or load[donor] > Fraction(total * caps[donor], threads) * tolerance

    while True:
        donors = [d for d in g.staying if gain[d] == 0 and shed[d] < len(sheddable[d]) and over(d)]
        if not donors:
            break
        donor = min(donors, key=lambda d: -load[d] * weight[d])  # heaviest per thread, lowest id of equals
        recipient = lightest(donor)
        if recipient is None or load[donor] * weight[donor] <= (load[recipient] + 1) * weight[recipient]:
            break
        move(donor, recipient)
    return shed, gain, sheddable


def _new_learners(g: _Group, actives, kept, imbalance: float) -> dict[str, str]:
    """Phases 3 and 4: new learner task -> the member that learns it."""
    view = g.view
    shed, gain, sheddable = _learner_counts(g, actives, kept, imbalance)
    receivers = sorted_ids(m for m in gain if gain[m] > 0)

    def standby_on_receiver(task):
        return any(task in view.member(r).standby for r in receivers)

    chosen: list[str] = []
    for donor in view.member_ids:
        if shed[donor]:
            tasks = sorted(sheddable[donor], key=id_key, reverse=True)
            tasks.sort(key=lambda t: not standby_on_receiver(t))
            chosen.extend(tasks[: shed[donor]])
    chosen = list(sorted_ids(chosen))
    left = dict(gain)
    learners: dict[str, str] = {}
    for task in chosen:
        holders = [r for r in receivers if left[r] > 0 and task in view.member(r).standby]
        if holders:
            recipient = min(holders, key=lambda r: rank(view, r, task))
            learners[task] = recipient
            left[recipient] -= 1
    for task in chosen:
        if task not in learners:
            recipient = next(r for r in receivers if left[r] > 0)
            learners[task] = recipient
            left[recipient] -= 1
    return learners


def _stateless_actives(g: _Group, actives, learners) -> dict[str, str]:
    """Phase 5: stateless tasks where balance wants them, sticky within their share."""
    view = g.view
    tasks = view.stateless_task_ids
    if not tasks:
        return {}
    caps = {m: view.member(m).capacity for m in g.staying}
    current = {m: sum(1 for t in view.member(m).active if not view.task(t).stateful) for m in g.staying}
    quotas = capacity_quotas(len(tasks), caps, current=current, start=_load(g, actives, learners))
    return place_within_quotas(tasks, quotas, (view.owners,))


def assign(view: RebalanceInput, *, version: int = 2, imbalance: float = 0.0) -> Assignment:
    """The KIP-429 learner assignment of ``view`` (see the module docstring for the rules).

    Parameters
    ----------
    view : RebalanceInput
        The leader's view of the rebalance.
    version : {1, 2}, optional
        KIP-429 iteration: 1 gives learners to new instances only, 2 to any staying instance
        and honours ``leaving``. Default 2.
    imbalance : float, optional
        ``stream.imbalance.percentage`` as a fraction (0.2 = 20 %); only members above their
        expected share times ``1 + imbalance`` shed tasks. Default 0 (strict quotas).

    Returns
    -------
    Assignment
        Every member of ``view``, possibly with nothing; ``probing_rebalance`` false.
    """
    _check_options(version, imbalance)
    if not view.members:
        return Assignment()
    g = _group(view, version)
    actives = _stateful_actives(g)
    kept = _kept_learners(g, actives)
    new = _new_learners(g, actives, kept, imbalance)
    learners = dict(kept)
    for task, member in new.items():
        learners[task] = learners.get(task, ()) + (member,)
    actives.update(_stateless_actives(g, actives, learners))

    holding: dict[str, list[str]] = {m: [] for m in view.member_ids}
    warmups: dict[str, list[str]] = {m: [] for m in view.member_ids}
    for task, member in actives.items():
        holding[member].append(task)
    for task, members in learners.items():
        for member in members:
            warmups[member].append(task)
    occupied = {m: holding[m] + warmups[m] for m in view.member_ids}
    standbys = place_standbys(view, occupied, count=view.config.num_standby_replicas, members=g.staying)
    return Assignment(
        members={
            m: MemberAssignment(active=tuple(holding[m]), warmup=tuple(warmups[m]), standby=standbys.get(m, ()))
            for m in view.member_ids
        },
        probing_rebalance=False,
    )


def _check_options(version, imbalance) -> None:
    if isinstance(version, bool) or version not in VERSIONS:
        raise InputError(
            f"option version of assignor 'learner' must be 1 or 2, got {version!r} "
            "(version 3.0's learner.partial.rebalance is member-side; version 4.0 is the imbalance option)"
        )
    if isinstance(imbalance, bool) or not isinstance(imbalance, (int, float)) or not math.isfinite(imbalance) or imbalance < 0:
        raise InputError(
            f"option imbalance of assignor 'learner' must be a number of at least 0 (0.2 means 20 %), got {imbalance!r}"
        )


def make(*, version: int = 2, imbalance: float = 0.0) -> Callable[[RebalanceInput], Assignment]:
    """The ``learner`` assignor with its options fixed; bad options are an :class:`~rebalproof.errors.InputError`.

    Examples
    --------
    >>> make(version=3)
    Traceback (most recent call last):
    ...
    rebalproof.errors.InputError: option version of assignor 'learner' must be 1 or 2, got 3 (version 3.0's learner.partial.rebalance is member-side; version 4.0 is the imbalance option)
    """
    _check_options(version, imbalance)
    return functools.partial(assign, version=version, imbalance=float(imbalance))


INFO = register(
    AssignorInfo(
        name="learner",
        summary="KIP-429 learner tasks: ready learners take over, new learners from the heaviest to new (v1) or any staying (v2) instances",
        seed="001 Assignment Algorithm, Optimizations, Algorithm Iteration Plan (versions 1.0-4.0); 000 corrections",
        make=make,
        rules="learner",
        equivariant=False,
        options={"version": int, "imbalance": float},
    )
)
