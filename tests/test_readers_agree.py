"""The readers of one rule agree, and no verdict depends on a choice the seeds leave open.

Each hard rule has up to three per-answer readers: the catalogue (:mod:`rebalproof.properties`,
``check_assignment``), the plain checker (:func:`rebalproof.solver.rules.violations`) and the
Z3 encoding behind :func:`rebalproof.solver.oracle.explain`. Differential: over small views
wider than ``test_solver_oracle``'s (up to 4 members of capacity 1 or 2, leaving members,
mixed lags, stateless tasks, warmups and standbys going in, previous members) and arbitrary
answers, (a) the instances the plain checker names are the ones ``explain`` names, and each
rule both readers have is broken for the plain checker exactly when the catalogue's verdict
of the same name is violated; (b) relabelling replicas standby <-> warmup, listing an answer's
tasks in another order, and renaming the members by an order-preserving renaming change no
verdict of either reader; (c) ``conforms`` holds exactly when no judged rule is broken (the
solver's own choices, ``stateless-replica``, ``leaving`` and the strict ``probing-rebalance``,
judge no other implementation).
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from hypothesis import given, note, settings
from hypothesis import strategies as st

from rebalproof.model.assignment import Assignment, MemberAssignment
from rebalproof.model.view import Config, Member, RebalanceInput, Task
from rebalproof.properties import check_assignment
from rebalproof.properties.catalogue import PER_ASSIGNMENT
from rebalproof.properties.run_rebalance import RebalanceJudge
from rebalproof.properties.verdict import Status
from rebalproof.solver.oracle import conforms, explain
from rebalproof.solver.rules import rule_set, violations
from rebalproof.strategies import assignments as library_answers
from test_solver import draw_tasks_and_ids

LAGS = (None, 0, 0, 5, 10000, 10001, 50000)
SHARED = ("one-active", "no-colocation", "standby-count", "warmup-bound", "caught-up-active", "fixpoint")
"""The rules the plain checker and the catalogue both have (``stateless-replica``, ``leaving`` and
``probing-rebalance`` are the plain checker's alone: see :mod:`rebalproof.solver.rules`)."""


@st.composite
def wide_views(draw, max_members=4, max_tasks=3):
    """Views with every field the rules read: leaving members, warmups going in, stateless tasks."""
    tasks, ids = draw_tasks_and_ids(draw, max_members, max_tasks)
    held = {m: {"active": [], "standby": [], "warmup": []} for m in ids}
    for t in tasks:
        for m in ids:
            role = draw(st.sampled_from((None, None, "active", "standby", "warmup")))
            if role:
                held[m][role].append(t.id)
    members = []
    for m in ids:
        lags = {t.id: lag for t in tasks if t.stateful and (lag := draw(st.sampled_from(LAGS))) is not None}
        members.append(Member(id=m, capacity=draw(st.sampled_from((1, 1, 2))), leaving=draw(st.sampled_from((False, False, False, True))),
                              lags=lags, **{r: tuple(ts) for r, ts in held[m].items()}))
    config = Config(num_standby_replicas=draw(st.integers(0, 3)), max_warmup_replicas=draw(st.integers(0, 3)),
                    acceptable_recovery_lag=draw(st.sampled_from((10000, 10000, 0, 5))))
    previous = draw(st.sampled_from((None, tuple(ids), tuple(ids[:1]))))
    return RebalanceInput(config=config, tasks=tasks, members=tuple(members), previous_members=previous)


@st.composite
def answers(draw, view):
    """Arbitrary answers, often broken; sometimes the current assignment as it is.

    Every member named, no unknown id: every way in rejects other answers before a reader sees
    them (:func:`rebalproof.model.codec.check_ids`). A task listed twice passes it, so it is drawn.
    """
    source = draw(st.integers(0, 5))
    if source == 1:  # the library's own answers, half of them near-valid
        return draw(library_answers(view))
    if source == 0:
        return Assignment.build({m.id: {"active": list(m.active), "standby": list(m.standby), "warmup": list(m.warmup)} for m in view.members},
                                probing_rebalance=draw(st.booleans()))
    roles = {m: {"active": [], "standby": [], "warmup": []} for m in view.member_ids}
    for t in view.task_ids:
        for m in view.member_ids:
            role = draw(st.sampled_from((None, None, "active", "active", "standby", "warmup")))
            if role:
                roles[m][role].append(t)
    if draw(st.integers(0, 3)) == 0:  # a task listed twice by one member, in one role or two
        m, t = draw(st.sampled_from(view.member_ids)), draw(st.sampled_from(view.task_ids))
        roles[m][draw(st.sampled_from(("active", "standby", "warmup")))].append(t)
    return Assignment.build(roles, probing_rebalance=draw(st.booleans()))


def plain_rules(view, answer, rules):
    return {v.rule for v in violations(view, answer, rules)}


def catalogue_broken(view, answer, rules):
    return {v.property for v in check_assignment(view, answer, rules=rules) if v.status is Status.VIOLATED}


def verdicts(view, answer, rules):
    """Everything a verdict says but its wording: per property its status, tasks, members and measure."""
    return {v.property: (v.status, v.tasks, v.members, repr(sorted(v.measure.items()))) for v in check_assignment(view, answer, rules=rules)}


RULES = st.sampled_from(("ha", "sticky", "eager", "learner"))


@settings(max_examples=40)
@given(st.data(), RULES)
def test_the_plain_checker_explain_and_the_catalogue_name_the_same_broken_rules(data, rules):
    view = data.draw(wide_views())
    answer = data.draw(answers(view))
    plain = violations(view, answer, rules)
    note(f"plain: {[v.name for v in plain]}")
    assert sorted(explain(view, answer, rules)) == sorted(v.sentence for v in plain)
    promised = set(rule_set(rules).rules) & set(SHARED)
    assert {v.rule for v in plain} & promised == catalogue_broken(view, answer, rules) & promised
    judged = [v for v in plain if v.rule in rule_set(rules).judged]
    verdict = conforms(view, answer, rules)
    if judged:
        assert verdict.violated
    elif rules != "ha":
        assert verdict.holds
    else:  # probing-rebalance judged as the catalogue reads it (see test_conforms_judges_...)
        catalogue = next(v for v in check_assignment(view, answer, rules="ha") if v.property == "balanced")
        assert verdict.status == catalogue.status


def _relabel(standby, warmup, flip):
    return tuple(t for t in standby if t not in flip) + tuple(t for t in warmup if t in flip), tuple(t for t in warmup if t not in flip) + tuple(t for t in standby if t in flip)


def _rename_by_prefix(mid: str) -> str:
    """An order-preserving renaming: I1 < I2 < ... stays so, under :func:`id_key` too."""
    return "node-" + mid[1:]


def _rename_natural(mid: str) -> str:
    """A renaming that keeps the natural order of the ids (:func:`id_key`) but not their string
    order (I1, I2, I10, I11, ...; "I10" < "I2" as strings): a reader sorting ids as plain
    strings shows up."""
    n = int(mid[1:])
    return f"I{n if n <= 2 else n + 7}"


@settings(max_examples=40)
@given(st.data(), RULES)
def test_no_reader_depends_on_labels_order_or_names(data, rules):
    view = data.draw(wide_views())
    answer = data.draw(answers(view))
    flips = data.draw(st.sets(st.sampled_from([(m, t) for m in view.member_ids for t in view.task_ids])))
    base_plain, base_cat = sorted(plain_rules(view, answer, rules)), verdicts(view, answer, rules)

    # standby <-> warmup, in the answer and in the input
    members = {}
    for m, held in answer.members:
        s, w = _relabel(held.standby, held.warmup, {t for (mm, t) in flips if mm == m})
        members[m] = MemberAssignment(active=held.active, standby=s, warmup=w)
    relabelled = Assignment(members=members, probing_rebalance=answer.probing_rebalance)
    relabelled_view = view.replace(members=tuple(
        replace(m, **dict(zip(("standby", "warmup"), _relabel(m.standby, m.warmup, {t for (mm, t) in flips if mm == m.id}))))
        for m in view.members))
    for v, a in ((view, relabelled), (relabelled_view, answer), (relabelled_view, relabelled)):
        assert sorted(plain_rules(v, a, rules)) == base_plain
        assert {p: x[0] for p, x in verdicts(v, a, rules).items()} == {p: x[0] for p, x in base_cat.items()}

    # task lists in another order, members listed in another order
    reordered = Assignment(members={m: MemberAssignment(active=tuple(reversed(h.active)), standby=tuple(reversed(h.standby)), warmup=tuple(reversed(h.warmup)))
                                    for m, h in reversed(list(answer.members))}, probing_rebalance=answer.probing_rebalance)
    assert sorted(plain_rules(view, reordered, rules)) == base_plain
    assert verdicts(view, reordered, rules) == base_cat

    # members renamed, order kept
    _rename = data.draw(st.sampled_from((_rename_by_prefix, _rename_natural)))
    renamed_view = view.replace(members=tuple(replace(m, id=_rename(m.id)) for m in view.members),
                                previous_members=None if view.previous_members is None else tuple(_rename(m) for m in view.previous_members))
    renamed = Assignment(members={_rename(m): h for m, h in answer.members}, probing_rebalance=answer.probing_rebalance)
    assert sorted(plain_rules(renamed_view, renamed, rules)) == base_plain
    assert sorted(explain(renamed_view, renamed, rules)) == sorted(v.sentence for v in violations(renamed_view, renamed, rules))
    back = {p: (s, t, tuple(_rename(x) for x in ms), meas) for p, (s, t, ms, meas) in base_cat.items()}
    assert verdicts(renamed_view, renamed, rules) == back


def test_a_stateless_replica_is_its_own_rule_not_standby_count():
    """The plain checker and the Z3 encoding named a standby of a stateless task a broken
    ``standby-count``, which the catalogue's ``standby-count`` (stateful tasks only) accepts:
    KIP-441 requirement 2 forbids no such copy ("at least num.standby.replicas standby replicas
    for every task"). The rule sets keep it out under its own name, ``stateless-replica``
    (KIP-429: for stateless tasks "there is nothing to restore"), a rule the catalogue does not
    check, like ``leaving``. Found by the differential test above."""
    view = RebalanceInput(
        config=Config(num_standby_replicas=1),
        tasks=(Task(id="0_0", stateful=False), Task(id="1_0")),
        members=(Member(id="I1", lags={"1_0": 0}), Member(id="I2", lags={"1_0": 0})),
    )
    answer = Assignment.build({"I1": {"active": ["0_0"], "standby": ["1_0"]}, "I2": {"active": ["1_0"], "warmup": ["0_0"]}})
    for rules in ("ha", "sticky", "eager", "learner"):
        assert [v.name for v in violations(view, answer, rules)] == ["stateless-replica[0_0]"]
        assert explain(view, answer, rules) == ["stateless task 0_0 has replicas on I2, but a stateless task has no state to keep: stateless-replica"]
        assert "standby-count" not in catalogue_broken(view, answer, rules)
        # the solver's own choice, not a judgement: an implementation reading KIP-441's "for every
        # task" literally is not wrong, so conforms (replay's judge) accepts it as the catalogue does
        assert conforms(view, answer, rules).holds


def _judged(judge, view, answer, edge):
    return {name for name, _ in judge.judge(edge, edge, 0, SimpleNamespace(view=view, assignment=answer))}


@settings(max_examples=30)
@given(st.data(), RULES)
def test_the_run_judge_says_what_the_catalogue_says_on_views_of_one_shape(data, rules):
    """The run's judge (:mod:`rebalproof.properties.run_rebalance`) judges one (view, answer) per
    shape, member ids renamed by rank: a pair first judged renamed must get the catalogue's verdicts."""
    view = data.draw(wide_views())
    answer = data.draw(answers(view))
    judge = RebalanceJudge(rules)
    _rename = data.draw(st.sampled_from((_rename_by_prefix, _rename_natural)))
    renamed_view = view.replace(members=tuple(replace(m, id=_rename(m.id)) for m in view.members),
                                previous_members=None if view.previous_members is None else tuple(_rename(m) for m in view.previous_members))
    renamed = Assignment(members={_rename(m): h for m, h in answer.members}, probing_rebalance=answer.probing_rebalance)
    # the judge keeps every reading's violations, promised or not (the promise is applied to the run)
    expected = {p.name for p in PER_ASSIGNMENT if p.checks_by_rules.get(rules, p.check)(view, answer).violated}
    assert _judged(judge, renamed_view, renamed, 0) == _judged(judge, view, answer, 1) == expected


def test_the_run_judge_keeps_apart_views_that_differ_in_config_or_tasks():
    """The judge's shape left out the config and the tasks: a view judged clean with
    ``num_standby_replicas`` 0 made the same members and answer clean with 1 standby asked,
    and a stateless task's verdict stood for a stateful one. Both now count."""
    members = (Member(id="I1", lags={"0_0": 0}), Member(id="I2", lags={"0_0": 0}))
    answer = Assignment.build({"I1": {"active": ["0_0"]}, "I2": {}})
    judge = RebalanceJudge("ha")
    assert _judged(judge, RebalanceInput(config=Config(num_standby_replicas=0), tasks=(Task(id="0_0"),), members=members), answer, 0) == set()
    assert _judged(judge, RebalanceInput(config=Config(num_standby_replicas=1), tasks=(Task(id="0_0"),), members=members), answer, 1) == {"standby-count"}
    judge = RebalanceJudge("ha")
    assert _judged(judge, RebalanceInput(config=Config(num_standby_replicas=1), tasks=(Task(id="0_0", stateful=False),), members=members), answer, 0) == set()
    assert _judged(judge, RebalanceInput(config=Config(num_standby_replicas=1), tasks=(Task(id="0_0"),), members=members), answer, 1) == {"standby-count"}


def test_a_task_listed_twice_is_one_active_for_balance_too():
    """Balance counted a task listed twice as active on one member as two actives, so the plain
    checker called the answer unbalanced and named ``probing-rebalance`` broken, while the Z3
    encoding (one Boolean per task and member) and every property count a duplicate as one copy
    (:mod:`rebalproof.properties.common`: listing it twice is ``no-colocation``'s business alone).
    Found by the differential test above."""
    view = RebalanceInput(config=Config(max_warmup_replicas=1), tasks=(Task(id="0_0", stateful=False),),
                          members=(Member(id="I1"), Member(id="I2"), Member(id="I3")))
    answer = Assignment.build({"I1": {}, "I2": {}, "I3": {"active": ["0_0", "0_0"]}})
    assert [v.name for v in violations(view, answer, "ha")] == ["no-colocation[0_0@I3]"]
    assert explain(view, answer, "ha") == ["I3 holds task 0_0 twice (active and active): no-colocation"]
    assert catalogue_broken(view, answer, "ha") == {"no-colocation"}


def test_explain_names_a_fixpoint_broken_by_listing_a_task_twice():
    """An answer returning the current fixpoint with a task listed twice changes it for the plain
    checker and the catalogue (``fixpoint``: "lists a task twice"), but the Z3 encoding sees the
    answer through one Boolean per task and member, where the duplicate vanishes: ``explain``
    named no-colocation alone. What the Booleans cannot tell apart now comes from the plain
    checker. Found by the metamorphic test above."""
    view = RebalanceInput(config=Config(max_warmup_replicas=0), tasks=(Task(id="0_0", stateful=False), Task(id="0_1", stateful=False)),
                          members=(Member(id="I1", active=("0_0", "0_1")),))
    answer = Assignment.build({"I1": {"active": ["0_0", "0_0", "0_1"]}})
    for rules in ("ha", "sticky", "eager"):
        assert sorted(explain(view, answer, rules)) == sorted(v.sentence for v in violations(view, answer, rules))
        assert {v.rule for v in violations(view, answer, rules)} == {"no-colocation", "fixpoint"} == catalogue_broken(view, answer, rules)


@st.composite
def answers_with_strangers(draw, view):
    """An answer with a copy on a member, or of a task, the input does not name (what every way
    in rejects first, :func:`rebalproof.model.codec.check_ids`, but the API still explains)."""
    answer = draw(answers(view))
    roles = {m: {r: list(getattr(a, r)) for r in ("active", "standby", "warmup")} for m, a in answer.members}
    for _ in range(draw(st.integers(1, 2))):
        member, task = draw(st.sampled_from((("I9", view.task_ids[0]), (view.member_ids[0], "7_7"), ("I9", "7_7"))))
        roles.setdefault(member, {"active": [], "standby": [], "warmup": []})[draw(st.sampled_from(("active", "standby", "warmup")))].append(task)
    return Assignment.build(roles, probing_rebalance=answer.probing_rebalance)


@settings(max_examples=20)
@given(st.data(), RULES)
def test_explain_names_every_instance_the_plain_checker_names_with_unknown_ids_too(data, rules):
    """With an unknown id, ``explain`` said the unknown copies alone and the plain checker named
    ``one-active[0_0]`` twice (the unknown member's copy and the task's missing active), so one
    sentence was lost: each unknown copy is now its own instance, ``one-active[0_0@I9]``."""
    view = data.draw(wide_views())
    answer = data.draw(answers_with_strangers(view))
    plain = violations(view, answer, rules)
    assert len({v.name for v in plain}) == len(plain)
    assert sorted(explain(view, answer, rules)) == sorted(v.sentence for v in plain)
    assert conforms(view, answer, rules).violated


@settings(max_examples=20)
@given(st.data(), RULES, st.sampled_from((_rename_by_prefix, _rename_natural)))
def test_conforms_with_balance_achievable_agrees_with_the_catalogue_and_ignores_names(data, rules, rename):
    """``conforms(balance="achievable")`` (Z3: is some allowed answer balanced?) gives one verdict
    whatever the members are called, and under ``ha`` it and the catalogue's ``balanced`` agree
    where both speak: an answer it accepts is not unbalanced for the catalogue, and an answer the
    catalogue finds unbalanced without a probing rebalance breaks the hard rules."""
    view = data.draw(wide_views())
    answer = data.draw(answers(view))
    verdict = conforms(view, answer, rules, balance="achievable")
    renamed_view = view.replace(members=tuple(replace(m, id=rename(m.id)) for m in view.members),
                                previous_members=None if view.previous_members is None else tuple(rename(m) for m in view.previous_members))
    renamed = Assignment(members={rename(m): h for m, h in answer.members}, probing_rebalance=answer.probing_rebalance)
    assert conforms(renamed_view, renamed, rules, balance="achievable").status == verdict.status
    if rules == "ha":
        balanced = next(v for v in check_assignment(view, answer, rules="ha") if v.property == "balanced")
        assert not (verdict.holds and balanced.violated), balanced.message
        assert balanced.violated == ("probing-rebalance" in conforms(view, answer, "ha").measure.get("broken", ())), balanced.message


def test_conforms_judges_no_implementation_by_a_choice_the_seeds_leave_open():
    """``conforms`` (replay's judge where an answer differs) accepted fewer answers than the
    catalogue: the solver's own stricter rules made a false alarm of three correct readings.
    Each answer below keeps every property of the catalogue and must conform; the solver itself
    still gives none of them (``violations`` names the rule it keeps)."""
    caught_up = {"0_0": 0, "0_1": 0}
    # a leaving member treated as an ordinary one (KIP-441 knows no leaving members)
    view = RebalanceInput(
        config=Config(num_standby_replicas=0),
        tasks=(Task(id="0_0", stateful=False), Task(id="0_1", stateful=False)),
        members=(Member(id="I1", active=("0_0", "0_1")), Member(id="I2", leaving=True)),
    )
    answer = Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"active": ["0_1"]}})
    for rules in ("ha", "sticky", "eager"):
        assert "leaving" in {v.rule for v in violations(view, answer, rules)}
        assert not catalogue_broken(view, answer, rules)
        assert conforms(view, answer, rules).holds, conforms(view, answer, rules).message
    # the learner rules know leaving members: a stateless task moves off one at once, never onto it
    assert catalogue_broken(view, answer, "learner") == {"stateless-at-once"}
    assert not conforms(view, answer, "learner").holds
    # a balanced answer that still asks for a probing rebalance ("it can stop", not "it must")
    view = RebalanceInput(
        config=Config(num_standby_replicas=0),
        tasks=(Task(id="0_0"), Task(id="0_1")),
        members=(Member(id="I1", active=("0_0", "0_1"), lags=caught_up), Member(id="I2", lags=caught_up)),
    )
    answer = Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"active": ["0_1"]}}, probing_rebalance=True)
    assert [v.rule for v in violations(view, answer, "ha")] == ["probing-rebalance"]
    assert not catalogue_broken(view, answer, "ha")
    assert conforms(view, answer, "ha").holds, conforms(view, answer, "ha").message

def test_conforms_under_ha_still_catches_an_unbalanced_answer_that_stops_probing():
    """The judged reading of ``probing-rebalance`` is the catalogue's ``balanced``: not balanced,
    no probing rebalance, and a balanced assignment exists -- a violation (a missed one otherwise)."""
    caught_up = {"0_0": 0, "0_1": 0}
    view = RebalanceInput(
        config=Config(num_standby_replicas=0),
        tasks=(Task(id="0_0"), Task(id="0_1")),
        members=(Member(id="I1", active=("0_0", "0_1"), lags=caught_up), Member(id="I2", lags=caught_up)),
    )
    piled = Assignment.build({"I1": {"active": ["0_0", "0_1"]}, "I2": {}})
    verdict = conforms(view, piled, "ha")
    assert verdict.violated and verdict.measure["broken"] == ["probing-rebalance"], verdict.message
    assert conforms(view, Assignment.build({"I1": {"active": ["0_0", "0_1"]}, "I2": {}}, probing_rebalance=True), "ha").holds
    for rules in ("sticky", "eager"):  # balance is not a hard rule of theirs: the catalogue's balanced_at_once says it
        assert conforms(view, piled, rules).holds


def test_the_objectives_count_a_task_listed_twice_once_as_balance_does():
    """``oracle``'s distance table (:func:`rebalproof.solver.objectives.evaluate`) counted a task
    listed twice as two actives, so a balanced answer with a duplicate (already a broken
    no-colocation) was shown with imbalance above the optimum; balance counts one copy."""
    from rebalproof.model.balance import is_balanced
    from rebalproof.solver.objectives import evaluate
    from rebalproof.solver.rules import Facts

    view = RebalanceInput(tasks=(Task(id="0_0", stateful=False), Task(id="0_1", stateful=False)), members=(Member(id="I1"), Member(id="I2")))
    doubled = Assignment(members={"I1": MemberAssignment(active=("0_0", "0_0")), "I2": MemberAssignment(active=("0_1",))}, probing_rebalance=False)
    assert is_balanced(view, doubled)
    assert evaluate(view, doubled, Facts(view, "ha")).imbalance == 0


@settings(max_examples=40)
@given(st.data(), RULES)
def test_conforms_breaks_exactly_where_the_catalogue_breaks_a_promise(data, rules):
    """``conforms`` (replay's judge of a differing answer) and the catalogue name the same broken
    promises, but ``stable`` (a "should") and balance (``conforms``' balance modes). Found missing:
    ``caught-up-standby``, ``staying-learners`` and ``learner-handover`` were promises of the
    catalogue that no solver rule read, so replay accepted an answer ``check`` would fault."""
    view = data.draw(wide_views())
    answer = data.draw(answers(view))
    broken = catalogue_broken(view, answer, rules) - {"stable", "balanced"}
    verdict = conforms(view, answer, rules)
    if broken:
        assert verdict.violated, (broken, verdict.message)
    elif verdict.violated:
        judged = {b.split("[", 1)[0] for b in verdict.measure["broken"]} - {"probing-rebalance"}
        assert not judged, (judged, verdict.message)


def test_conforms_judges_the_promises_no_solver_rule_reads():
    caught_up = {"0_0": 0, "0_1": 0}
    view = RebalanceInput(
        config=Config(num_standby_replicas=1),
        tasks=(Task(id="0_0"), Task(id="0_1")),
        members=(Member(id="I1", active=("0_0",), lags=caught_up), Member(id="I2", active=("0_1",), lags=caught_up), Member(id="I3")),
    )
    # both standbys on I3, which must restore, while I1 and I2, caught up on both, hold none
    cold = Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"active": ["0_1"]}, "I3": {"standby": ["0_0", "0_1"]}})
    verdict = conforms(view, cold, "ha")
    assert verdict.violated and verdict.measure["broken"] == ["caught-up-standby"], verdict.message
    crossed = Assignment.build({"I1": {"active": ["0_0"], "standby": ["0_1"]}, "I2": {"active": ["0_1"], "standby": ["0_0"]}, "I3": {}})
    assert conforms(view, crossed, "ha").holds
    # KIP-429: an active leaves its owner only for a member ready for it (caught up on it)
    view = RebalanceInput(config=Config(num_standby_replicas=0), tasks=(Task(id="0_0"),),
                          members=(Member(id="I1", active=("0_0",), lags={"0_0": 0}), Member(id="I2")))
    moved = Assignment.build({"I1": {}, "I2": {"active": ["0_0"]}})
    assert [v.name for v in violations(view, moved, "learner")] == ["learner-handover[0_0@I2]"]
    assert explain(view, moved, "learner") == [v.sentence for v in violations(view, moved, "learner")]
    assert conforms(view, moved, "learner").violated
    assert conforms(view, Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"warmup": ["0_0"]}}), "learner").holds


def test_conforms_achievable_counts_balance_as_the_catalogue_does():
    """An answer balanced only by the second reading of "within one" with capacities (instances
    within one task, no thread more than one task above another) is balanced for ``balanced``,
    so ``conforms(balance="achievable")`` (replay --balance achievable) must not fault it."""
    caught_up = {t: 0 for t in ("0_0", "0_1", "1_0", "1_1")}
    view = RebalanceInput(
        config=Config(num_standby_replicas=0),
        tasks=tuple(Task(id=t) for t in ("0_0", "0_1", "1_0", "1_1")),
        members=(Member(id="I1", capacity=1, active=("1_0",), lags=caught_up), Member(id="I2", capacity=2, active=("0_1", "1_1"), lags=caught_up),
                 Member(id="I3", capacity=2, active=("0_0",), lags=caught_up)),
        previous_members=("I1", "I2", "I3"),
    )
    answer = Assignment.build({"I1": {"active": ["1_0"]}, "I2": {"active": ["0_1", "1_1"]}, "I3": {"active": ["0_0"]}})
    assert next(v for v in check_assignment(view, answer, rules="ha") if v.property == "balanced").holds
    for rules in ("ha", "sticky"):
        assert conforms(view, answer, rules, balance="achievable").holds, conforms(view, answer, rules, balance="achievable").message
