"""``staying-learners`` and ``stateless-at-once``: under KIP-429, learners go to members that are
staying, never to one leaving, and a leaving member's stateless tasks move at once.

KIP-429 (seed 001, "Scale Down"): members told that a shutdown is on the way "send join group
request to indicate that they are 'leaving soon'. During rebalance assignment, leader will
perform the learner assignment among members without intention of leaving." A learner is a
copy that must restore its state first, so a member marked leaving is given no learner (below)
of a stateful task that it did not hold going in and is not caught up on. What it
held, or has caught-up state for (a task it revoked at this join, KIP-429's being-learned
revocation), is no learning, with one exception: a copy it held other than as a learner (a
standby, or an active still restoring), still behind, tagged a learner (the ``warmup`` role) is
a learner assignment on it. An active it held is kept until its
learners are ready (KIP-429 v2), but an active it neither held nor has any state for must be
restored there from nothing (red team 9: an orphan dealt cold to a leaving member passed); state
in no role may be an owner that revoked the task at this join, still restoring, and is excused
(as ``orphan-to-copy`` reads it). The member
"will shut down itself once received the instruction to revoke all its active tasks". A
stateless task has nothing to learn.

Which copies are learners is the one place a label decides: KIP-429 defines a learner as "a
special standby task", told apart by its ``isLearner`` tag ("Task Tagging": "Indicate whether standby task is a learner task"), and the model's
learner protocol reads the ``warmup`` role so (owners revoke their being-learned tasks). So a
leaving member's new ``warmup`` copy is a learner. A new ``standby`` copy is not: the algorithm
assigns standbys in a step of its own ("Assign standby tasks: ... To resource available
instances"), which does not exclude leaving members. It is a learner only where the count
leaves no other reading: more new standbys on leaving members than the task's standby slots
(``min(num_standby_replicas, members - 1)``). Found by an independently written KIP-429
assignor that placed a standby on a leaving member while a staying member learned the task.

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
from rebalproof.properties.common import plural, problems_verdict, standby_allowance, treated_as_leaving, words
from rebalproof.properties.verdict import Verdict

__all__ = ["staying_learners", "stateless_at_once"]


def staying_learners(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """No member marked leaving is given a learner (see the module doc)."""
    treated = treated_as_leaving(view)
    leaving = [m for m in view.members if m.id in treated]
    slots = standby_allowance(view)
    learners: dict[str, list[str]] = {}  # member -> tasks given as learners (warmup role)
    tagged: dict[str, list[str]] = {}  # member -> copies it held (not as learners), behind, now tagged learners
    cold: dict[str, list[str]] = {}  # member -> actives it must restore first
    standbys: dict[str, list[str]] = {}  # task -> leaving members given it as a new standby
    for member in sorted(leaving, key=lambda m: id_key(m.id)):
        given = assignment.of(member.id)
        for t in sorted_ids(set(given.active + given.standby + given.warmup)):
            if not view.has_task(t) or not view.task(t).stateful or is_caught_up(view, member.id, t):
                continue
            if t in given.active:
                # no local state at all: state in no role may be an owner that revoked the task
                # being learned at this join, still restoring ("To previous owners"), which one
                # view cannot tell from stale state (as orphan-to-copy reads it)
                if t not in member.copies and member.lag(t) is None:
                    cold.setdefault(member.id, []).append(t)
            elif t not in member.copies and t in given.warmup:
                learners.setdefault(member.id, []).append(t)
            elif t not in member.copies:
                standbys.setdefault(t, []).append(member.id)
            elif t in given.warmup and t not in member.warmup:
                tagged.setdefault(member.id, []).append(t)
    problems, tasks, members = [], [], []
    for member in sorted_ids(set(learners) | set(tagged) | set(cold)):
        said = []
        if member in learners:
            ts = learners[member]
            said.append(f"{'a learner' if len(ts) == 1 else 'learners'} of {', '.join(ts)} "
                        f"(a copy it did not hold and is not caught up on)")
        if member in tagged:
            ts = tagged[member]
            said.append(f"{'a learner' if len(ts) == 1 else 'learners'} of {', '.join(ts)} "
                        f"(a copy it held, still behind, tagged to learn)")
        if member in cold:
            ts = cold[member]
            said.append(f"the {'active' if len(ts) == 1 else 'actives'} of {', '.join(ts)} "
                        f"(which it did not hold and has no state for: it must restore from nothing)")
        problems.append(f"{member} is leaving but is given {' and '.join(said)}")
        tasks.extend(learners.get(member, []) + tagged.get(member, []) + cold.get(member, []))
        members.append(member)
    for t in sorted_ids(standbys):
        over = len(standbys[t]) - slots  # the new standbys on leaving members take the task's standby slots first
        if over <= 0:
            continue
        who = standbys[t][0] if len(standbys[t]) == 1 else f"{'each' if over == len(standbys[t]) else 'one'} of {', '.join(standbys[t])}"
        problems.append(
            f"{who} {'is' if len(standbys[t]) == 1 else 'are'} leaving but {'is' if len(standbys[t]) == 1 else 'are'} given a standby of {t} "
            f"beyond the {plural(slots, 'standby')} the task may have: a copy to learn"
        )
        tasks.append(t)
        members.extend(standbys[t])
    said = "no member is leaving" if not leaving else (
        f"no new learner on {', '.join(sorted_ids(m.id for m in leaving))}, which {'is' if len(leaving) == 1 else 'are'} leaving "
        f"(copies held going in or caught up may stay)")
    return problems_verdict("staying-learners", problems, sorted_ids(set(tasks)), sorted_ids(set(members)), said)


def _learning_stages(view: RebalanceInput, assignment: Assignment) -> list[tuple[str, str]]:
    """(stateless task, member) for every copy of a stateless task beyond its active in the
    answer, whatever its label: seed 001, "For stateless tasks the ownership transfer should happen
    immediately without the need of a learning stage, because there is nothing to restore" (red
    team 9: a new member given a learner of a stateless task left on its owner passed)."""
    out = []
    for task_id in view.stateless_task_ids:
        for member, held in assignment.members:
            if task_id in held.standby or task_id in held.warmup:
                out.append((task_id, member))
    return sorted(out, key=lambda p: (id_key(p[0]), id_key(p[1])))


def stateless_at_once(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """No stateless task stays active on a leaving member while another member stays, and none
    gets a learning stage (a copy beyond its active) anywhere (module doc)."""
    leaving = sorted_ids(treated_as_leaving(view))
    stateless = view.stateless_task_ids
    staged = _learning_stages(view, assignment)
    kept = [(m, t) for m in leaving for t in sorted_ids(set(assignment.of(m).active)) if t in stateless]
    problems = [f"stateless task {t} gets a copy beyond its active on {m} (a learning stage): with nothing to restore, "
                f"its transfer happens at once" for t, m in staged]
    if leaving:
        staying = sorted_ids(m.id for m in view.members if not m.leaving)
        stay = f"{words(staying)} {'stays' if len(staying) == 1 else 'stay'}"
        problems += [f"stateless task {t} is left active on {m}, which is leaving, though {stay}: with nothing to restore it moves at once"
                     for m, t in kept]
        ok = f"no stateless task is left on {words(leaving)}, which {'is' if len(leaving) == 1 else 'are'} leaving ({plural(len(stateless), 'stateless task')} in all)"
    else:  # nobody leaving: nothing kept on a leaving member (kept is empty)
        ok = "every member is leaving (someone must run the tasks)" if view.members and all(m.leaving for m in view.members) else "no member is leaving"
    measure = {"kept_on_leaving": len(kept)}
    if staged:
        measure["learning_stages"] = len(staged)
    tasks = sorted_ids({t for _, t in kept} | {t for t, _ in staged})
    members = sorted_ids({m for m, _ in kept} | {m for _, m in staged})
    return problems_verdict("stateless-at-once", problems, tasks, members, ok, measure=measure)
