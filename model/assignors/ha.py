"""``ha``: the KIP-441 high-availability assignor, as a pipeline of named phases.

Seed 002 (KIP-441) "Proposed Assignment/Rebalance Algorithm": active stateful tasks go only
to instances ready to process them (most caught up by lag rank, floored at
``acceptable_recovery_lag``); movements towards a balanced assignment happen by giving the
destination an extra copy (a *warmup*, at most ``max_warmup_replicas`` at a time) and a
*probing rebalance* later, once it has caught up; when the assignment is balanced the leader
stops probing. The KIP leaves the algorithm open and fixes six required properties
("Assignment Algorithm" #1-#6); the phases below meet them.

0. **Settled?** (#5) A valid, balanced current assignment with every stateful active on a
   most-caught-up member and the right standby count is returned unchanged, warmups dropped,
   ``probing_rebalance`` false
   (:mod:`~rebalproof.model.assignors.ha_settle`).
1. **Target** -- the balanced layout to move towards, an exact lexicographic optimum: most
   caught-up members first, then members with state, then current owners, then a round-robin
   tie-break (:mod:`~rebalproof.model.assignors.ha_target`, which also gives the convergence
   argument: at most ``ceil(stateful tasks / max_warmup_replicas) + 1`` rebalances after one
   added instance).
2. **Stateful actives** (#1) on most-caught-up members, the target one when it is ready.
3. **Standbys** (#2) ``min(num_standby_replicas, members - 1)`` per stateful task on the next
   most caught-up members, never two copies of a task on one member, none for stateless tasks.
4. **Warmups** (#3) for target members still without a copy, at most ``max_warmup_replicas``.
5. **Stateless actives** (#4, #6) packed last around the stateful ones, sticky.
6. **Probing** -- a settled result drops its warmups and asks for no probing rebalance;
   otherwise ``probing_rebalance`` is true exactly while the result is not the target and a
   copy towards it is being restored (a warmup, or a target member's cold standby).

Abstraction choices: KIP-441 has no ``leaving`` tag, so ``ha`` ignores it (a leaving member is
assigned like any other; pair ``ha`` with a protocol that removes members instead). The
leader's memory (``previous_members``) is not used: KIP-441 decides from reported lags alone.
With ``max_warmup_replicas = 0`` (below KIP-441's minimum of 1) a move that needs a warmup never
starts; ``ha`` then stops probing with the assignment as balanced as the ready members allow.
Ties are broken by natural id, so ``ha`` is deterministic but not equivariant under renaming.

Examples
--------
Seed 002 "Scaling Out": I3 joins; the actives stay where they are ready and I3 warms up T1
and T3 (the two extra copies), then takes T3 over once caught up.

>>> from rebalproof.model.view import Config, Member, RebalanceInput, Task
>>> caught_up = {"T1": 0, "T2": 0, "T3": 0}
>>> view = RebalanceInput(
...     config=Config(num_standby_replicas=1, max_warmup_replicas=2),
...     tasks=tuple(Task(id=t) for t in ("T1", "T2", "T3")),
...     members=(Member(id="I1", active=("T1", "T3"), standby=("T2",), lags=caught_up),
...              Member(id="I2", active=("T2",), standby=("T1", "T3"), lags=caught_up),
...              Member(id="I3")))
>>> first = assign(view)
>>> first.of("I1").active, first.of("I3").warmup, first.probing_rebalance
(('T1', 'T3'), ('T1', 'T3'), True)
"""

from __future__ import annotations

from rebalproof.model.assignment import Assignment
from rebalproof.model.assignors import Assignor, AssignorInfo, register
from rebalproof.model.assignors.ha_round import pack_stateless, place_actives, place_standbys, place_warmups
from rebalproof.model.assignors.ha_settle import current_if_settled, is_settled, layout
from rebalproof.model.assignors.ha_target import Target, plan_target
from rebalproof.model.assignors.order_memo import OrderMemo
from rebalproof.model.ranking import is_caught_up
from rebalproof.model.view import RebalanceInput

__all__ = ["assign", "make", "INFO", "restoring_towards_target"]


def assign(view: RebalanceInput) -> Assignment:
    """The KIP-441 assignment of ``view`` (see the module docstring for the phases)."""
    if not view.members:
        return Assignment()
    current = current_if_settled(view)
    if current is not None:
        return current
    target = plan_target(view)
    actives = place_actives(view, target)
    standbys = place_standbys(view, actives, target)
    warmups = place_warmups(view, actives, standbys, target)
    all_actives = {**actives, **pack_stateless(view, actives)}
    result = layout(view, all_actives, standbys)
    if is_settled(view, result):
        return result
    at_target = not any(warmups.values()) and all(
        actives[t] == target.active_of(t) and set(standbys[t]) == set(target.standbys_of(t))
        for t in view.stateful_task_ids
    )
    probing = not at_target and restoring_towards_target(view, target, actives, standbys, warmups)
    return layout(view, all_actives, standbys, warmups, probing_rebalance=probing)


def restoring_towards_target(
    view: RebalanceInput,
    target: Target,
    actives: dict[str, str],
    standbys: dict[str, tuple[str, ...]],
    warmups: dict[str, tuple[str, ...]],
) -> bool:
    """True when the round places a copy on a target member that still has to catch up.

    That is a warmup, or an active or standby on a target member that is not caught up yet
    for a task not at its target: restoring it is what a probing rebalance waits for.
    """
    if any(warmups.values()):
        return True
    for task_id in view.stateful_task_ids:
        if actives[task_id] == target.active_of(task_id) and set(standbys[task_id]) == set(target.standbys_of(task_id)):
            continue
        for member in (actives[task_id], *standbys[task_id]):
            if member in target.holders(task_id) and not is_caught_up(view, member, task_id):
                return True
    return False


def make() -> Assignor:
    """The ``ha`` assignor; it takes no options. Its answers are memoised by shape
    (:class:`~rebalproof.model.assignors.order_memo.OrderMemo`): ``ha`` compares member ids and
    does nothing else with them, so a view renamed keeping the ids' order gets the answer
    renamed alike."""
    return OrderMemo(assign)


INFO = register(
    AssignorInfo(
        name="ha",
        summary="KIP-441: actives to most caught-up instances, standbys next, warmups towards a balanced target, probing until balanced",
        seed="002 Proposed Assignment/Rebalance Algorithm",
        make=make,
        rules="ha",
        equivariant=False,
    )
)
