"""``learners-kept`` (KIP-429 "Keep existing learner tasks' assignment unchanged").

Found missing by red team 5: ``drop_learners`` (learners re-picked at each rebalance) and
``learner_hop`` (an unready learner moved on by name order) kept every per-rebalance property;
only a long run's ``converges`` caught the second. The property judges the answer itself.
"""

from __future__ import annotations

import pytest

from rebalproof.model.assignment import Assignment
from rebalproof.model.view import Config, Member, RebalanceInput, Task
from rebalproof.properties import RULE_SETS, Status, check_assignment
from rebalproof.properties.learners import kept_learners, learners_kept
from rebalproof.solver.optimize import optimal
from rebalproof.solver.oracle import conforms
from rebalproof.solver.rules import OWN_RULES, violations

BEHIND = 20000  # above the default acceptable_recovery_lag (10000)


def view_of(members, tasks=("0_0", "0_1"), **config) -> RebalanceInput:
    return RebalanceInput(config=Config(**config), tasks=tuple(Task(id=t.lstrip("~"), stateful=not t.startswith("~")) for t in tasks),
                          members=tuple(Member(**m) for m in members))


def answer(**members) -> Assignment:
    """``answer(I1="0_0 +0_1 ~0_2")``: plain ids active, ``+`` standby, ``~`` warmup."""
    held = {}
    for m, words in members.items():
        roles = {"active": [], "standby": [], "warmup": []}
        for word in words.split():
            roles[{"+": "standby", "~": "warmup"}.get(word[0], "active")].append(word.lstrip("+~"))
        held[m] = roles
    return Assignment.build(held)


# the seed's Scale Down, second rebalance (shortened): S2 leaving owns T3, S1 is learning it and not ready
SCALE_DOWN = [dict(id="S1", active=("0_0",), warmup=("0_1",), lags={"0_0": 0, "0_1": BEHIND}),
              dict(id="S2", leaving=True, active=("0_1",), lags={"0_1": 0}),
              dict(id="S3")]


def test_an_unready_learner_is_kept_while_its_owner_keeps_the_task():
    view = view_of(SCALE_DOWN)
    assert kept_learners(view, "0_1") == (("S2",), ("S1",))
    assert learners_kept(view, answer(S1="0_0 ~0_1", S2="0_1", S3="")).holds  # the seed's answer
    dropped = learners_kept(view, answer(S1="0_0", S2="0_1", S3=""))
    assert dropped.violated and dropped.tasks == ("0_1",) and dropped.members == ("S1", "S2"), dropped.message
    assert dropped.message == "task 0_1 stays with S2 but its learner on S1 (rank 20000) is dropped before it is ready"
    hopped = learners_kept(view, answer(S1="0_0", S2="0_1", S3="~0_1"))  # learner_hop: moved on to S3
    assert hopped.violated
    # any role keeps it (a learner relabelled a standby restores the same changelog)
    assert learners_kept(view, answer(S1="0_0 +0_1", S2="0_1", S3="")).holds


def test_nothing_is_judged_where_the_seeds_leave_the_learner_free():
    view = view_of(SCALE_DOWN)
    # the task goes elsewhere: to its learner (one-active/learner-handover judge that), or to another member
    for other in (answer(S1="0_0 0_1", S2="", S3=""), answer(S1="0_0", S2="", S3="0_1")):
        assert learners_kept(view, other).holds
    # a ready learner left aside is the assignor's choice (a ready one takes the active first)
    ready = view_of([dict(SCALE_DOWN[0], lags={"0_0": 0, "0_1": 5}), *SCALE_DOWN[1:]])
    assert kept_learners(ready, "0_1") == ((), ())
    # a learner on a member now leaving
    leaving = view_of([dict(SCALE_DOWN[0], leaving=True), *SCALE_DOWN[1:]])
    assert kept_learners(leaving, "0_1") == ((), ())
    # a stateless task has nothing to learn
    stateless = view_of([dict(id="I1", active=("0_0",)), dict(id="I2", warmup=("0_0",))], tasks=("~0_0",))
    assert kept_learners(stateless, "0_0") == ((), ())


def test_labels_decide_nothing_a_restoring_copy_in_a_standby_slot_may_go():
    members = [dict(id="I1", active=("0_0",), lags={"0_0": 0}), dict(id="I2", standby=("0_0",), lags={"0_0": BEHIND}), dict(id="I3")]
    # one standby slot and one restoring copy: it may be the task's standby, which need not stay
    slot = view_of(members, tasks=("0_0",), num_standby_replicas=1)
    assert kept_learners(slot, "0_0") == ((), ())
    relabelled = view_of([members[0], dict(members[1], standby=(), warmup=("0_0",)), members[2]], tasks=("0_0",), num_standby_replicas=1)
    assert kept_learners(relabelled, "0_0") == ((), ())
    # a caught-up standby beside it may be the learner ("we shall prioritize workers which
    # currently have standby tasks that match learner assignment", seed 001), so the restoring
    # copy may still be the standby and go (red team 9: the built-in learner assignor does so)
    ready = view_of([*members[:2], dict(id="I3", standby=("0_0",), lags={"0_0": 0})], tasks=("0_0",), num_standby_replicas=1)
    assert kept_learners(ready, "0_0") == ((), ())
    assert learners_kept(ready, answer(I1="0_0", I2="", I3="+0_0")).holds
    # two restoring copies and one slot: the one beyond it is a learner, whatever its label
    full = view_of([*members[:2], dict(id="I3", warmup=("0_0",), lags={"0_0": BEHIND})], tasks=("0_0",), num_standby_replicas=1)
    assert kept_learners(full, "0_0") == (("I1",), ("I2", "I3"))
    assert learners_kept(full, answer(I1="0_0", I2="", I3="")).violated
    # no slot: the restoring standby is a learner
    assert kept_learners(view_of(members, tasks=("0_0",)), "0_0") == (("I1",), ("I2",))


def test_one_learner_of_a_task_kept_is_enough():
    members = [dict(id="I1", active=("0_0",), lags={"0_0": 0}), dict(id="I2", warmup=("0_0",)), dict(id="I3", warmup=("0_0",))]
    view = view_of(members, tasks=("0_0",))
    assert kept_learners(view, "0_0") == (("I1",), ("I2", "I3"))
    assert learners_kept(view, answer(I1="0_0", I2="", I3="~0_0")).holds
    both = learners_kept(view, answer(I1="0_0", I2="", I3=""))
    assert both.message == "task 0_0 stays with I1 but its learners on I2 (no local state) and I3 (no local state) are all dropped before they are ready"


def test_a_revoked_owner_read_from_its_state_is_an_owner():
    """The learner protocol's owner revokes a task being learned at the join: it shows only as state."""
    members = [dict(id="I1", lags={"0_0": 0}), dict(id="I2", warmup=("0_0",), lags={"0_0": BEHIND})]
    view = view_of(members, tasks=("0_0",))
    assert kept_learners(view, "0_0") == (("I1",), ("I2",))
    assert learners_kept(view, answer(I1="0_0", I2="")).violated
    assert learners_kept(view, answer(I1="0_0", I2="~0_0")).holds


@pytest.mark.parametrize("good", [True, False])
def test_the_solver_rule_reads_as_the_property(good):
    view = view_of(SCALE_DOWN)
    out = answer(S1="0_0 ~0_1", S2="0_1", S3="") if good else answer(S1="0_0", S2="0_1", S3="")
    names = [v.name for v in violations(view, out, "learner")]
    assert ("learners-kept[0_1]" in names) == (not good) == learners_kept(view, out).violated
    assert all("learners-kept" not in v.name for r in ("sticky", "eager", "ha") for v in violations(view, out, r))


def test_promised_by_the_learner_rules_only():
    view = view_of(SCALE_DOWN)
    out = answer(S1="0_0", S2="0_1", S3="")
    by_rules = {r: next(v for v in check_assignment(view, out, rules=r) if v.property == "learners-kept").status for r in RULE_SETS}
    assert by_rules == {"sticky": Status.NOT_PROMISED, "eager": Status.NOT_PROMISED, "learner": Status.VIOLATED, "ha": Status.NOT_PROMISED}


def test_optimal_keeps_the_learner_and_proves_it():
    view = view_of(SCALE_DOWN)
    for engine in ("flow", "z3"):
        result = optimal(view, "learner", engine=engine)
        assert result.status == "optimal", result.reason
        assert "0_1" in result.assignment.of("S1").copies, result.assignment
        assert learners_kept(view, result.assignment).holds


def test_state_behind_with_no_copy_is_no_owner():
    """Old state on disk is not read as a revoked owner's: nothing is judged."""
    members = [dict(id="I1", lags={"0_0": BEHIND * 2}), dict(id="I2", warmup=("0_0",), lags={"0_0": BEHIND})]
    assert kept_learners(view_of(members, tasks=("0_0",)), "0_0") == ((), ())


def test_learners_beyond_max_warmup_replicas_may_go():
    """KIP-429 has no bound on learners, but an assignor may honour the view's max_warmup_replicas
    (red team 5's capped learner assignor): as many tasks may lose their learners as there are
    learners going in beyond it, no more."""
    members = [dict(id="I1", active=("0_0", "0_1", "0_2"), lags={"0_0": 0, "0_1": 0, "0_2": 0}),
               dict(id="I2", warmup=("0_0", "0_1", "0_2"))]
    view = view_of(members, tasks=("0_0", "0_1", "0_2"), max_warmup_replicas=2)
    one = answer(I1="0_0 0_1 0_2", I2="~0_0 ~0_1")
    assert learners_kept(view, one).holds
    assert conforms(view, one, "learner").holds
    # the solver's own answers keep them all (an own rule: not judged in another's answer)
    assert [v.name for v in violations(view, one, "learner")] == ["learners-all-kept[0_2]"]
    assert "learners-all-kept" in OWN_RULES
    best = optimal(view, "learner")
    assert best.status == "optimal" and best.assignment.of("I2").copies == ("0_0", "0_1", "0_2"), best.assignment
    two = answer(I1="0_0 0_1 0_2", I2="~0_0")
    verdict = learners_kept(view, two)
    assert verdict.violated and verdict.tasks == ("0_1", "0_2"), verdict.message
    assert "more than the 1 of the 3 learners going in beyond max_warmup_replicas 2" in verdict.message
    assert [v.name for v in violations(view, two, "learner")] == ["learners-kept", "learners-all-kept[0_1]", "learners-all-kept[0_2]"]
    assert conforms(view, two, "learner").violated
    # within the bound, none may go
    capped = view_of(members, tasks=("0_0", "0_1", "0_2"), max_warmup_replicas=3)
    assert learners_kept(capped, one).violated
    assert [v.name for v in violations(capped, one, "learner")] == ["learners-kept[0_2]"]


def _learning_view(members: int, tasks: int, learning: int) -> RebalanceInput:
    """Owners caught up on their actives, ``learning`` tasks each with one learner far behind, no standbys."""
    import random

    rng = random.Random(1)
    ids = [f"I{i + 1}" for i in range(members)]
    task_ids = [f"{i // 10}_{i % 10}" for i in range(tasks)]
    owner = {t: rng.choice(ids) for t in task_ids}
    learner = {t: rng.choice([m for m in ids if m != owner[t]]) for t in rng.sample(task_ids, learning)}
    return RebalanceInput(
        tasks=tuple(Task(id=t) for t in task_ids),
        members=tuple(Member(id=m, active=tuple(t for t in task_ids if owner[t] == m), warmup=tuple(t for t in learner if learner[t] == m),
                             lags={**{t: 0 for t in task_ids if owner[t] == m}, **{t: BEHIND for t in learner if learner[t] == m}}) for m in ids),
        previous_members=tuple(ids))


def test_optimal_under_the_learner_rules_answers_even_at_a_timeout():
    """The actives' objectives come from flow (the rule moves no active), the copies from the staged
    Z3 search started at that answer with its learners kept: out of time, that answer comes back,
    never nothing (the staged search alone had none to give at 50 x 500)."""
    view = _learning_view(10, 50, 5)
    for timeout in (0.001, 60):
        result = optimal(view, "learner", timeout=timeout)
        assert result.assignment is not None, result.reason
        assert violations(view, result.assignment, "learner") == ()
        assert [b.proven for b in result.objectives[:3]] == [True, True, True]
        assert result.values["restore"] == result.values["warmups"] == 5  # every learner kept, the solver's own rule
    assert result.status == "optimal"


def test_the_greedy_start_keeps_the_learners_too():
    """The anytime answer (a sticky greedy) gives learners their copies back, so the Z3 engine out of
    time also answers under the learner rules (it had none to give: the greedy dropped them)."""
    from rebalproof.solver.incumbent import Incumbent
    from rebalproof.solver.rules import Facts

    view = _learning_view(10, 50, 5)
    start = Incumbent(view, Facts(view, "learner"))
    assert start.answer is not None and start.source == "greedy"
    assert violations(view, start.answer, "learner") == ()
    result = optimal(view, "learner", timeout=0.001, engine="z3")
    assert result.assignment is not None and violations(view, result.assignment, "learner") == (), result.reason


# -- learner-takes-over (KIP-429: active tasks go to instances with ready learners first) -----------
def test_a_ready_learner_takes_its_task_over():
    from rebalproof.properties.learners import learner_takes_over, ready_learners

    members = [dict(id="I1", active=("0_0",), lags={"0_0": 0}), dict(id="I2", warmup=("0_0",), lags={"0_0": 5}), dict(id="I3", warmup=("0_0",), lags={"0_0": 7})]
    view = view_of(members, tasks=("0_0",))
    assert ready_learners(view, "0_0") == ("I2", "I3")
    stays = answer(I1="0_0", I2="~0_0", I3="")
    kept = learner_takes_over(view, stays)
    assert kept.violated and kept.tasks == ("0_0",) and kept.members == ("I1", "I2", "I3"), kept.message
    assert kept.message == "task 0_0 has a ready learner on I2 and I3 but its active goes to I1"
    for fine in (answer(I1="+0_0", I2="0_0", I3=""), answer(I1="", I2="", I3="0_0")):  # any ready learner
        assert learner_takes_over(view, fine).holds
    assert [v.name for v in violations(view, stays, "learner")] == ["learner-takes-over[0_0]"]
    # not ready, on a member leaving, a caught-up standby (not a learner), a stateless task: nothing to take over
    assert ready_learners(view_of([members[0], dict(members[1], lags={"0_0": BEHIND})], tasks=("0_0",)), "0_0") == ()
    assert ready_learners(view_of([members[0], dict(members[1], leaving=True)], tasks=("0_0",)), "0_0") == ()
    assert ready_learners(view_of([members[0], dict(members[1], warmup=(), standby=("0_0",))], tasks=("0_0",)), "0_0") == ()
    assert ready_learners(view_of([dict(id="I1", active=("0_0",)), dict(id="I2", warmup=("0_0",))], tasks=("~0_0",)), "0_0") == ()
    # optimal hands it over too, on both engines
    for engine in ("flow", "z3"):
        best = optimal(view, "learner", engine=engine)
        assert best.status == "optimal" and best.assignment.actives_of("0_0") in (("I2",), ("I3",)), (engine, best.assignment)


def test_a_learner_assignor_that_never_promotes_is_caught():
    """Without leaving members it passed every property (exit 0, two witnesses undecided): the ready
    learners sat beside their tasks for ever, and only scale-down-completes caught it with leaving ones."""
    from rebalproof.model.assignors.spec import resolve
    from rebalproof.model.group_bounds import Bounds
    from rebalproof.model.group_protocol import protocol
    from rebalproof.properties.run_check import check_model

    with resolve("py:tests.assignors.red5_learner:never_promote") as assignor:
        result = check_model(protocol=protocol("learner", leaving=False), assignor=assignor, bounds=Bounds(), rules="learner", symmetry=False, por=True)
    violated = {r.property.name for r in result.results if r.verdict.status.name == "VIOLATED"}
    assert violated == {"learner-takes-over"}, violated
