"""The checked branch and bound (solver/tree.py): its trees prove the integer least, never more, and a wrong tree is rejected."""

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from rebalproof.solver import placement
from rebalproof.solver.linear import Linear
from rebalproof.solver.tree import SCALE, Node, check_tree, prove_at_least
from test_solver_choice import cluster, least_integer, small_models


@st.composite
def choice_models(draw):
    """Two groups picking one option each (0/1 variables, a pick row), 1-2 counts in [0, 3], 1-3 rows over all, an integer objective."""
    m = Linear()
    groups = []
    for _ in range(2):
        zs = [m.var(0, 1) for _ in range(draw(st.integers(2, 3)))]
        groups.append((m.row(dict.fromkeys(zs, 1), lo=1, hi=1), zs))
    xs = [m.var(0, draw(st.integers(1, 3))) for _ in range(draw(st.integers(1, 2)))]
    every = [z for _, zs in groups for z in zs] + xs
    for _ in range(draw(st.integers(1, 3))):
        terms = {v: draw(st.integers(-3, 3)) for v in every}
        m.row(terms, lo=draw(st.one_of(st.none(), st.integers(-2, 4))), hi=draw(st.one_of(st.none(), st.integers(-1, 6))))
    m.minimise({v: draw(st.integers(-3, 4)) for v in every})
    return m, groups


@st.composite
def random_trees(draw, rows: int, variables: int, depth: int = 3):
    """Any tree: random multipliers, random splits (what a broken or lying prover could hand over)."""
    multipliers = tuple((i, draw(st.integers(-5, 5)) * SCALE // draw(st.integers(1, 4))) for i in range(rows))
    if depth == 0 or draw(st.booleans()):
        return Node(multipliers)
    branch = ("split", draw(st.integers(0, variables - 1)), draw(st.integers(-1, 3)))
    return Node(multipliers, branch, (draw(random_trees(rows, variables, depth - 1)), draw(random_trees(rows, variables, depth - 1))))


@settings(max_examples=60)
@given(small_models())
def test_a_tree_proves_the_least_integer_point_and_no_more(m):
    """At the least (brute force) a tree is found and accepted; one above it is never found, and the proof of the least does not pass for more."""
    least = least_integer(m)
    if any(lo is not None and hi is not None and lo > hi for _, lo, hi in m.rows):
        assert prove_at_least(m, 0).root is None  # the prover declines rows no LP solver takes
        return
    if least is None:  # no integer point: a tree proves any target (Farkas rays at the leaves)
        proof = prove_at_least(m, 10**6)
        assert proof.root is not None and check_tree(m, 10**6, proof.root)
        return
    proof = prove_at_least(m, least)
    assert proof.root is not None and check_tree(m, least, proof.root)
    assert not check_tree(m, least + 1, proof.root)
    above = prove_at_least(m, least + 1)
    assert above.root is None
    assert above.better is None or (m.keeps(above.better) and m.value(above.better) <= least)


@settings(max_examples=60)
@given(choice_models())
def test_choice_branches_cover_every_point(case):
    """With groups picking one option each (the box-choice model's shape), the trees found prove exactly the brute-force least."""
    m, groups = case
    least = least_integer(m)
    if any(lo is not None and hi is not None and lo > hi for _, lo, hi in m.rows):
        return
    target = 10**6 if least is None else least
    proof = prove_at_least(m, target, choices=groups)
    assert proof.root is not None and check_tree(m, target, proof.root)
    if least is not None:
        assert prove_at_least(m, least + 1, choices=groups).root is None


@settings(max_examples=150)
@given(small_models(), st.data())
def test_no_tree_proves_a_bound_above_the_least(m, data):
    """Soundness of the check: whatever tree is handed over, it never proves a target above the least integer point."""
    least = least_integer(m)
    if least is None:
        return
    tree = data.draw(random_trees(len(m.rows), len(m.lower)))
    assert not check_tree(m, least + 1, tree)


@settings(max_examples=60)
@given(choice_models())
def test_an_improving_tree_proves_the_best_point_it_meets(case):
    """With ``improve``, a target far above the least: the search meets points, lowers its target to each, and a tree it finishes proves exactly the least (brute force), the point it keeps being one of that value."""
    m, groups = case
    least = least_integer(m)
    if least is None or any(lo is not None and hi is not None and lo > hi for _, lo, hi in m.rows):
        return
    high = least + 50
    proof = prove_at_least(m, high, choices=groups, improve=True)
    if proof.better is not None:
        assert m.keeps(proof.better) and least <= m.value(proof.better) < high
    if proof.root is not None:
        assert proof.target == least and check_tree(m, least, proof.root) and not check_tree(m, least + 1, proof.root)
        assert proof.better is not None and m.value(proof.better) == least


def test_an_improving_tree_takes_a_point_whose_box_bounds_are_not_integer_variables():
    """The box-choice model's box bounds are continuous variables, whole wherever the picks are: a point the LP meets there is taken (rounded, kept by exact arithmetic) and proven least."""
    m = Linear()
    z = [m.var(0, 1) for _ in range(3)]
    pick = m.row(dict.fromkeys(z, 1), lo=1, hi=1)
    h = m.var(0, 3, integer=False)
    m.row({h: 1, z[0]: -1, z[1]: -2, z[2]: -3}, lo=0, hi=0)  # h = 1, 2 or 3 by the option
    x = m.var(0, 3)
    m.row({x: 1, h: -1}, lo=0)  # x >= h
    m.minimise({x: 2, z[2]: 1})
    assert least_integer(m) == 2  # z0 picked: h = x = 1
    proof = prove_at_least(m, 100, choices=[(pick, z)], improve=True)
    assert proof.root is not None and proof.target == 2 and check_tree(m, 2, proof.root) and not check_tree(m, 3, proof.root)
    assert m.keeps(proof.better) and m.value(proof.better) == 2
    assert prove_at_least(m, 100, choices=[(pick, z)]).root is None  # without improve: no proof of a target above the least


def _one_choice_model():
    """Pick one of three options of widths 1, 2, 4 that set a count to 1, 2 or 3; the count must be at least 1.5: the least is 2."""
    m = Linear()
    z = [m.var(0, 1) for _ in range(3)]
    x = m.var(0, 3)
    pick = m.row(dict.fromkeys(z, 1), lo=1, hi=1)
    m.row({x: 1, z[0]: -1, z[1]: -2, z[2]: -3}, lo=0, hi=0)  # x = 1, 2 or 3 by the option
    m.row({x: 2}, lo=3)  # x >= 1.5: the first option is out
    m.minimise({z[0]: 1, z[1]: 2, z[2]: 4})
    return m, pick, z


def test_wrong_trees_are_rejected():
    m, pick, z = _one_choice_model()
    assert least_integer(m) == 2
    proof = prove_at_least(m, 2, choices=[(pick, z)])
    assert proof.root is not None and check_tree(m, 2, proof.root)
    assert not check_tree(m, 3, proof.root)
    bare = Node(proof.root.multipliers)  # the root's multipliers alone, no branch: the LP does not reach 2
    assert check_tree(m, 2, bare) == (proof.leaves == 1)
    assert not check_tree(m, 2, Node(()))  # no multipliers prove nothing above the variables' own bounds
    wrong_row = Node((), ("choice", 2, (z[0],)), (Node(()), Node(())))  # row 2 is no pick row
    assert not check_tree(m, 2, wrong_row)
    stranger = Node((), ("choice", pick, (99,)), (Node(()), Node(())))  # a variable outside the group
    assert not check_tree(m, 2, stranger)
    fractional = Node((), ("split", z[0], 0.5), (Node(()), Node(())))
    assert not check_tree(m, 2, fractional)
    lying = Node(tuple((i, 1000 * v) for i, v in proof.root.multipliers))  # multipliers blown up: the reduced costs charge it back
    assert not check_tree(m, 3, lying)


def test_brute_force_agreement_on_random_choice_models():
    """A deterministic sweep besides hypothesis: 40 random two-group models, the tree's target always the brute-force least."""
    rng = random.Random(13)
    for _ in range(40):
        m = Linear()
        groups = []
        for _ in range(2):
            zs = [m.var(0, 1) for _ in range(rng.randint(2, 4))]
            groups.append((m.row(dict.fromkeys(zs, 1), lo=1, hi=1), zs))
        xs = [m.var(0, 2) for _ in range(2)]
        every = [z for _, zs in groups for z in zs] + xs
        for _ in range(2):
            m.row({v: rng.randint(-2, 3) for v in every}, lo=rng.randint(0, 3))  # one-sided: never an empty range
        m.minimise({v: rng.randint(0, 4) for v in every})
        points = [p for p in itertools.product(*(range(lo, hi + 1) for lo, hi in zip(m.lower, m.upper))) if m.keeps(p)]
        least = min((m.value(p) for p in points), default=None)
        target = 10**6 if least is None else least
        proof = prove_at_least(m, target, choices=groups)
        assert proof.root is not None and check_tree(m, target, proof.root)


def test_cluster_optima_are_proven_by_checked_trees():
    """Leaving 20x200 seed 442: the LP proves spread >= 65 and the tree 66, SCIP's layout meets it; every proof is rebalproof's own."""
    view = cluster(20, 200, seed=442, leaving=True)
    result = placement.solve_placement(view, "ha", timeout=120)
    assert result.status == "optimal"
    spread = result.bound("spread")
    assert spread.method == "lp-tree" and spread.proven
    assert all(o["checked"] for o in result.to_json()["objectives"])


def test_doctests():
    import doctest

    from rebalproof.solver import tree

    assert doctest.testmod(tree).failed == 0


@settings(max_examples=60)
@given(choice_models())
def test_a_dive_picks_one_whole_option_per_group(case):
    """The dive (a heuristic for layouts) ends with every group's pick whole and the rows kept, or gives up: never a half-picked point."""
    from rebalproof.solver.tree import dive

    m, groups = case
    if any(lo is not None and hi is not None and lo > hi for _, lo, hi in m.rows):
        return
    point = dive(m, groups)
    if point is None:
        return
    for _, zs in groups:
        assert sorted(round(point[z], 6) for z in zs)[-1] == 1.0 and sum(round(point[z], 6) for z in zs) == 1.0
    for terms, lo, hi in m.rows:
        s = sum(a * point[j] for j, a in terms.items())
        assert (lo is None or s >= lo - 1e-6) and (hi is None or s <= hi + 1e-6)


def test_an_empty_node_is_closed_by_phase_one_when_the_ray_misses():
    """Where HiGHS's ray (rounded) proves nothing, the phase-one LP's multipliers prove the node empty, checked like any bound."""
    from rebalproof.solver.tree import _Exact, _NodeLP, _rays, _without_objective

    m = Linear()
    x, y = m.var(0, 1), m.var(0, 1)
    m.row({x: 3, y: 5}, lo=9)  # at most 8 within the bounds: no point at all
    m.minimise({x: 1})
    lp = _NodeLP(m)
    bare = _Exact(_without_objective(m))
    useless = ((0, 0),)
    proofs = [ray for ray in _rays([useless], lp, m.lower, m.upper, None) if bare.bound(ray, m.lower, m.upper)[0] > 0]
    assert proofs and useless not in proofs
    proof = prove_at_least(m, 10**6)
    assert proof.root is not None and check_tree(m, 10**6, proof.root)


def test_scip_is_given_a_proven_bound_as_a_row_of_a_copy():
    """The row ``objective >= lower`` goes to SCIP's copy only; SCIP's point keeps it and the model is untouched."""
    from rebalproof.solver.choice import _at_least
    from rebalproof.solver.linear import integer_solution

    m = Linear()
    x, y = m.var(0, 3), m.var(0, 3)
    m.row({x: 1, y: 1}, lo=1)
    m.minimise({x: 2, y: 3})
    bounded = _at_least(m, 3)
    assert len(m.rows) == 1 and len(bounded.rows) == 2
    status, point, bound = integer_solution(bounded, seconds=10)
    assert status == "optimal" and m.value(point) == 3 and bound == 3


@settings(max_examples=60)
@given(choice_models())
def test_a_search_paused_after_every_node_and_resumed_proves_what_one_search_does(case):
    """Resuming (``resume=``) keeps the tree built so far: stopped after each LP and resumed, the search proves exactly the brute-force least, with the same number of LPs as one uninterrupted search, and its tree passes the check."""
    m, groups = case
    least = least_integer(m)
    if any(lo is not None and hi is not None and lo > hi for _, lo, hi in m.rows):
        return
    target = 10**6 if least is None else least
    whole = prove_at_least(m, target, choices=groups, improve=True)
    step = prove_at_least(m, target, choices=groups, improve=True, max_nodes=1)
    while step.paused is not None:
        step = prove_at_least(m, target, choices=groups, improve=True, max_nodes=step.nodes + 1, resume=step.paused)
    assert (step.root is None) == (whole.root is None) and step.nodes == whole.nodes
    if step.root is not None:
        assert check_tree(m, step.target, step.root) and step.target == whole.target
        if least is not None:
            assert step.target == least and not check_tree(m, least + 1, step.root)


def test_a_paused_search_resumes_on_its_own_model_only():
    m, pick, z = _one_choice_model()
    other, _, _ = _one_choice_model()
    paused = prove_at_least(m, 2, choices=[(pick, z)], max_nodes=0).paused
    assert paused is not None
    try:
        prove_at_least(other, 2, choices=[(pick, z)], resume=paused)
    except ValueError:
        pass
    else:
        raise AssertionError("a search resumed on another model")
    assert prove_at_least(m, 2, choices=[(pick, z)], resume=paused).root is not None


def _wide_choice_model(seed: int):
    """Nine groups picking one of four options, three counts, four random rows: trees of 45 to 479 nodes at seeds 1, 2 and 8 (many jobs)."""
    rng = random.Random(seed)
    m = Linear()
    groups = []
    for _ in range(9):
        zs = [m.var(0, 1) for _ in range(4)]
        groups.append((m.row(dict.fromkeys(zs, 1), lo=1, hi=1), zs))
    xs = [m.var(0, 5) for _ in range(3)]
    every = [z for _, zs in groups for z in zs] + xs
    for _ in range(4):
        m.row({v: rng.randint(-3, 5) for v in every}, lo=rng.randint(3, 9))
    m.minimise({v: rng.randint(3, 11) for v in every})
    return m, groups


def test_a_search_shared_with_a_helper_process_gives_what_one_process_gives(monkeypatch):
    """The open subtrees are jobs (solver/tree_share.py), each searched from its parent's LP basis
    for the target of the job it came from: the tree, its target and the point kept are the same
    whether a helper process takes jobs or this process searches them all (the helper is only
    asked for where a core is spare, so a run must not depend on it); the tree passes the check."""
    from rebalproof.solver import tree_share

    monkeypatch.setattr(tree_share, "HELPER_AFTER", 0.0)
    asked = []
    job = tree_share.Helper.job

    def counted(self, *args):
        answer = job(self, *args)
        asked.append(answer is not None)
        return answer

    monkeypatch.setattr(tree_share.Helper, "job", counted)
    for seed in (1, 2, 8):
        m, groups = _wide_choice_model(seed)
        high = 10**4
        monkeypatch.setenv("REBALPROOF_TREE_HELPER", "0")
        alone = prove_at_least(m, high, choices=groups, improve=True)
        monkeypatch.setenv("REBALPROOF_TREE_HELPER", "1")
        shared = prove_at_least(m, high, choices=groups, improve=True)
        assert alone.root is not None and check_tree(m, alone.target, alone.root)
        assert (shared.root, shared.target, shared.better, shared.nodes) == (alone.root, alone.target, alone.better, alone.nodes)
        assert m.keeps(alone.better) and m.value(alone.better) == alone.target
    assert any(asked), "no job went to the helper"
