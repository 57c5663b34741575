"""Unequal capacities and leaving members on the fast path: levels and widths, anytime answers, honest flags."""

import math
import random
import sys
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from rebalproof.model.codec import encode_assignment, encode_input
from rebalproof.model.names import subtopology_of
from rebalproof.oracle import check
from rebalproof.solver import benders, placement
from rebalproof.solver.incumbent import Incumbent
from rebalproof.solver.objectives import imbalance
from rebalproof.solver.optimize import optimal
from rebalproof.solver.placement import solve_placement
from rebalproof.solver.result import INCONCLUSIVE, Bound, Optimum
from rebalproof.solver.rules import Facts, violations
from test_solver import agrees_with_brute_force, analysed, views

sys.path.insert(0, str(ROOT / "bench"))
from solver import cluster  # noqa: E402  (the benchmark's cluster families)


@st.composite
def mixed_views(draw, max_members=4, max_tasks=5):
    """Small views with capacities 1/2/4 and, half the time, a leaving member that held work."""
    view = draw(views(max_members=max_members, max_tasks=max_tasks))
    members = []
    for m in view.members:
        members.append(type(m)(id=m.id, capacity=draw(st.sampled_from((1, 2, 4))), leaving=m.leaving, active=m.active, standby=m.standby, lags=dict(m.lags)))
    if draw(st.booleans()) and len(members) > 1:
        busiest = max(members, key=lambda m: (len(m.active), m.id))
        members = [type(m)(id=m.id, capacity=m.capacity, leaving=m is busiest, active=m.active, standby=m.standby, lags=dict(m.lags)) for m in members]
    return type(view)(config=view.config, tasks=view.tasks, members=tuple(members), previous_members=view.previous_members)


def accepted(view, answer, rules="ha") -> bool:
    return check(encode_input(view), encode_assignment(answer), rules=rules).ok


@settings(max_examples=30)
@given(mixed_views(), st.sampled_from(("ha", "sticky", "learner")))
def test_levels_agree_with_brute_force(view, rules_name):
    result = agrees_with_brute_force(view, rules_name)
    assert result is None or all(b.proven for b in result.objectives)


@settings(max_examples=15)
@given(mixed_views(max_members=3, max_tasks=4), st.sampled_from(("ha", "learner")))
def test_levels_agree_with_staged_z3(view, rules_name):
    fast = solve_placement(view, rules_name, small=0)
    reference = optimal(view, rules_name, engine="z3")
    assert fast.status == reference.status
    if fast.status == "optimal":
        assert fast.values == reference.values
        assert not violations(view, fast.assignment, rules_name)


@pytest.mark.parametrize("n, t, seed, leaving", [(3, 8, 1, False), (3, 8, 2, True), (4, 8, 3, True), (4, 8, 4, False)])
def test_cluster_families_agree_with_staged_z3_and_pass_the_oracle(n, t, seed, leaving):
    view = cluster(n, t, seed=seed, leaving=leaving)
    result = solve_placement(view, "ha", small=0)
    assert result.status == "optimal" and all(b.proven for b in result.objectives)
    reference = optimal(view, "ha", engine="z3")
    assert reference.status == "optimal" and reference.values == result.values
    assert not violations(view, result.assignment, "ha") and accepted(view, result.assignment)


def own_box(prob, host, caps, denominator):
    """Per group (each subtopology and ``(all)``), the box a layout lies in at its own level and width."""
    counts = {g: {m: 0 for m in caps} for g in [*prob.subs, "(all)"]}
    for t, m in host.items():
        if m in caps:
            counts[subtopology_of(t)][m] += 1
            counts["(all)"][m] += 1
    box = {}
    for g, n in counts.items():
        top = max(Fraction(n[m], caps[m]) for m in caps)
        p, k = int(top * denominator), imbalance(n, caps)
        box[g] = {m: (max(0, math.ceil(Fraction(p * c, denominator)) - k), (p * c) // denominator) for m, c in caps.items()}
    return box


# seed 6 with a leaving member once never finished: its instance group's least imbalance was read
# as 0 at a level no layout can be balanced at (test_a_leaving_host_does_not_make_imbalance_0_out_of_a_fractional_level)
@pytest.mark.parametrize("seed, leaving", [(5, False), (6, True), (8, True)])
def test_level_cuts_hold_at_every_layout_own_box(seed, leaving):
    """Each feasibility cut holds at the own box of any layout; each cost cut is below its cost (the cuts are valid, not just tight)."""
    view = cluster(6, 20, seed=seed, leaving=leaving)
    prob, inst, subs = analysed(view)
    facts = prob.facts
    searched = placement._search_levels(prob, inst, subs, placement.Deadline(120))  # a bound, never a wait
    assert searched.done and searched.cuts
    caps = dict(prob.caps)
    denominator = math.lcm(*set(caps.values()))
    rng = random.Random(seed)
    for _ in range(200):
        host = {t: rng.choice(facts.active_hosts[t]) for t in view.task_ids}
        box = own_box(prob, host, caps, denominator)
        moves = sum(1 for t, o in facts.owner.items() if host[t] != o)
        cost = prob.weight * moves + sum(1 for t, m in host.items() if m in prob.penalty[t])
        for cut in searched.cuts:
            assert benders.holds(cut, box, cost), cut


def test_a_timeout_gives_the_best_valid_answer_with_honest_flags():
    view = cluster(20, 200, seed=1, leaving=True)
    result = optimal(view, "ha", timeout=1e-9)  # the deadline has passed at the first check
    assert result.status == INCONCLUSIVE and result.assignment is not None
    assert not violations(view, result.assignment, "ha") and accepted(view, result.assignment)
    earlier = True
    for b in result.objectives:
        assert b.lower <= b.value
        assert b.proven == (earlier and b.unconditional and b.lower == b.value)
        earlier = earlier and b.proven
    assert not all(b.proven for b in result.objectives)
    assert result.to_json()["assignment"] is not None


def test_a_bound_met_under_an_unproven_layer_is_not_proven():
    bounds = (Bound("imbalance", 1, 1, "flow-cut", ""), Bound("spread", 42, 33, "flow-cut", ""), Bound("moves", 7, 7, "flow-duals", ""),
              Bound("restore", 3, 2, "arithmetic", "", given="moves = 7"))
    result = Optimum(status=INCONCLUSIVE, rules="ha", assignment=None, objectives=bounds)
    flags = {o["name"]: (o["proven"], o["unconditional"]) for o in result.to_json()["objectives"]}
    assert flags == {"imbalance": (True, True), "spread": (False, True), "moves": (False, True), "restore": (False, False)}


def test_the_greedy_start_keeps_the_rules_on_a_leaving_cluster():
    view = cluster(10, 50, seed=3, leaving=True)
    start = Incumbent(view, Facts(view, "ha"))
    assert start.answer is not None and start.source == "greedy"
    assert not violations(view, start.answer, "ha") and accepted(view, start.answer)


def test_a_leaving_host_does_not_make_imbalance_0_out_of_a_fractional_level():
    """With a leaving host the staying total varies: imbalance 0 needs a level where every member's share is whole."""
    view = cluster(6, 20, seed=6, leaving=True)
    prob = placement._Problem(view, Facts(view, "ha"))
    inst = placement.analyse_group(prob.balance_classes(), prob.caps, name="imbalance")
    assert prob.leaving and inst.least == 1 and "multiple of 1/" in inst.proof
    assert all(lo <= hi for box in inst.boxes for lo, hi in box.values())
    result = optimal(view, "ha", timeout=120)
    assert result.status == "optimal" and result.values["imbalance"] == 1 and accepted(view, result.assignment)


@pytest.mark.parametrize("seed, leaving", [(5, False), (6, True)])
def test_every_layout_of_least_imbalance_keeps_the_capacity_master(seed, leaving):
    """The CP-SAT master's base inequalities and cuts admit each layout's own levels and widths: its bounds are bounds."""
    from ortools.sat.python import cp_model

    view = cluster(6, 20, seed=seed, leaving=leaving)
    prob, inst, subs = analysed(view)
    facts = prob.facts
    masters = []
    original = benders.search_levels

    def spy(**kwargs):
        masters.append(kwargs["master"])
        return original(**kwargs)

    placement.search_levels = spy
    try:
        assert placement._search_levels(prob, inst, subs, placement.Deadline(120)).done
    finally:
        placement.search_levels = original
    master = masters[0]
    caps = dict(prob.caps)
    rng = random.Random(seed)
    best = optimal(view, "ha", timeout=120).assignment
    start = {t: m for m, a in best.members for t in a.active}
    checked = 0
    for _ in range(300):  # layouts near the optimum: random ones seldom have the least imbalance
        host = dict(start)
        for t in rng.sample(view.task_ids, rng.randint(1, 4)):
            host[t] = rng.choice(facts.active_hosts[t])
        counts = {g: {m: 0 for m in caps} for g in [*prob.subs, "(all)"]}
        for t, m in host.items():
            if m in caps:
                counts[subtopology_of(t)][m] += 1
                counts["(all)"][m] += 1
        if imbalance(counts["(all)"], caps) != inst.least:
            continue
        model, v, cost, _ = master._build()
        for g, n in counts.items():
            model.Add(v["p"][g] == int(max(Fraction(n[m], caps[m]) for m in caps) * master.denominator))
            if g != "(all)":
                model.Add(v["k"][g] == imbalance(n, caps))
        model.Add(cost == prob.weight * sum(1 for t, o in facts.owner.items() if host[t] != o) + sum(1 for t, m in host.items() if m in prob.penalty[t]))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        assert solver.Solve(model) in (cp_model.OPTIMAL, cp_model.FEASIBLE), host
        checked += 1
    assert checked >= 10


class _AfterChecks:
    """A deadline that passes after ``n`` looks at it: a timeout in the middle of the search, without a clock."""

    end = None

    def __init__(self, n):
        self.left = n

    def ms(self):
        return None

    @property
    def passed(self):
        self.left -= 1
        return self.left < 0


@pytest.mark.parametrize("looks", [1, 4, 6, 12])
def test_a_timeout_inside_the_level_search_keeps_a_valid_answer_and_bounds_below_the_optimum(monkeypatch, looks):
    view = cluster(10, 50, seed=441, leaving=False)
    full = optimal(view, "ha")
    assert full.status == "optimal"
    monkeypatch.setattr(placement, "Deadline", lambda timeout: _AfterChecks(looks))
    cut = solve_placement(view, "ha", timeout=60)
    assert cut.assignment is not None and not violations(view, cut.assignment, "ha") and accepted(view, cut.assignment)
    earlier = True
    for b, best in zip(cut.objectives, full.objectives):
        assert b.lower <= b.value
        if b.unconditional and earlier:
            assert b.lower <= best.value, b  # an unconditional bound never passes the optimum
        assert b.proven == (earlier and b.unconditional and b.lower == b.value)
        earlier = earlier and b.proven
    assert (cut.status == INCONCLUSIVE) == (looks <= 6)  # 7 looks are enough to finish here (the box-choice path)
    if cut.status == INCONCLUSIVE:
        assert not all(b.proven for b in cut.objectives)
    else:
        assert cut.values == full.values
