"""Oracle, conformance, spec enumeration, and the networkx min-cost flow cross-check against Z3."""

import doctest
import itertools

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalproof.errors import InputError
from rebalproof.model.assignment import Assignment
from rebalproof.model.view import Config, Member, RebalanceInput, Task
from rebalproof.properties import check_assignment
from rebalproof.properties.copies import standby_count
from rebalproof.properties.verdict import Status
from rebalproof.solver import oracle, spec
from rebalproof.solver.oracle import conforms, distance, explain
from rebalproof.solver.rules import Facts, rule_set, violations
from rebalproof.solver.spec import SpecAssignor, SpecTooLarge, enumerate_allowed, resolve_spec
from rebalproof.solver.staged import solve_staged
from test_solver import views

ROLE = st.sampled_from((None, "active", "active", "standby", "warmup"))


@st.composite
def answers(draw, view):
    """Arbitrary answers, often broken: every member with a random role per task."""
    roles = {m: {"active": [], "standby": [], "warmup": []} for m in view.member_ids}
    for t in view.task_ids:
        for m in view.member_ids:
            role = draw(ROLE)
            if role:
                roles[m][role].append(t)
    return Assignment.build(roles, probing_rebalance=draw(st.booleans()))


@pytest.mark.parametrize("module", [oracle, spec])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


@settings(max_examples=30)
@given(st.data(), st.sampled_from(("ha", "sticky", "learner")))
def test_unsat_cores_name_what_the_plain_checker_finds(data, rules_name):
    view = data.draw(views(max_members=3, max_tasks=3))
    answer = data.draw(answers(view))
    plain = violations(view, answer, rules_name)
    said = explain(view, answer, rules_name)
    assert sorted(said) == sorted(v.sentence for v in plain)
    verdict = conforms(view, answer, rules_name)
    judged = [v for v in plain if v.rule in rule_set(rules_name).judged]  # probing judged apart (test_readers_agree)
    assert verdict.violated == bool(judged) or (rules_name == "ha" and "probing-rebalance" in verdict.measure.get("broken", ()))


def test_a_warmup_counts_as_a_standby_for_every_reading():
    """The Z3 encoding reads standby-count as the catalogue does: a replica labelled warmup is a
    standby by count (Kafka reports warmups as standbys; the label decides nothing). Found by a
    random hypothesis run: the encoding counted the standby label alone, so ``explain`` named
    standby-count broken on answers the plain checker and the catalogue accept."""
    view = RebalanceInput(
        config=Config(num_standby_replicas=1, max_warmup_replicas=2),
        tasks=(Task(id="0_0"),),
        members=(Member(id="I1", active=("0_0",), lags=(("0_0", 0),)), Member(id="I2", lags=(("0_0", 0),))),
    )
    answer = Assignment.build({"I1": {"active": ["0_0"]}, "I2": {"warmup": ["0_0"]}})
    for rules in ("ha", "sticky", "learner"):
        assert list(violations(view, answer, rules)) == []
        assert explain(view, answer, rules) == []
    assert standby_count(view, answer).status is Status.HOLDS
    # with no active copy at all, a lone warmup is still the task's standby: one-active alone is broken
    orphan = Assignment.build({"I1": {}, "I2": {"warmup": ["0_0"]}})
    assert explain(view, orphan, "ha") == [v.sentence for v in violations(view, orphan, "ha")] == ["task 0_0 has no active copy: one-active"]


def test_the_current_assignment_returned_as_it_is_keeps_fixpoint_for_every_reading():
    """``fixpoint`` in the Z3 encoding compares copies, a replica labelled standby or warmup
    alike, as the plain checker and the catalogue do: the encoding fixed the labels of the
    current assignment with its replicas written as standbys, so ``explain`` named fixpoint
    broken on an answer that returned the current assignment exactly, warmup label and all."""
    caught_up = (("0_0", 0), ("0_1", 0))
    view = RebalanceInput(
        config=Config(num_standby_replicas=1, max_warmup_replicas=2),
        tasks=(Task(id="0_0"), Task(id="0_1")),
        members=(Member(id="I1", active=("0_0",), standby=("0_1",), lags=caught_up),
                 Member(id="I2", active=("0_1",), warmup=("0_0",), lags=caught_up)),
    )
    unchanged = Assignment.build({"I1": {"active": ["0_0"], "standby": ["0_1"]}, "I2": {"active": ["0_1"], "warmup": ["0_0"]}})
    relabelled = Assignment.build({"I1": {"active": ["0_0"], "warmup": ["0_1"]}, "I2": {"active": ["0_1"], "standby": ["0_0"]}})
    moved = Assignment.build({"I1": {"active": ["0_1"], "standby": ["0_0"]}, "I2": {"active": ["0_0"], "standby": ["0_1"]}})
    for rules in ("ha", "sticky", "eager"):
        for answer in (unchanged, relabelled):
            assert list(violations(view, answer, rules)) == [] and explain(view, answer, rules) == []
        assert "fixpoint" in [v.name for v in violations(view, moved, rules)]
        assert explain(view, moved, rules) == [v.sentence for v in violations(view, moved, rules)]


def test_explain_says_it_in_words():
    view = RebalanceInput(tasks=(Task(id="0_1"),), members=(Member(id="I1"), Member(id="I2"), Member(id="I3")))
    answer = Assignment.build({"I1": {}, "I2": {"active": ["0_1"]}, "I3": {"active": ["0_1"]}})
    assert explain(view, answer, "ha") == ["task 0_1 is active on I2 and I3: one-active"]
    assert conforms(view, answer, "ha").violated


@settings(max_examples=15)
@given(views(max_members=3, max_tasks=3), st.sampled_from(("ha", "sticky")), st.sampled_from(("hard", "achievable")))
def test_spec_choices_are_exactly_the_conforming_answers(view, rules_name, balance):
    if len(view.tasks) * len(view.members) > 6:
        return
    allowed = enumerate_allowed(view, rules_name, balance=balance, limit=5000)
    assert allowed.complete
    for answer in allowed.assignments:
        assert conforms(view, answer, rules_name, balance=balance).holds
        for verdict in check_assignment(view, answer, rules=rules_name):
            if verdict.property not in ("stable", "balanced"):  # "should" and measured: not hard rules
                assert not verdict.violated, (verdict.property, verdict.message)
    # every conforming answer that keeps the solver's own rules, in canonical roles, is among the choices
    layouts = {tuple((m, a.active, tuple(sorted(a.standby + a.warmup))) for m, a in x.members) for x in allowed.assignments}
    members = view.member_ids
    for combo in itertools.product(*[[(h, frozenset(r)) for h in members for k in range(len(members)) for r in itertools.combinations([m for m in members if m != h], k)] for _ in view.task_ids]):
        roles = {m: {"active": [], "standby": [], "warmup": []} for m in members}
        for t, (host, others) in zip(view.task_ids, combo):
            roles[host]["active"].append(t)
            for m in others:
                roles[m]["standby"].append(t)
        answer = Assignment.build(roles)
        answer = spec._canonical(view, Facts(view, rules_name), {t: h for t, (h, _) in zip(view.task_ids, combo)}, {t: [h, *o] for t, (h, o) in zip(view.task_ids, combo)})
        # the spec's choices keep the solver's own rules too (OWN_RULES), stricter than conforms
        if not violations(view, answer, rules_name) and conforms(view, answer, rules_name, balance=balance).holds:
            key = tuple((m, a.active, tuple(sorted(a.standby + a.warmup))) for m, a in answer.members)
            assert key in layouts


def test_spec_assignor_caps_and_resolves():
    view = RebalanceInput(tasks=tuple(Task(id=f"0_{i}", stateful=False) for i in range(4)), members=(Member(id="I1"), Member(id="I2"), Member(id="I3")))
    with pytest.raises(SpecTooLarge):
        SpecAssignor("sticky", balance="hard", limit=5).choices(view)
    assignor = resolve_spec("spec:ha:balance=hard,limit=100")
    assert (assignor.rules, assignor.balance, assignor.limit) == ("ha", "hard", 100)
    assert len(SpecAssignor("sticky").choices(view)) == 36  # balanced layouts of 4 tasks over 3 members: 3 * C(4,2) * 2
    with pytest.raises(InputError):
        resolve_spec("spec:nope")


def test_distance_reports_value_and_optimum():
    view = RebalanceInput(tasks=(Task(id="0_0", stateful=False), Task(id="0_1", stateful=False)), members=(Member(id="I1", active=("0_0", "0_1")), Member(id="I2")))
    d = distance(view, Assignment.build({"I1": {"active": ["0_0", "0_1"]}, "I2": {}}), "sticky")
    assert d.status == "optimal" and d.optimal is False
    assert [(e.name, e.value, e.optimum) for e in d.entries][:3] == [("imbalance", 2, 0), ("spread", 2, 0), ("moves", 0, 1)]


@st.composite
def sticky_views(draw):
    """Equal capacities, nobody leaving, stateless: balanced actives with a movement cost is all there is."""
    n, t = draw(st.integers(2, 4)), draw(st.integers(1, 7))
    ids = [f"I{i + 1}" for i in range(n)]
    owners = [draw(st.sampled_from(ids + ["gone", None])) for _ in range(t)]
    members = tuple(Member(id=m, active=tuple(f"0_{i}" for i, o in enumerate(owners) if o == m)) for m in ids)
    return RebalanceInput(tasks=tuple(Task(id=f"0_{i}", stateful=False) for i in range(t)), members=members, previous_members=tuple(ids))


def networkx_min_moves(view) -> int:
    """Least moves among instance-balanced layouts, by networkx min-cost flow (written here, independently)."""
    tasks, members = view.task_ids, view.member_ids
    lo, hi = len(tasks) // len(members), -(-len(tasks) // len(members))
    graph = nx.DiGraph()
    for t in tasks:
        graph.add_node(("t", t), demand=-1)
        for m in members:
            graph.add_edge(("t", t), ("m", m), capacity=1, weight=0 if m in view.owners(t) else (1 if view.owners(t) else 0))
    for m in members:  # lower bound lo: the member must pass lo units; shift them into demands
        graph.add_node(("m", m), demand=lo)
        graph.add_edge(("m", m), "sink", capacity=hi - lo, weight=0)
    graph.add_node("sink", demand=len(tasks) - lo * len(members))
    cost, _ = nx.network_simplex(graph)
    return cost


@settings(max_examples=25)
@given(sticky_views())
def test_networkx_min_cost_flow_agrees_with_z3(view):
    z3_answer = solve_staged(view, "sticky", objectives=("imbalance", "moves"))
    assert z3_answer.status == "optimal"
    assert z3_answer.values["imbalance"] <= 1
    assert z3_answer.values["moves"] == networkx_min_moves(view)


def test_the_spec_lists_no_answer_that_breaks_a_promise_of_its_rules():
    """``spec:ha`` listed answers placing new standbys on a member with no state while caught-up
    members held none (10 of 18 here): ``caught-up-standby``, a promise of the ha rules that no
    solver rule read. Every listed answer now keeps every promise but ``stable`` and ``balanced``."""
    caught_up = {"0_0": 0, "0_1": 0}
    view = RebalanceInput(
        config=Config(num_standby_replicas=1),
        tasks=(Task(id="0_0"), Task(id="0_1")),
        members=(Member(id="I1", active=("0_0",), lags=caught_up), Member(id="I2", active=("0_1",), lags=caught_up), Member(id="I3")),
    )
    allowed = enumerate_allowed(view, "ha")
    # the two crossed layouts; the six more with a warmup on I3 and no probing rebalance (balanced:
    # no move to warm up for) break warmup-bound's ha reading
    assert allowed.complete and len(allowed.assignments) == 2
    for answer in allowed.assignments:
        assert conforms(view, answer, "ha").holds
        broken = [v.property for v in check_assignment(view, answer, rules="ha") if v.violated and v.property not in ("stable", "balanced")]
        assert not broken, broken


# -- red team 15 ---------------------------------------------------------------------------

_STAYING_OWNER = {"config": {"num_standby_replicas": 0, "acceptable_recovery_lag": 100, "max_warmup_replicas": 2},
                  "tasks": [{"id": "0_0"}],
                  "members": [{"id": "A", "active": ["0_0"], "lags": {"0_0": 0}}, {"id": "B"},
                              {"id": "L", "leaving": True, "lags": {"0_0": 0}}],
                  "previous_members": ["A", "B", "L"]}
_LEAVING_STANDBY = {"config": {"num_standby_replicas": 1, "acceptable_recovery_lag": 100, "max_warmup_replicas": 0},
                    "tasks": [{"id": "0_1", "stateful": False}, {"id": "1_0", "stateful": True}, {"id": "1_1"}, {"id": "2_0", "stateful": True}],
                    "members": [{"id": "x", "active": ["0_1", "1_1"], "standby": ["1_0"], "lags": {}},
                                {"id": "b", "leaving": True, "standby": ["2_0"], "lags": {"1_0": 0}},
                                {"id": "Zed", "active": ["2_0"], "warmup": ["1_0"], "lags": {}},
                                {"id": "alpha", "lags": {"1_0": 0}}],
                    "previous_members": ["x", "b", "Zed", "alpha"]}


@pytest.mark.parametrize("rules", ["ha", "sticky", "eager", "learner"])
def test_a_staying_owners_task_is_not_moved_onto_a_leaving_member(rules):
    """Red team 15's D1: the reference moved A's only task to the leaving L, which reports
    caught-up state for it (balance does not count leaving members); a leaving member keeps only
    what it held, or caught-up state of a task nobody owns going in (one it revoked)."""
    from rebalproof.model.codec import decode_input
    from rebalproof.solver.optimize import optimal

    found = optimal(decode_input(_STAYING_OWNER), rules)
    assert found.status == "optimal" and found.assignment.of("L").active == () and found.assignment.of("A").active == ("0_0",)


@pytest.mark.parametrize("engine", ["flow", "z3"])
def test_the_learner_reference_gives_a_leaving_member_no_new_learner_label(engine):
    """Red team 15's D3: a proven answer tagged the leaving b's restoring copy ``warmup``, which
    ``staying-learners`` faults; labels change no objective, so the reference labels it standby."""
    from rebalproof.model.codec import decode_input
    from rebalproof.solver.optimize import optimal

    view = decode_input(_LEAVING_STANDBY)
    found = optimal(view, "learner", engine=engine)
    assert found.status == "optimal" and found.assignment.of("b").warmup == ()
    from rebalproof.oracle import judge

    assert judge(view, found.assignment, rules="learner").ok
