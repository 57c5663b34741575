"""When ``ha`` leaves an assignment alone: KIP-441 requirement #5 ("The algorithm must converge").

"If the current assignment is already balanced, it must not alter the assignment", and
"once the leader makes a balanced assignment, it can stop performing probing rebalances".
A layout is *settled* when it

- is valid: every task has exactly one active copy, stateless tasks have no standbys;
- has every stateful active on a most-caught-up member (KIP-441 #1);
- has exactly :func:`~rebalproof.model.assignors.ha_target.standby_count` standbys per
  stateful task, none of them behind while a member caught up on the task holds no copy of it
  (KIP-441 #2, "must assign standby tasks to the next-most-caught-up instances", ranks above
  #5 there: such a standby moves, as Kafka's own standby task movements move it; otherwise
  where they sit is not asked -- #5 forbids moving them);
- is balanced (:func:`~rebalproof.model.balance.is_balanced`: instance balance by capacity
  and subtopology spread, over the actives).

``ha`` returns a settled current assignment unchanged (its warmup lists, left over from
earlier rounds, are dropped: they have no purpose once the layout is balanced), and drops
its own warmups when the layout it computed is settled, since the next round would keep
that layout whatever the warmups restore.

Abstraction choice: KIP-441 has no ``leaving`` tag (that is KIP-429 v2), so ``ha`` ignores it:
balance is judged over every member, leaving or not.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from rebalproof.model.assignment import Assignment, MemberAssignment
from rebalproof.model.assignors.ha_target import standby_count
from rebalproof.model.balance import is_balanced
from rebalproof.model.ranking import is_caught_up, most_caught_up
from rebalproof.model.view import RebalanceInput

__all__ = ["layout", "is_settled", "current_if_settled"]


def layout(
    view: RebalanceInput,
    actives: Mapping[str, str],
    standbys: Mapping[str, tuple[str, ...]],
    warmups: Mapping[str, tuple[str, ...]] | None = None,
    *,
    probing_rebalance: bool = False,
) -> Assignment:
    """An :class:`Assignment` naming every member of ``view`` from task -> member(s) maps."""
    roles = {m: {"active": [], "standby": [], "warmup": []} for m in view.member_ids}
    for task_id, member in actives.items():
        roles[member]["active"].append(task_id)
    for role, placed in (("standby", standbys), ("warmup", warmups or {})):
        for task_id, members in placed.items():
            for member in members:
                roles[member][role].append(task_id)
    return Assignment(
        members={m: MemberAssignment(**{r: tuple(v) for r, v in roles[m].items()}) for m in view.member_ids},
        probing_rebalance=probing_rebalance,
    )


def _ignoring_leaving(view: RebalanceInput) -> RebalanceInput:
    if not any(m.leaving for m in view.members):
        return view
    return view.replace(members=tuple(replace(m, leaving=False) for m in view.members))


def is_settled(view: RebalanceInput, assignment: Assignment) -> bool:
    """True when ``assignment`` (its actives and standbys) is a layout ``ha`` must keep (module docstring)."""
    count = standby_count(view)
    for task in view.tasks:
        owners = assignment.holders(task.id, "active")
        if len(owners) != 1 or not view.has_member(owners[0]):
            return False
        standbys = assignment.holders(task.id, "standby")
        if not task.stateful:
            if standbys:
                return False
            continue
        if len(standbys) != count or len(set(standbys)) != count or owners[0] in standbys:
            return False
        if owners[0] not in most_caught_up(view, task.id):
            return False
        if any(not is_caught_up(view, m, task.id) for m in standbys):
            holding = {m for role in ("active", "standby", "warmup") for m in assignment.holders(task.id, role)}
            if any(m.id not in holding and is_caught_up(view, m.id, task.id) for m in view.members):
                return False
    return is_balanced(_ignoring_leaving(view), assignment)


def current_if_settled(view: RebalanceInput) -> Assignment | None:
    """The current assignment (actives and standbys, warmups dropped) when it is settled, else None.

    Labels do not count (Kafka's warmups are standbys): when the standbys alone are not the
    right number, the current replicas in both roles are tried as the standbys, so a layout
    whose only replica of a task is labelled ``warmup`` is settled exactly when the same layout
    labelled ``standby`` is (and comes back with it as a standby).
    """
    current = Assignment(
        members={m.id: MemberAssignment(active=m.active, standby=m.standby) for m in view.members},
        probing_rebalance=False,
    )
    if is_settled(view, current):
        return current
    replicas = Assignment(
        members={m.id: MemberAssignment(active=m.active, standby=m.standby + m.warmup) for m in view.members},
        probing_rebalance=False,
    )
    return replicas if is_settled(view, replicas) else None
