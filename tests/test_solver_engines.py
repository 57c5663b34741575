"""The structural paths of the flow engine: enumeration, pruning, Benders; each agrees and each certificate is sound."""

import random
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from rebalproof.solver import benders, exhaustive, flow
from rebalproof.solver.objectives import OBJECTIVES
from rebalproof.solver.optimize import optimal
from rebalproof.solver.placement import solve_placement
from rebalproof.solver.rules import Facts, violations
from test_solver import agrees_with_brute_force, analysed, bounded_networks, views

sys.path.insert(0, str(ROOT / "bench"))
from solver import generate  # noqa: E402  (the benchmark's deterministic inputs)

# bench inputs whose subtopology floors do not meet inside the instance box, even after pruning
BENDERS_INPUTS = [(3, 6, 2), (3, 6, 4), (5, 10, 3), (5, 10, 5), (5, 10, 8)]


def test_doctests():
    import doctest

    assert doctest.testmod(exhaustive).failed == 0


@settings(max_examples=25)
@given(views(max_members=3, max_tasks=3), st.sampled_from(("ha", "sticky", "learner")))
def test_flow_path_without_enumeration_agrees_with_brute_force(view, rules_name):
    agrees_with_brute_force(view, rules_name)


@settings(max_examples=25)
@given(views(max_members=4, max_tasks=5), st.sampled_from(("ha", "sticky", "learner")))
def test_enumeration_agrees_with_the_flow_path(view, rules_name):
    tiny = solve_placement(view, rules_name)
    flowed = solve_placement(view, rules_name, small=0)
    assert tiny.status == flowed.status
    if tiny.status == "optimal":
        assert tiny.values == flowed.values
        assert all(b.proven for b in tiny.objectives)
        assert not violations(view, tiny.assignment, rules_name)


@pytest.mark.parametrize("n, t, seed", BENDERS_INPUTS)
def test_benders_agrees_with_staged_z3_and_enumeration(n, t, seed):
    view = generate(n, t, seed=seed)
    result = solve_placement(view, "ha", small=0)
    assert result.engine == "flow+benders" and result.status == "optimal"
    assert result.bound("spread").method == "benders" and all(b.proven for b in result.objectives)
    assert not violations(view, result.assignment, "ha")
    reference = optimal(view, "ha", engine="z3", timeout=30)
    assert reference.status == "optimal" and reference.values == result.values
    if exhaustive.layouts(Facts(view, "ha")) <= exhaustive.LIMIT:
        tiny = solve_placement(view, "ha")
        assert tiny.engine == "exhaustive" and tiny.values == result.values


@pytest.mark.parametrize("n, t, seed", BENDERS_INPUTS[:3])
def test_benders_cuts_hold_for_every_box_a_flow_fits(n, t, seed):
    """Each feasibility cut holds at every box some layout fits in; each cost cut bounds that box's least cost."""
    from rebalproof.solver import placement

    view = generate(n, t, seed=seed)
    prob, inst, subs = analysed(view)
    searched = placement._search_boxes(prob, inst, subs, placement.Deadline(None))
    assert searched.done and searched.cuts
    members = sorted(prob.caps)
    rng = random.Random(seed)
    tried = 0
    for _ in range(60):
        box = {s: (rng.randint(0, 1), rng.randint(1, 3)) for s in prob.subs}
        box = {s: (lo, max(lo, hi)) for s, (lo, hi) in box.items()}
        found = placement._flow_stage3(prob, inst.boxes[0], {s: {m: box[s] for m in members} for s in box})
        if found is None:
            continue
        tried += 1
        for cut in searched.cuts:
            assert benders.holds(cut, box, found[3].cost), cut
    assert tried


@settings(max_examples=150)
@given(bounded_networks())
def test_deficient_sets_and_potential_bounds_are_sound(network):
    arcs, supplies = network
    solution = flow.bounded_min_cost(arcs, supplies)
    inside = flow.deficient_set(arcs, supplies)
    assert (inside is None) == (solution is not None)
    if solution is None:
        return
    constant, terms = flow.potential_bound(arcs, supplies, solution.potentials)
    at = lambda bounds: constant + sum(r * bounds[i][2 if which == "lo" else 3] for i, r, which in terms)  # noqa: E731
    assert at(arcs) == solution.cost  # tight where it was made
    for shift in range(3):  # and below the least cost of any other bounds
        other = [(u, v, max(0, lo - shift), None if hi is None else hi + shift, c) for u, v, lo, hi, c in arcs]
        elsewhere = flow.bounded_min_cost(other, supplies)
        if elsewhere is not None:
            assert at(other) <= elsewhere.cost
    for u, v in flow.unusable_arcs(arcs, solution.flow):  # forcing one unit through an unusable arc has no flow
        forced = [(a, b, 1 if (a, b) == (u, v) else lo, hi, c) for a, b, lo, hi, c in arcs]
        assert flow.bounded_min_cost(forced, supplies) is None


def test_bench_sizes_are_proven_by_flow_after_pruning():
    view = generate(50, 500, seed=441)
    result = optimal(view, "ha", timeout=60)
    assert result.status == "optimal" and result.engine == "flow"
    assert [result.values[n] for n in OBJECTIVES] == [8, 63, 170, 115, 0]
    assert any("left out" in note for note in result.notes)


@st.composite
def transports(draw):
    members = [f"I{i}" for i in range(draw(st.integers(1, 4)))]
    classes = [(draw(st.integers(0, 4)), tuple(draw(st.sets(st.sampled_from(members), min_size=1)))) for _ in range(draw(st.integers(1, 4)))]
    return classes, {m: draw(st.integers(-1, 5)) for m in members}


@settings(max_examples=200)
@given(transports())
def test_one_sided_checks_agree_with_networkx_max_flow(case):
    import networkx as nx

    classes, bounds = case
    graph = nx.DiGraph()
    for i, (q, hosts) in enumerate(classes):
        graph.add_edge("src", ("c", i), capacity=q)
        for m in hosts:
            graph.add_edge(("c", i), ("m", m))
    for m, v in bounds.items():
        graph.add_edge(("m", m), "snk", capacity=max(0, v))
    value = nx.maximum_flow_value(graph, "src", "snk")
    assert flow.fits_under(classes, bounds).ok == (value >= sum(q for q, _ in classes))
    assert flow.fills_over(classes, bounds).ok == (value >= sum(max(0, v) for v in bounds.values()))
