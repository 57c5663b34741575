"""The per-option bound on moves and restore: each subtopology's options taken whole, mixed by exact dynamic programming; never above a layout."""

import itertools
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalproof.solver.choice import ChoiceModel
from rebalproof.solver.linear import relaxation
from rebalproof.solver.objectives import evaluate
from rebalproof.solver.linear import Linear
from rebalproof.solver.option_bound import add_option_rows, least_mix, option_bound, tighten, whole_rows
from rebalproof.solver.placement import place_standbys
from test_solver_choice import SMALL_CLUSTERS, solved_cluster


@settings(max_examples=80)
@given(st.dictionaries(st.sampled_from("abcd"), st.dictionaries(st.integers(0, 3), st.integers(-5, 9), min_size=1, max_size=3), min_size=1, max_size=4),
       st.integers(0, 8))
def test_least_mix_is_the_brute_force_least(per_width, budget):
    subs = sorted(per_width)
    sums = [sum(per_width[s][k] for s, k in zip(subs, ks))
            for ks in itertools.product(*(sorted(per_width[s]) for s in subs)) if sum(ks) <= budget]
    assert least_mix(per_width, budget) == (min(sums) if sums else None)


@pytest.mark.parametrize("seed, leaving", SMALL_CLUSTERS)
def test_the_option_bound_never_passes_a_layout(seed, leaving):
    """Every layout of least imbalance and spread at most U costs at least the bound at U, the optimum included."""
    view, prob, inst, subs, best, start = solved_cluster(seed, leaving)
    facts = prob.facts
    floor = sum(g.least for g in subs.values())
    rng = random.Random(seed)
    bounds: dict = {}
    models: dict = {}
    checked = 0
    for _ in range(300):
        host = dict(start)
        for t in rng.sample(view.task_ids, rng.randint(0, 4)):
            host[t] = rng.choice(facts.active_hosts[t])
        values = evaluate(view, place_standbys(view, facts, host), facts)
        if values.imbalance != inst.least or values.spread > floor + 6:
            continue
        if values.spread not in bounds:  # no prices, the LP's prices, and any prices: each a true bound
            costed = ChoiceModel(prob, inst, subs, slack=6, spread_at_most=values.spread)
            lp = relaxation(costed.model)
            noise = [Fraction(rng.randint(-3 * prob.weight, 3 * prob.weight), rng.randint(1, 4)) for _ in costed.model.rows]
            found = [option_bound(costed, values.spread, multipliers=ys) for ys in (None, lp.multipliers, noise)]
            aimed = prob.weight * values.moves + values.restore - prob.const_restore + 3 * prob.weight  # subgradient steps aimed above the layout
            found.append(option_bound(costed, values.spread, multipliers=lp.multipliers, target=aimed, rounds=4))
            assert found[-1].bound >= found[1].bound  # the steps keep the best bound
            # priced by the LP's multipliers: about as tight as the LP at least, where every option's LP answered
            assert found[1].unsolved or found[1].bound >= lp.bound - 1
            tight = tighten(ChoiceModel(prob, inst, subs, slack=6, spread_at_most=values.spread), values.spread, lp, target=10**9, deadline_end=None, rounds=4)
            assert tight.bound >= lp.integer_bound
            bounds[values.spread] = max(max(f.bound for f in found), tight.bound)
            rows = {}
            for f in found[1:]:  # the options' bounds as rows, at each prices: valid inequalities
                with_rows = ChoiceModel(prob, inst, subs, slack=6, spread_at_most=values.spread)
                assert add_option_rows(with_rows, f) > 0
                rows.setdefault(values.spread, []).append(with_rows)
            models[values.spread] = rows[values.spread]
        for with_rows in models[values.spread]:
            assert with_rows.model.keeps(with_rows.point(host))
            assert whole_rows(with_rows.model).keeps(with_rows.point(host))  # made whole for a tree: still true at the layout
        assert bounds[values.spread] <= prob.weight * values.moves + values.restore - prob.const_restore
        checked += 1
    assert checked >= 10
    top = evaluate(view, place_standbys(view, facts, start), facts)
    assert bounds.get(top.spread) is None or bounds[top.spread] <= prob.weight * top.moves + top.restore - prob.const_restore


@settings(max_examples=60)
@given(st.lists(st.tuples(st.lists(st.fractions(min_value=-4, max_value=4, max_denominator=9), min_size=3, max_size=3),
                          st.fractions(min_value=-3, max_value=6, max_denominator=7)), min_size=1, max_size=3))
def test_rows_made_whole_keep_every_point(rows):
    """``whole_rows``: every integer point of the model keeps the rows made whole (they only ever relax), and every coefficient is whole."""
    m = Linear()
    xs = [m.var(0, 2) for _ in range(3)]
    for coefficients, lo in rows:
        m.row(dict(zip(xs, coefficients)), lo=lo)
    m.minimise({xs[0]: 1})
    whole = whole_rows(m)
    assert all(a == int(a) for terms, _, _ in whole.rows for a in terms.values())
    for x in itertools.product(range(3), repeat=3):
        if m.keeps(x):
            assert whole.keeps(x)


def test_only_rows_over_variables_at_least_zero_are_made_whole():
    m = Linear()
    x = m.var(-1, 2)
    m.row({x: Fraction(1, 2)}, lo=0)
    with pytest.raises(ValueError):
        whole_rows(m)


@pytest.mark.parametrize("seed, leaving", SMALL_CLUSTERS)
def test_a_least_mix_gives_layouts_of_least_imbalance_within_the_spread(seed, leaving):
    """The mix an option bound names is its least mix (each option the least of its width) within the spread, and a flow within the mix's boxes (``_mixed``) is a layout of least imbalance, spread at most U, costing no less than the bound."""
    from rebalproof.solver.choice import _mixed
    from rebalproof.solver.placement import Deadline, _flow_stage3

    view, prob, inst, subs, best, start = solved_cluster(seed, leaving)
    spread = best.bound("spread").value
    costed = ChoiceModel(prob, inst, subs, slack=6, spread_at_most=spread)
    lp = relaxation(costed.model)
    found = option_bound(costed, spread, multipliers=lp.multipliers)
    mix = dict(found.mix)
    assert set(mix) == set(costed.options) and all(mix[g] in costed.options[g] for g in mix)
    assert mix["(all)"][1] == inst.least and sum(k for g, (_, k) in mix.items() if g != "(all)") <= spread
    for s in found.per_option:  # each subtopology's option is the least of its width, and together they are the least mix
        assert found.per_option[s][costed.options[s].index(mix[s])] == found.per_width[s][mix[s][1]]
    assert sum(found.per_width[s][mix[s][1]] for s in found.per_width) == least_mix(found.per_width, spread)
    tight = tighten(ChoiceModel(prob, inst, subs, slack=6, spread_at_most=spread), spread, lp, target=10**9, deadline_end=None, rounds=3)
    assert 1 <= len(tight.mixes) <= tight.rounds
    laid = _mixed(prob, tight, lambda i, s: _flow_stage3(prob, i, s), Deadline(None))
    if laid is None:
        return  # no flow fits the mixes' boxes (the bound relaxes the instance's rows): nothing to judge
    values = evaluate(view, place_standbys(view, prob.facts, laid[0]), prob.facts)
    assert values.imbalance == inst.least and values.spread <= spread
    assert prob.weight * values.moves + values.restore - prob.const_restore >= tight.bound
    assert (values.spread, values.moves) >= (best.bound("spread").value, best.bound("moves").value)
