"""``learners-kept``: under KIP-429 a learner still restoring keeps its task while the owner keeps it.

KIP-429 (seed 001), "Algorithm incremental-rebalancing": after the actives are assigned, "Keep
existing learner tasks' assignment unchanged", and only then "Pick new learner tasks out of
heaviest loaded instances". Its scenarios keep an unready learner from round to round ("Scale
Down Running Application", second rebalance: "S1 is not ready yet" and keeps "learning: [T3]"
while S2 keeps T3), and a learner whose task lost its owner takes the task ("Leader Transfer
During Scaling": "S4 is learning T1 which has no current active task"). An assignor that drops
or re-picks its learners at each rebalance throws away the replay KIP-429 waits for, and a
scale-up or scale-down that keeps re-learning never ends.

The reading (:func:`kept_learners`, the one the solver's rule and its Z3 encoding use too):

- *Judged*: a stateful task whose active, in the answer, stays with a member that owned it going
  in: one holding it as active, or, when none does, one caught up on it with no copy in any list
  (the learner protocol's owners revoke a task being learned at the join, seed 001, and keep its
  state; state that fell behind is read as old state on disk, not an owner's).
  A task handed to its learner, to another member or to nobody is not judged here
  (``learner-handover`` and ``one-active`` judge those).
- *Its learners going in*: copies beyond the active on members not marked leaving, not caught up
  on the task (a ready learner takes the active, "To instances with learner tasks that indicate
  ready", so one left aside is the assignor's choice). Labels decide nothing (KIP-429: a learner
  is "a special standby task"; :mod:`rebalproof.properties.common`, "Labels"): of the task's
  copies going in, the caught-up ones fill its standby slots
  (:func:`~rebalproof.properties.common.standby_allowance`) first, and restoring copies that may
  still be standbys are not asked to stay. So a task is judged only when more restoring copies
  sit on staying members than its slots left over: at least one of them is a learner.
- *Kept*: at least one of those members still holds the task, in any role (a learner relabelled
  a standby restores the same changelog). One, not every one: an assignor may keep one learner
  per task, and the seeds never give a task two.
- *A bound an implementation may honour*: KIP-429 puts no bound on learners, but the view carries
  KIP-441's ``max_warmup_replicas``; an assignor that keeps at most that many learners is not
  wrong for it. So as many tasks may lose their learners as there are learners going in (by
  count, over every task) beyond ``max_warmup_replicas`` (:func:`droppable`); with fewer going
  in, none may (red team 5's capped learner assignor, on a view with three learners and a bound
  of two).
- Leaving members are not judged: learning happens "among members without intention of
  leaving" (seed 001, "Scale Down Running Application"). Stateless tasks have nothing to learn.

Examples
--------
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_0"),), members=(
...     Member(id="I1", active=("0_0",), lags={"0_0": 0}), Member(id="I2", warmup=("0_0",), lags={"0_0": 20000}), Member(id="I3")))
>>> learners_kept(view, Assignment.build({"I1": {"active": ["0_0"]}, "I2": {}, "I3": {"warmup": ["0_0"]}})).message
'task 0_0 stays with I1 but its learner on I2 (rank 20000) is dropped before it is ready'
>>> learners_kept(view, Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"standby": ["0_0"]}, "I3": {}})).status.value
'holds'
"""

from __future__ import annotations

from rebalproof.model.assignment import Assignment
from rebalproof.model.names import sorted_ids
from rebalproof.model.ranking import is_caught_up, rank
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.common import plural, problems_verdict, shown_as_owner, standby_allowance, words
from rebalproof.properties.lag import rank_text
from rebalproof.properties.verdict import Verdict

__all__ = ["learners_kept", "kept_learners", "learners_going_in", "droppable", "learner_takes_over", "ready_learners"]


def _restoring(view: RebalanceInput, task_id: str) -> tuple[tuple[str, ...], int]:
    """(the members not leaving with a copy of ``task_id`` going in that must restore, how many of those are learners by count)."""
    replicas = [m for m in view.members if task_id not in m.active and (task_id in m.standby or task_id in m.warmup)]
    restoring = sorted_ids(m.id for m in replicas if not m.leaving and not is_caught_up(view, m.id, task_id))
    # the restoring copies fill the standby slots first: a caught-up copy beside them may be the
    # learner ("When performing learner assignment, we shall prioritize workers which currently
    # have standby tasks that match learner assignment", seed 001), ready, which an owner need
    # not wait for (red team 9: the built-in assignor dropped a restoring standby beside a
    # caught-up one and was faulted, as was an independent assignor using the caught-up standby)
    return restoring, max(0, len(restoring) - standby_allowance(view))


def kept_learners(view: RebalanceInput, task_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the owners of stateful ``task_id`` going in, the members of which one must keep it while an owner does).

    Both empty when the task is not judged: stateless, no owner going in, or no more restoring
    copies on staying members than the standby slots the caught-up copies leave (module doc).
    """
    if not view.task(task_id).stateful:
        return (), ()
    # its active holders; with none, the members whose caught-up state (reported) shows them revoked at the join
    owners = view.owners(task_id) or tuple(m.id for m in view.members if m.lag(task_id) is not None and shown_as_owner(view, m.id, task_id))
    restoring, learners = _restoring(view, task_id)
    if not owners or not learners:
        return (), ()
    return sorted_ids(owners), restoring


def learners_going_in(view: RebalanceInput) -> int:
    """The learners going in, by count, over every stateful task (module doc)."""
    return sum(_restoring(view, t)[1] for t in view.stateful_task_ids)


def droppable(view: RebalanceInput) -> int:
    """How many tasks may lose their learners while an owner keeps them: the learners going in beyond ``max_warmup_replicas``."""
    return max(0, learners_going_in(view) - view.config.max_warmup_replicas)


def learners_kept(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """While an owner keeps a stateful task, one of its restoring learners keeps it too (module doc)."""
    dropped, judged = [], 0
    for task_id in view.stateful_task_ids:
        owners, learners = kept_learners(view, task_id)
        staying_with = [m for m in owners if task_id in assignment.of(m).active]
        if not staying_with:
            continue
        judged += 1
        if not any(task_id in assignment.of(m).copies for m in learners):
            dropped.append((task_id, staying_with, learners))
    allowed = droppable(view) if dropped else 0
    problems, tasks, members = [], [], []
    if len(dropped) > allowed:
        for task_id, staying_with, learners in dropped:
            where = words([f"{m} ({rank_text(rank(view, m, task_id))})" for m in learners])
            lost = "its learner on {} is dropped before it is ready" if len(learners) == 1 else "its learners on {} are all dropped before they are ready"
            problems.append(f"task {task_id} stays with {words(staying_with)} but {lost.format(where)}")
            tasks.append(task_id)
            members.extend([*learners, *staying_with])
        if allowed:
            problems.append(f"{len(dropped)} tasks lose their learners, more than the {allowed} of the {learners_going_in(view)} learners "
                            f"going in beyond max_warmup_replicas {view.config.max_warmup_replicas}")
    return problems_verdict(
        "learners-kept", problems, tasks, sorted_ids(set(members)),
        f"{plural(judged, 'task')} its owner keeps still learned by a restoring learner"
        + (f" ({plural(len(dropped), 'learner')} dropped, within the {allowed} beyond max_warmup_replicas)" if dropped else ""),
        measure={"judged": judged},
    )


def ready_learners(view: RebalanceInput, task_id: str) -> tuple[str, ...]:
    """The members not leaving that hold stateful ``task_id`` as a learner (the ``warmup`` role), not as
    its active, and are caught up on it: its ready learners, who take its active first (module doc
    of :func:`learner_takes_over`)."""
    if not view.task(task_id).stateful:
        return ()
    return sorted_ids(m.id for m in view.members if not m.leaving and task_id in m.warmup and task_id not in m.active
                      and is_caught_up(view, m.id, task_id))


def learner_takes_over(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """A stateful task with a ready learner gets its active from one of its ready learners.

    KIP-429 (seed 001), "Algorithm incremental-rebalancing": "Assign active tasks: (if any) To
    instances with learner tasks that indicate "ready"", before "To previous owners"; "Scale Up
    Running Application": "When new member finally finishes the replay task, it will re-attempt to
    join the group to indicate that it is "ready" to take on real active tasks. During second
    rebalance, the leader will eventually transfer the task ownership."

    - *Ready learner*: a copy in the ``warmup`` role (KIP-429's ``isLearner`` tag; a standby is
      not a learner) of a stateful task, on a member not marked leaving, caught up on it
      (``isReady``: lag within ``acceptable_recovery_lag``). *The label decides*, as in
      ``staying-learners``: a caught-up standby beside its owner is no move in progress.
    - Any one of several ready learners may take it.
    - Found missing: a learner assignor that never promotes its ready learners kept every
      property on ``--protocol learner:leaving=false`` (two witnesses undecided, exit 0); with
      leaving members only ``scale-down-completes`` caught it.

    >>> from rebalproof.model.view import Member, Task
    >>> view = RebalanceInput(tasks=(Task(id="0_0"),), members=(
    ...     Member(id="I1", active=("0_0",), lags={"0_0": 0}), Member(id="I2", warmup=("0_0",), lags={"0_0": 5})))
    >>> learner_takes_over(view, Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"warmup": ["0_0"]}})).message
    'task 0_0 has a ready learner on I2 but its active goes to I1'
    >>> learner_takes_over(view, Assignment.build({"I1": {"standby": ["0_0"]}, "I2": {"active": ["0_0"]}})).status.value
    'holds'
    """
    problems, tasks, members, judged = [], [], [], 0
    for task_id in view.stateful_task_ids:
        ready = ready_learners(view, task_id)
        if not ready:
            continue
        judged += 1
        given = sorted_ids(assignment.actives_of(task_id))
        if set(given) & set(ready):
            continue
        where = f"goes to {words(given)}" if given else "goes nowhere"
        problems.append(f"task {task_id} has a ready learner on {words(ready)} but its active {where}")
        tasks.append(task_id)
        members.extend([*ready, *given])
    return problems_verdict(
        "learner-takes-over", problems, tasks, sorted_ids(set(members)),
        f"{plural(judged, 'task')} with a ready learner taken over by one",
        measure={"judged": judged},
    )
