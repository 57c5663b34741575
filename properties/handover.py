"""``learner-handover``: under KIP-429 an active leaves its owner only for a member ready for it.

KIP-429 (seed 001), "Version 1.0, Scale Up Running Application": "The newly joined workers will
be assigned with learner tasks by the group leader and they will replay the corresponding
changelogs on local first. By the end of first round of rebalance, there is no "real ownership
transfer". When new member finally finishes the replay task, it will re-attempt to join the
group to indicate that it is "ready" to take on real active tasks. During second rebalance, the
leader will eventually transfer the task ownership." Its algorithm assigns active tasks "To
instances with learner tasks that indicate "ready"", then "To previous owners", and only then
"To unready learner tasks owners"; and "every task assignment during rebalance will adhere to
the rule "if given task is currently active, reassignment must happen only to workers who are
declared ready to serve this task."" (seed 001, "Scale Up From Empty Group").

So a stateful active held going in stays with its owner, or goes to a member ready for it: one
caught up on it (its copy within ``acceptable_recovery_lag``: a ready learner, a caught-up
standby, whose ``isReady`` tag says so, or state it still has on disk).
Handing it to a member that must restore first, an unready learner included, is the
stop-the-world move KIP-429 exists to avoid.

Abstraction choices:

- *Ready is caught up*: the seeds tell readiness by the member's own report ("ready" after the
  replay; ``isReady``); the leader's view reports it as a lag within ``acceptable_recovery_lag``.
  A caught-up copy in any role, or caught-up state held in none (a task revoked at this join),
  restores nothing.
- *Unready learners* take the task only after the previous owner (the algorithm's order): that
  is when no owner holds it going in, which is not judged here. Until 2026-11 this property
  accepted any copy going in, a learner not ready yet included; red team 3's
  ``learner_unready_promoted`` passed that way.
- *Leaving owners* are judged too: a leaving member's actives are currently active until it
  revokes them, and the seed hands them over through learners: "it is also favorable to
  initiate learner tasks before actually shutting down the instances", and "the leaving member
  will shut down itself once received the instruction to revoke all its active tasks" (seed 001,
  "Scale Down Running Application"). Once it is cut off (v2's scale-down timeout) it is no
  owner any more. Until 2026-11 leaving owners were not judged; red team 3's
  ``leaving_handed_over_cold`` (a leaving member's actives straight to members with no state)
  passed that way.
- *Owners the view cannot show*: the learner protocol's owners revoke a task being learned at
  the join, so the view lists no active for it; the run property ``ready-handover`` judges those
  from the state before the join.
- Stateless tasks are not judged: "there is nothing to learn" (seed 001, "Scale Up From Scratch").

Examples
--------
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_0"),), members=(Member(id="I1", active=("0_0",), lags={"0_0": 0}), Member(id="I2")))
>>> learner_handover(view, Assignment.build({"I1": {}, "I2": {"active": ["0_0"]}})).message
'task 0_0 is taken from I1 and given to I2, which is not ready for it (no local state)'
>>> learner_handover(view, Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"warmup": ["0_0"]}})).status.value
'holds'
>>> unready = view.replace(members=(view.members[0], Member(id="I2", warmup=("0_0",), lags={"0_0": 10001})))
>>> learner_handover(unready, Assignment.build({"I1": {}, "I2": {"active": ["0_0"]}})).message
'task 0_0 is taken from I1 and given to I2, which is not ready for it (rank 10001)'
"""

from __future__ import annotations

from rebalproof.model.assignment import Assignment
from rebalproof.model.names import sorted_ids
from rebalproof.model.ranking import is_caught_up, rank
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.common import plural, problems_verdict, treated_as_leaving
from rebalproof.properties.lag import rank_text

__all__ = ["learner_handover", "handover_owners", "orphan_holders", "orphan_to_copy"]


def handover_owners(view: RebalanceInput, task_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the owners of stateful ``task_id`` going in, the members it may not go to while none keeps it).

    Both empty when no member held the task active going in (then nothing is judged).
    The members refused are the others not ready for it: not caught up on it (local state within
    ``acceptable_recovery_lag``, in any role or none), so they would restore before processing;
    an owner may always keep it, restoring or not.
    The one reading of the rule: the property, the solver's plain checker and its Z3 encoding all
    take it from here.
    """
    kept = tuple(m.id for m in view.members if task_id in m.active)
    if not kept or not view.task(task_id).stateful:
        return (), ()
    return kept, tuple(m.id for m in view.members if m.id not in kept and not is_caught_up(view, m.id, task_id))


def learner_handover(view: RebalanceInput, assignment: Assignment):
    """No stateful active goes from its owner to a member not ready for it (not caught up on it)."""
    problems, tasks, members, judged = [], [], [], 0
    for task_id in view.stateful_task_ids:
        kept, refused = handover_owners(view, task_id)
        if not kept:
            continue
        judged += 1
        after = set(assignment.actives_of(task_id))
        if after & set(kept):  # kept by an owner; a second active is one-active's business
            continue
        for member in sorted_ids(after & set(refused)):
            problems.append(
                f"task {task_id} is taken from {', '.join(kept)} "
                f"and given to {member}, which is not ready for it ({rank_text(rank(view, member, task_id))})"
            )
            tasks.append(task_id)
            members.extend([member, *kept])
    return problems_verdict(
        "learner-handover", problems, tasks, members,
        f"{plural(judged, 'stateful active')} kept by its owner or handed to a member ready for it",
        measure={"judged": judged},
    )


def orphan_holders(view: RebalanceInput, task_id: str) -> tuple[str, ...]:
    """The staying members holding a copy (learner or standby) of stateful ``task_id`` when its
    owner is gone; empty when the task is not judged (see :func:`orphan_to_copy`).

    The one reading of the rule: the property, the solver's plain checker and its Z3 encoding
    all take it from here.
    """
    if not view.task(task_id).stateful:
        return ()
    if any(task_id in m.active or (task_id not in m.copies and m.lag(task_id) is not None) for m in view.members):
        return ()  # an owner going in, or state in no role: a revoked owner (restoring or not) or stale state
    leaving = treated_as_leaving(view)
    return tuple(m.id for m in view.members if m.id not in leaving and task_id in m.copies)


def orphan_to_copy(view: RebalanceInput, assignment: Assignment):
    """A stateful task whose owner is gone goes to a staying member holding a copy of it, when one
    does (KIP-429's order: "To unready learner tasks owners", "To instances with standby tasks",
    and only then "To resource available instances").

    Judged only where the view shows no owner at all: no member lists the task active, and none
    reports state for it in no role (a learner-protocol owner revokes a task being learned at the
    join, so state in no role may be its owner, caught up or still restoring, or stale state on
    disk; a view cannot tell them apart). A copy in any role counts (labels decide nothing), and
    a ready learner is one (``learner-takes-over`` asks that one of those take it).
    """
    problems, tasks, members, judged = [], [], [], 0
    for task_id in view.stateful_task_ids:
        holders = orphan_holders(view, task_id)
        if not holders:
            continue
        judged += 1
        after = sorted_ids(assignment.actives_of(task_id))
        if not after or set(after) & set(holders):  # no active at all is one-active's business
            continue
        # a member it goes to that holds a copy is leaving: a staying one would be among the holders
        held = [m for m in after if view.has_member(m) and task_id in view.member(m).copies]
        why = f"which {'is' if len(after) == 1 else 'are'} leaving (a copy there counts for nothing)" if held else "which holds none"
        problems.append(
            f"task {task_id} has no owner going in and a copy on {', '.join(holders)}, "
            f"but its active goes to {', '.join(after)}, {why}"
        )
        tasks.append(task_id)
        members.extend([*after, *holders])
    return problems_verdict(
        "orphan-to-copy", problems, tasks, members,
        f"{plural(judged, 'stateful task')} with no owner going in given to a member holding a copy of it",
        measure={"judged": judged},
    )
