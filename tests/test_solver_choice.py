"""The box-choice model and its LP certificates: every layout is a point, every bound is a bound, a wrong certificate proves nothing."""

import functools
import itertools
import random
import sys
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from rebalproof.solver import placement
from rebalproof.solver.choice import ChoiceModel, options, own_options
from rebalproof.solver.linear import Linear, dual_bound, fixed_bounds, relaxation
from rebalproof.solver.objectives import evaluate, imbalance
from rebalproof.solver.optimize import optimal
from rebalproof.solver.placement import place_standbys
from test_solver import analysed

sys.path.insert(0, str(ROOT / "bench"))
from solver import cluster  # noqa: E402  (the benchmark's cluster families)


@st.composite
def small_models(draw):
    """A small integer program: 2-3 variables in [0, 3], 1-3 rows, an integer objective."""
    m = Linear()
    xs = [m.var(0, draw(st.integers(1, 3))) for _ in range(draw(st.integers(2, 3)))]
    for _ in range(draw(st.integers(1, 3))):
        terms = {x: draw(st.integers(-2, 2)) for x in xs}
        lo = draw(st.one_of(st.none(), st.integers(-2, 4)))
        hi = draw(st.one_of(st.none(), st.integers(-2, 6)))
        m.row(terms, lo=lo, hi=hi)
    m.minimise({x: draw(st.integers(-3, 3)) for x in xs})
    return m


def least_integer(m: Linear):
    points = [x for x in itertools.product(*(range(lo, hi + 1) for lo, hi in zip(m.lower, m.upper))) if m.keeps(x)]
    return min((m.value(x) for x in points), default=None)


def _textbook_bound(m: Linear, ys) -> Fraction:
    """The module doc's formula in fractions, term by term: what :func:`dual_bound`'s integer arithmetic must equal."""
    reduced = {j: Fraction(c) for j, c in m.objective.items()}
    total = Fraction(0)
    for (terms, lo, hi), y in zip(m.rows, ys):
        y = Fraction(y)
        if y == 0 or (y > 0 and lo is None) or (y < 0 and hi is None):
            continue
        total += y * (lo if y > 0 else hi)
        for j, a in terms.items():
            reduced[j] = reduced.get(j, 0) - y * a
    return total + sum(min(r * m.lower[j], r * m.upper[j]) for j, r in reduced.items())


@settings(max_examples=80)
@given(small_models(), st.lists(st.fractions(min_value=-5, max_value=5, max_denominator=1 << 24), min_size=3, max_size=3),
       st.lists(st.fractions(min_value=-3, max_value=3, max_denominator=9), min_size=3, max_size=3))
def test_the_integer_check_is_the_textbook_bound(m, ys, costs):
    """dual_bound works in integers over a common denominator: it equals the formula in fractions, also with fractional costs (priced objectives)."""
    assert dual_bound(m, ys[: len(m.rows)]) == _textbook_bound(m, ys[: len(m.rows)])
    m.minimise({j: c for j, c in zip(range(len(m.lower)), costs)})
    assert dual_bound(m, ys[: len(m.rows)]) == _textbook_bound(m, ys[: len(m.rows)])


@settings(max_examples=60)
@given(small_models(), st.lists(st.fractions(min_value=-5, max_value=5, max_denominator=7), min_size=3, max_size=3))
def test_any_multipliers_prove_only_true_bounds(m, ys):
    """Soundness of the certificate check: whatever the multipliers, the bound never passes the least integer point."""
    best = least_integer(m)
    if best is not None:
        assert dual_bound(m, ys[: len(m.rows)]) <= best


@settings(max_examples=40)
@given(small_models())
def test_the_lp_multipliers_prove_the_relaxation(m):
    """GLOP's duals, rounded and re-checked, prove at least nearly the relaxation's value, and never more than an integer point."""
    lp = relaxation(m)
    best = least_integer(m)
    if lp is None or best is None:
        return
    assert lp.bound <= best and lp.integer_bound <= best
    assert lp.bound >= Fraction(lp.value) - Fraction(1, 1000)


@settings(max_examples=60)
@given(small_models(), st.lists(st.fractions(min_value=-5, max_value=5, max_denominator=7), min_size=3, max_size=3), st.integers(-4, 8))
def test_reduced_cost_fixing_keeps_every_cheap_enough_point(m, ys, limit):
    """Whatever the multipliers, every integer point of objective at most ``limit`` keeps the narrowed bounds."""
    lower, upper = fixed_bounds(m, ys[: len(m.rows)], limit)
    for x in itertools.product(*(range(lo, hi + 1) for lo, hi in zip(m.lower, m.upper))):
        if m.keeps(x) and m.value(x) <= limit:
            assert all(lo <= v <= hi for v, lo, hi in zip(x, lower, upper)), (x, lower, upper)


def test_a_wrong_certificate_is_rejected():
    """Multipliers claiming more than the rows give are rejected: the recomputed bound is lower than the claim."""
    m = Linear()
    x, y = m.var(0, 4), m.var(0, 4)
    m.row({x: 1, y: 1}, lo=3)
    m.minimise({x: 2, y: 3})
    assert dual_bound(m, [2]) == 6  # the true optimum: x = 3
    assert dual_bound(m, [3]) < 6  # 3 * (x + y >= 3) makes x's cost -1: x's upper bound charges it back
    assert dual_bound(m, [-1]) == 0  # the row has no upper bound: a negative multiplier proves nothing


def test_options_list_every_own_box():
    caps = {"A": 1, "B": 2, "C": 4}
    rng = random.Random(1)
    for _ in range(300):
        n = {m: rng.randint(0, 5) for m in caps}
        total = sum(n.values())
        top = max(Fraction(n[m], c) for m, c in caps.items())
        k = imbalance(n, caps)
        assert (int(top * 4), k) in options(caps, 4, total=total, least=0, top=Fraction(0), widest=k + rng.randint(0, 3))


#: Small clusters of the benchmark's families whose optimum the tests walk around: (seed, leaving).
SMALL_CLUSTERS = [(5, False), (6, True), (8, True)]


@functools.cache
def solved_cluster(seed: int, leaving: bool):
    """A 6x20 cluster of the benchmark's families, its capacity-path analyses and its proven
    optimum: (view, prob, inst, subs, best, start), ``start`` the optimum's active of each task."""
    view = cluster(6, 20, seed=seed, leaving=leaving)
    prob, inst, subs = analysed(view)
    best = optimal(view, "ha", timeout=120)
    assert best.status == "optimal"
    start = {t: m for m, a in best.assignment.members for t in a.active}
    return view, prob, inst, subs, best, start


@pytest.mark.parametrize("seed, leaving", SMALL_CLUSTERS)
def test_every_layout_of_least_imbalance_is_a_point_of_the_model(seed, leaving):
    """Each layout's own options keep every row, scored at its spread (then at most its cost): the model's bounds are bounds."""
    view, prob, inst, subs, best, start = solved_cluster(seed, leaving)
    facts = prob.facts
    spread_model = ChoiceModel(prob, inst, subs, slack=6)
    rng = random.Random(seed)
    checked = 0
    for _ in range(300):  # layouts near the optimum: random ones seldom have the least imbalance
        host = dict(start)
        for t in rng.sample(view.task_ids, rng.randint(0, 4)):
            host[t] = rng.choice(facts.active_hosts[t])
        values = evaluate(view, place_standbys(view, facts, host), facts)
        if values.imbalance != inst.least:
            continue
        if any(k > subs[g].least + 6 for g, (_, k) in own_options(prob, host, spread_model.denominator).items() if g != "(all)"):
            continue
        x = spread_model.point(host)
        assert spread_model.model.keeps(x) and spread_model.model.value(x) == values.spread
        cost_model = ChoiceModel(prob, inst, subs, slack=values.spread - sum(g.least for g in subs.values()), spread_at_most=values.spread)
        y = cost_model.point(host)
        # the point keeps the most tasks on their owners its counts allow: never more than the layout costs, exactly what its decoding costs
        assert cost_model.model.keeps(y) and cost_model.model.value(y) <= prob.weight * values.moves + values.restore - prob.const_restore
        decoded = evaluate(view, place_standbys(view, facts, cost_model.layout(y)), facts)
        assert cost_model.model.value(y) == prob.weight * decoded.moves + decoded.restore - prob.const_restore
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("seed, leaving", [(441, False), (441, True)])
def test_the_choice_path_proves_cluster_optima_by_checked_multipliers(seed, leaving):
    """At 10x50 the spread is proven by the LP's multipliers (re-checked here), and every answer passes the rules."""
    view = cluster(10, 50, seed=seed, leaving=leaving)
    result = placement.solve_placement(view, "ha", timeout=120)
    assert result.status == "optimal" and result.engine == "flow+choice"
    spread = result.bound("spread")
    assert spread.proven and spread.method in ("lp-dual", "flow-cut", "arithmetic")
    assert result.to_json()["objectives"][1]["checked"] is True


def test_a_bound_on_a_solvers_word_says_it_is_not_checked():
    from rebalproof.solver.result import Bound

    assert not Bound("moves", 7, 7, "scip", "").to_json()["checked"] and Bound("moves", 7, 7, "lp-dual", "").to_json()["checked"]


@pytest.mark.parametrize("seed, leaving", SMALL_CLUSTERS)
def test_a_dive_gives_a_layout_of_least_imbalance_never_below_the_optimum(seed, leaving):
    """The LP dive (a heuristic) ends in boxes a flow fits: a layout keeping the rules, of least imbalance, its spread at or above the proven least."""
    from rebalproof.solver.choice import _dived
    from rebalproof.solver.placement import Deadline, _flow_stage3
    from rebalproof.solver.rules import violations

    view, prob, inst, subs, best, start = solved_cluster(seed, leaving)
    model = ChoiceModel(prob, inst, subs, slack=6)
    found = _dived(model, lambda i, s: _flow_stage3(prob, i, s), Deadline(None), 1.0)
    assert found is not None
    answer = place_standbys(view, prob.facts, found[0])
    assert not violations(view, answer, prob.facts.rules, facts=prob.facts)
    values = evaluate(view, answer, prob.facts)
    assert values.imbalance == inst.least and values.spread >= best.bound("spread").value


@pytest.mark.parametrize("seed, leaving", SMALL_CLUSTERS)
def test_a_dive_on_moves_gives_a_layout_within_the_spread_never_below_the_optimum(seed, leaving):
    """The LP dive over the cost model, bare or with tighten's option rows made whole (a heuristic): a layout keeping the rules, of least imbalance, spread at most the optimum, and (spread, moves, restore) never lexicographically below the proven optimum."""
    from rebalproof.solver.choice import _dived
    from rebalproof.solver.option_bound import tighten, whole_rows
    from rebalproof.solver.placement import Deadline, _flow_stage3
    from rebalproof.solver.rules import violations

    view, prob, inst, subs, best, start = solved_cluster(seed, leaving)
    spread = best.bound("spread").value
    costed = ChoiceModel(prob, inst, subs, slack=6, spread_at_most=spread)
    rowed = ChoiceModel(prob, inst, subs, slack=6, spread_at_most=spread)
    tighten(rowed, spread, relaxation(rowed.model), target=10**9, deadline_end=None, rounds=2)
    optimum = (spread, best.bound("moves").value, best.bound("restore").value)
    for over in (None, whole_rows(rowed.model)):
        found = _dived(costed, lambda i, s: _flow_stage3(prob, i, s), Deadline(None), 1.0, over=over)
        assert found is not None
        answer = place_standbys(view, prob.facts, found[0])
        assert not violations(view, answer, prob.facts.rules, facts=prob.facts)
        values = evaluate(view, answer, prob.facts)
        assert values.imbalance == inst.least and values.spread == spread
        assert (values.spread, values.moves, values.restore) >= optimum


@settings(max_examples=40)
@given(small_models(), st.lists(st.tuples(st.lists(st.integers(-2, 2), min_size=3, max_size=3), st.integers(-2, 4)), min_size=1, max_size=3))
def test_a_growing_relaxation_answers_as_one_built_afresh(m, extra):
    """GrowingRelaxation (GLOP loaded once, rows added between solves) gives relaxation()'s value after every added row, its bound checked over the whole model."""
    from rebalproof.solver.linear import GrowingRelaxation

    growing = GrowingRelaxation(m)
    for coefficients, lo in [(None, None), *extra]:
        if coefficients is not None:
            m.row(dict(zip(range(len(m.lower)), coefficients)), lo=lo)
        fresh, grown = relaxation(m), growing.solve()
        assert (fresh is None) == (grown is None)
        if fresh is not None:
            assert abs(fresh.value - grown.value) < 1e-6 and grown.bound == dual_bound(m, grown.multipliers)
    m.lower[0] -= 1
    with pytest.raises(ValueError):
        growing.solve()


def test_the_options_walk_stops_at_its_deadline_or_its_level_cap(monkeypatch):
    """Red team 15: with capacities 1..16 (D = 720,720) and 300 tasks, or one capacity near 2^63,
    the walk over the levels p ran for minutes past --timeout, or for ever; it stops now, and the
    search keeps the layouts found before (INCONCLUSIVE, the best found)."""
    import math
    import time

    from rebalproof.solver import choice

    caps = {"I1": 1, "I2": 1, "I3": (1 << 63) - 1, "I4": 1 << 40}
    d = math.lcm(*caps.values())
    with pytest.raises(choice.TooManyLevels):
        choice.options(caps, d, total=7, least=0, top=Fraction(0), widest=7, end=time.monotonic() - 1)
    monkeypatch.setattr(choice, "MOST_LEVELS", 10_000)
    with pytest.raises(choice.TooManyLevels):
        choice.options(caps, d, total=7, least=0, top=Fraction(0), widest=7)
    assert choice.options({"I1": 1, "I2": 2}, 2, total=3, least=0, top=Fraction(1), widest=3)  # an ordinary walk ends by itself
