"""The balanced *target* of ``ha``: where every copy should end up once restores are done.

KIP-441 ("Proposed Assignment/Rebalance Algorithm", review comments on
``proposeBalancedAssignment``): besides the constrained assignment of this round the leader
computes the unconstrained balanced assignment and diffs the two "to learn what movements
will bring us to balance". This module computes that target; the round's placement
(:mod:`rebalproof.model.assignors.ha_round`) moves towards it.

Two exact min-cost placements (:func:`~rebalproof.model.assignors.ha_flow.transport`):

1. **Target actives** of every task (stateful and stateless, so that the stateless ones can
   be packed into the balance): instance balance by capacity and subtopology spread, each
   within one (:func:`~rebalproof.model.assignors.ha_flow.quota_box`); if no layout has both,
   instance balance alone. Per (task, member) the tiers, most important first:

   1. the member is not most caught-up on the task (KIP-441 rank) -- taking the task there
      needs a warmup; stateless tasks never pay this;
   2. the member has no local state for the task (KIP-441: "prefer" state, less to restore);
   3. the member is not the task's current active owner (stickiness, KIP-441 #6);
   4. the member is not the task's round-robin member (task ``j`` in id order to member
      ``j mod n``: the KIP's clean layout, e.g. ``X_0, Y_0`` on ``A``);
   5. a final unique tie-break on the arc order (:func:`~rebalproof.model.assignors.ha_flow.lexicographic_costs`).

2. **Target standbys**: ``min(num_standby_replicas, members - 1)`` per stateful task, never on
   its target active member, topping up the state each member holds (target actives plus
   standbys) to a common level by capacity (else unbounded). Tiers: not caught up; no local
   state; does not hold the task now as standby or warmup (role stickiness); not among the
   task's round-robin successors; unique order.

Why it converges (the ``converges`` property). Let ``Phi`` be the number of tasks whose target
active member is not most caught-up: tier 1 makes the target minimise ``Phi`` exactly over
all balanced layouts (the boxes are exact, and the flow is an exact optimum). Suppose
membership is fixed and between rounds every copy the round assigned restores (no state is
lost). Then every target member that got a copy of its task is caught up next round and no
member falls out of the most-caught-up set of a target position, so last round's target,
re-evaluated, has ``Phi`` smaller by the number of active-target copies placed, and the new
target's ``Phi`` is no larger than that, whatever the weaker tiers choose. Copies already
restored never compete for the warmup budget, and active-target warmups come before
standby-target ones (:func:`~rebalproof.model.assignors.ha_round.place_warmups`), so each
round with ``Phi > 0`` lowers it by at least ``min(max_warmup_replicas, Phi)``. When
``Phi = 0`` every task is active on its target member, which is balanced, and ``ha`` stops
probing. Hence, after one added instance (``Phi <= stateful tasks``), at most
``ceil(stateful tasks / max_warmup_replicas) + 1`` rebalances -- Kafka's convergence-test
bound, rounded up -- and from any state one more (the first round's budget may go to copies
already restoring). When no balanced layout exists, ``ha`` stops once the result is the
target; that case, and restores finishing in any order, are covered by tests, not by this
argument.

Examples
--------
>>> from rebalproof.model.view import Config, Member, RebalanceInput, Task
>>> view = RebalanceInput(
...     config=Config(num_standby_replicas=1),
...     tasks=tuple(Task(id=t) for t in ("T1", "T2", "T3")),
...     members=(Member(id="I1", active=("T1", "T3"), standby=("T2",), lags={"T1": 0, "T2": 0, "T3": 0}),
...              Member(id="I2", active=("T2",), standby=("T1", "T3"), lags={"T1": 0, "T2": 0, "T3": 0}),
...              Member(id="I3")))
>>> target = plan_target(view)
>>> target.active_of("T3"), target.standbys_of("T1"), target.balanced
('I3', ('I3',), True)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rebalproof.model.assignors.ha_flow import lexicographic_costs, quota_box, transport
from rebalproof.model.names import subtopology_of
from rebalproof.model.ranking import NO_STATE, is_caught_up, lag_of, most_caught_up
from rebalproof.model.view import RebalanceInput

__all__ = ["Target", "standby_count", "round_robin", "plan_target", "plan_actives", "plan_standbys"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Target:
    """The balanced layout ``ha`` moves towards: actives of all tasks, standbys of stateful ones.

    ``balanced`` is True when the target meets KIP-441 balance (instance and subtopology),
    False when no layout can (capacities can make subtopology spread and instance balance
    incompatible); then the target is instance-balanced only.
    """

    actives: tuple[tuple[str, str], ...]
    standbys: tuple[tuple[str, tuple[str, ...]], ...]
    balanced: bool
    _active: dict = field(init=False, repr=False, compare=False, hash=False)
    _standby: dict = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        object.__setattr__(self, "_active", dict(self.actives))
        object.__setattr__(self, "_standby", dict(self.standbys))

    def active_of(self, task_id: str) -> str:
        """The member the task's active copy should end on."""
        return self._active[task_id]

    def standbys_of(self, task_id: str) -> tuple[str, ...]:
        """The members the task's standbys should end on (empty for stateless tasks)."""
        return self._standby.get(task_id, ())

    def holders(self, task_id: str) -> tuple[str, ...]:
        """Every member meant to hold a copy of the task: the active first, then the standbys."""
        return (self._active[task_id],) + self.standbys_of(task_id)


def standby_count(view: RebalanceInput) -> int:
    """Standbys per stateful task: ``min(num_standby_replicas, members - 1)`` (KIP-441 #2)."""
    return max(0, min(view.config.num_standby_replicas, len(view.members) - 1))


def round_robin(view: RebalanceInput) -> dict[str, int]:
    """Task id -> its position in id order: the task's round-robin member is ``members[j mod n]``."""
    return {task_id: index for index, task_id in enumerate(view.task_ids)}


def plan_target(view: RebalanceInput) -> Target:
    """The target of ``view``: :func:`plan_actives`, then :func:`plan_standbys` on its result."""
    actives, balanced = plan_actives(view)
    standbys = plan_standbys(view, actives)
    return Target(
        actives=tuple((t, actives[t]) for t in view.task_ids),
        standbys=tuple((t, standbys[t]) for t in view.stateful_task_ids),
        balanced=balanced,
    )


def plan_actives(view: RebalanceInput) -> tuple[dict[str, str], bool]:
    """Target active member of every task, and whether KIP-441 balance could be met.

    Returns
    -------
    (dict of str to str, bool)
        Task id -> member id for every task; True when both instance balance and subtopology
        spread hold, False when only instance balance could be met.
    """
    members = view.member_ids
    if not members:
        return {}, True
    caps = {m.id: m.capacity for m in view.members}
    order = round_robin(view)
    arcs, tiers = [], []
    for task in view.tasks:
        best = set(most_caught_up(view, task.id)) if task.stateful else set(members)
        owners = set(view.owners(task.id))
        for member in members:
            arcs.append((task.id, member))
            tiers.append(
                (
                    int(member not in best),
                    int(task.stateful and lag_of(view, member, task.id) == NO_STATE),
                    int(member not in owners),
                    int(members[order[task.id] % len(members)] != member),
                )
            )
    costs = lexicographic_costs(tiers, flow=len(view.tasks))
    priced = [(t, m, c) for (t, m), c in zip(arcs, costs)]
    units = {t: 1 for t in view.task_ids}
    box = quota_box(len(view.tasks), caps)
    group_of = {t: subtopology_of(t) for t in view.task_ids}
    per_group: dict[str, int] = {}
    for task_id in view.task_ids:
        per_group[group_of[task_id]] = per_group.get(group_of[task_id], 0) + 1
    group_bounds = {
        (group, member): bounds
        for group, count in per_group.items()
        for member, bounds in quota_box(count, caps).items()
    }
    placed = transport(units, priced, box, group_of=group_of, group_bounds=group_bounds)
    balanced = placed is not None
    if placed is None:
        placed = transport(units, priced, box)
    assert placed is not None, "instance balance alone is always feasible"
    return {t: placed[t][0] for t in view.task_ids}, balanced


def plan_standbys(view: RebalanceInput, actives: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Target standby members of every stateful task, given the target actives.

    Each stateful task gets :func:`standby_count` standbys on members other than its target
    active. The members' stateful copies (target actives + standbys) are topped up to a common
    level by capacity when the tasks allow it, else the standbys go where the tiers say.
    """
    count = standby_count(view)
    stateful = view.stateful_task_ids
    if count == 0 or not stateful:
        return {t: () for t in stateful}
    members = view.member_ids
    caps = {m.id: m.capacity for m in view.members}
    order = round_robin(view)
    arcs, tiers = [], []
    for task_id in stateful:
        rr = {members[(order[task_id] + r) % len(members)] for r in range(1, count + 1)}
        for member in members:
            if member == actives[task_id]:
                continue
            arcs.append((task_id, member))
            tiers.append(
                (
                    int(not is_caught_up(view, member, task_id)),
                    int(lag_of(view, member, task_id) == NO_STATE),
                    int(task_id not in view.member(member).standby and task_id not in view.member(member).warmup),
                    int(member not in rr),
                )
            )
    total = count * len(stateful)
    costs = lexicographic_costs(tiers, flow=total)
    priced = [(t, m, c) for (t, m), c in zip(arcs, costs)]
    units = {t: count for t in stateful}
    held = {m: 0 for m in members}
    for task_id in stateful:
        held[actives[task_id]] += 1
    placed = transport(units, priced, quota_box(total, caps, start=held))
    if placed is None:
        placed = transport(units, priced, {m: (0, total) for m in members})
    assert placed is not None, "members - 1 candidates per task always fit standby_count"
    return {t: placed[t] for t in stateful}
