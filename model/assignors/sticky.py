"""``sticky``: the baseline assignor of Kafka Streams before KIP-429, balanced first, sticky second.

What the seeds say about it: seed 001 "Stop-The-World Effect" recaps the protocol it serves
(every rebalance revokes everything, then members get a fresh assignment), and seed 002
(KIP-441 "Proposed Changes") names what Streams' assignor did before: a "balanced stickiness"
strategy, balance over the instances first and, within that balance, tasks left where they
are ("Related Work", Kafka Consumer StickyAssignor).

The rules, as phases:

1. **Quotas.** Every task (stateful or not) is an active to share out over the non-leaving
   members by capacity (:func:`~rebalproof.model.assignors.common.capacity_quotas`), so the
   actives satisfy :func:`~rebalproof.model.balance.within_one`. A balanced current layout
   keeps its counts exactly.
2. **Sticky actives.** Within the quotas a task stays with its current active owner; else it
   goes to a caught-up holder (lag <= ``acceptable_recovery_lag``, any role), else to a member
   with some state (least lag), else to the member with the most room left.
3. **Standbys.** ``num_standby_replicas`` per stateful task, exactly
   ``min(num_standby_replicas, members - 1)`` (members: the non-leaving ones), on members
   without the task, preferring current standby holders and members with state; none for
   stateless tasks.
4. Never warmups; ``probing_rebalance`` is false.

Abstraction choices: the baseline knows nothing of KIP-429's ``leaving`` tag, but a leaving
member is on its way out, so it is treated as already gone: it gets nothing, neither actives
nor standbys, unless every member is leaving (then everyone counts). This matches the
``standby-count`` property (``n``: non-leaving members) and the solver's ``leaving`` rule (no
new copies on a leaving member). Ties are broken by natural id, so the assignor is
deterministic but not equivariant under renaming.

Examples
--------
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(
...     tasks=tuple(Task(id=f"T{i}") for i in range(1, 6)),
...     members=(Member(id="S1", active=("T1", "T2", "T3")), Member(id="S2", active=("T4", "T5")), Member(id="S3")))
>>> out = assign(view)
>>> [(m, a.active) for m, a in out.members]
[('S1', ('T1', 'T2')), ('S2', ('T4', 'T5')), ('S3', ('T3',))]
"""

from __future__ import annotations

from typing import Callable

from rebalproof.model.assignment import Assignment, MemberAssignment
from rebalproof.model.assignors import AssignorInfo, register
from rebalproof.model.assignors.common import capacity_quotas, place_standbys, place_within_quotas
from rebalproof.model.ranking import is_caught_up, lag_of
from rebalproof.model.view import RebalanceInput

__all__ = ["assign", "make", "INFO"]


def _staying(view: RebalanceInput) -> tuple[str, ...]:
    """Members that may take actives: the non-leaving ones, or everyone if all are leaving."""
    staying = tuple(m.id for m in view.members if not m.leaving)
    return staying or view.member_ids


def assign(view: RebalanceInput) -> Assignment:
    """The sticky, capacity-balanced assignment of ``view`` (see the module docstring)."""
    staying = _staying(view)
    if not staying:
        return Assignment()
    capacities = {m: view.member(m).capacity for m in staying}
    current = {m: len(view.member(m).active) for m in staying}
    quotas = capacity_quotas(len(view.tasks), capacities, current=current)

    def owners(task):
        return view.owners(task)

    def caught_up(task):
        if not view.task(task).stateful:
            return ()
        found = [m for m in staying if is_caught_up(view, m, task)]
        return sorted(found, key=lambda m: lag_of(view, m, task))  # stable: equals stay in id order

    def with_state(task):
        if not view.task(task).stateful:
            return ()
        found = [m for m in staying if view.member(m).lag(task) is not None]
        return sorted(found, key=lambda m: lag_of(view, m, task))  # stable: equals stay in id order

    actives = place_within_quotas(view.task_ids, quotas, (owners, caught_up, with_state))
    holding: dict[str, list[str]] = {m: [] for m in view.member_ids}
    for task, member in actives.items():
        holding[member].append(task)
    standbys = place_standbys(view, holding, count=view.config.num_standby_replicas, members=staying)
    return Assignment(
        members={m: MemberAssignment(active=tuple(holding[m]), standby=standbys.get(m, ())) for m in view.member_ids},
        probing_rebalance=False,
    )


def make() -> Callable[[RebalanceInput], Assignment]:
    """The ``sticky`` assignor (it takes no options)."""
    return assign


INFO = register(
    AssignorInfo(
        name="sticky",
        summary="pre-KIP-429 baseline: actives balanced by capacity, sticky within the quotas, standbys on other instances",
        seed="001 Stop-The-World Effect; 002 balanced stickiness (Related Work: StickyAssignor)",
        make=make,
        rules="sticky",
        equivariant=False,
        options={},
    )
)
