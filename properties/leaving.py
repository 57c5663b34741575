"""``staying-learners``: under KIP-429, learners go to members that are staying, never to one leaving.

KIP-429 (seed 001, "Scale Down"): members told that a shutdown is on the way "send join group
request to indicate that they are 'leaving soon'. During rebalance assignment, leader will
perform the learner assignment among members without intention of leaving." A learner is a
copy that must restore its state first, so a member marked leaving is given no copy beyond the
active (standby or warmup role alike: the label decides nothing, :mod:`rebalproof.properties.common`
"Labels") of a stateful task that it did not hold going in and is not caught up on. What it
held, or has caught-up state for (a task it revoked at this join, KIP-429's being-learned
revocation), is no learning. An active is not a learner (KIP-429 v2 keeps a leaving member's
actives until their learners are ready), and a stateless task has nothing to learn.

When every member is leaving, none is "without intention of leaving", so nobody is treated as
leaving (someone must run the tasks), as :mod:`rebalproof.model.assignors.learner` does.

Promised by the ``learner`` rules only: KIP-441 and the sticky baseline know no leaving members,
and an assignor of theirs may treat one as an ordinary member (docs/DESIGN.md, "Choices that
hold for every property").

Examples
--------
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_0"),), members=(Member(id="I1", active=("0_0",), lags={"0_0": 0}), Member(id="I2", leaving=True), Member(id="I3")))
>>> staying_learners(view, Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"warmup": ["0_0"]}, "I3": {}})).message
'I2 is leaving but is given a learner of 0_0 (a copy it did not hold and is not caught up on)'
"""

from __future__ import annotations

from rebalproof.model.assignment import Assignment
from rebalproof.model.names import id_key, sorted_ids
from rebalproof.model.ranking import is_caught_up
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.common import problems_verdict
from rebalproof.properties.verdict import Verdict

__all__ = ["staying_learners"]


def staying_learners(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """No member marked leaving is given a learner (see the module doc)."""
    leaving = [m for m in view.members if m.leaving]
    if len(leaving) == len(view.members):
        leaving = []
    problems, tasks, members = [], [], []
    for member in sorted(leaving, key=lambda m: id_key(m.id)):
        given = assignment.of(member.id)
        learners = sorted_ids(
            {
                t
                for t in given.standby + given.warmup
                if view.has_task(t) and view.task(t).stateful and t not in given.active
                and t not in member.copies and not is_caught_up(view, member.id, t)
            }
        )
        if learners:
            copies = f"{'a learner' if len(learners) == 1 else 'learners'} of {', '.join(learners)}"
            problems.append(f"{member.id} is leaving but is given {copies} (a copy it did not hold and is not caught up on)")
            tasks.extend(learners)
            members.append(member.id)
    said = "no member is leaving" if not leaving else f"no learner on {', '.join(sorted_ids(m.id for m in leaving))}, which {'is' if len(leaving) == 1 else 'are'} leaving"
    return problems_verdict("staying-learners", problems, tasks, members, said)
