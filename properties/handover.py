"""``learner-handover``: under KIP-429 an active leaves a staying owner only for a member that learned it.

KIP-429 (seed 001), "Version 1.0, Scale Up Running Application": "The newly joined workers will
be assigned with learner tasks by the group leader and they will replay the corresponding
changelogs on local first. By the end of first round of rebalance, there is no "real ownership
transfer". When new member finally finishes the replay task, it will re-attempt to join the
group to indicate that it is "ready" to take on real active tasks. During second rebalance, the
leader will eventually transfer the task ownership." Its algorithm assigns active tasks "To
instances with learner tasks that indicate "ready"", then "To previous owners".

So a stateful active held going in by a member that is not leaving stays there, or goes to a
member that held a copy of the task going in (a learner, or a standby: KIP-429 turns standbys
into learners). Handing it to a member with no copy at all is the stop-the-world move KIP-429
exists to avoid: the new owner must restore the whole state before processing.

Abstraction choices:

- *Caught-up state counts as a copy*: a member reporting the task within
  ``acceptable_recovery_lag`` (a task it revoked at this join, say) restores nothing, as
  ``staying-learners`` reads it.
- *Any copy going in*, not only a ready learner: readiness is a lag, and the seeds also let an
  unready learner's owner take the task when its previous owner is gone; the weaker reading
  judges no choice the algorithm's order leaves open.
- *Leaving owners* hand everything over (KIP-429 v2 ``isLeaving``): not judged. When every
  member is leaving, nobody counts as leaving.
- Stateless tasks are not judged: "there is nothing to learn" (seed 001, "Scale Up From Scratch").

Examples
--------
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_0"),), members=(Member(id="I1", active=("0_0",), lags={"0_0": 0}), Member(id="I2")))
>>> learner_handover(view, Assignment.build({"I1": {}, "I2": {"active": ["0_0"]}})).message
'task 0_0 is taken from I1, which stays, and given to I2, which held no copy of it (no learner)'
>>> learner_handover(view, Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"warmup": ["0_0"]}})).status.value
'holds'
"""

from __future__ import annotations

from rebalproof.model.assignment import Assignment
from rebalproof.model.names import sorted_ids
from rebalproof.model.ranking import is_caught_up
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.common import plural, problems_verdict, staying_members

__all__ = ["learner_handover", "handover_owners"]


def handover_owners(view: RebalanceInput, task_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the staying owners of stateful ``task_id`` going in, the members it may not go to while none keeps it).

    Both empty when no staying member held the task active going in (then nothing is judged).
    The members refused are those that held no copy of it going in and are not caught up on it
    (local state within ``acceptable_recovery_lag``, as a task revoked at this join leaves: no
    restore, so no stop-the-world move). The one reading of the rule:
    the property, the solver's plain checker and its Z3 encoding all take it from here.
    """
    staying = set(staying_members(view)) or set(view.member_ids)
    kept = tuple(m.id for m in view.members if task_id in m.active and m.id in staying)
    if not kept or not view.task(task_id).stateful:
        return (), ()
    return kept, tuple(m.id for m in view.members if task_id not in m.copies and not is_caught_up(view, m.id, task_id))


def learner_handover(view: RebalanceInput, assignment: Assignment):
    """No stateful active goes from a staying owner to a member that held no copy of it going in."""
    problems, tasks, members, judged = [], [], [], 0
    for task_id in view.stateful_task_ids:
        kept, refused = handover_owners(view, task_id)
        if not kept:
            continue
        judged += 1
        after = set(assignment.actives_of(task_id))
        if after & set(kept):  # kept by a staying owner; a second active is one-active's business
            continue
        for member in sorted_ids(after & set(refused)):
            problems.append(
                f"task {task_id} is taken from {', '.join(kept)}, which {'stays' if len(kept) == 1 else 'stay'}, "
                f"and given to {member}, which held no copy of it (no learner)"
            )
            tasks.append(task_id)
            members.extend([member, *kept])
    return problems_verdict(
        "learner-handover", problems, tasks, members,
        f"{plural(judged, 'stateful active')} of staying owners kept or handed to a member that learned it",
        measure={"judged": judged},
    )
