"""The solver: engines agree with each other and with brute force; answers pass the oracle."""

import doctest
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalproof.model.assignment import Assignment
from rebalproof.model.view import Config, Member, RebalanceInput, Task
from rebalproof.properties import check_assignment
from rebalproof.solver import encode, flow, objectives, optimize, placement, rules
from rebalproof.solver.objectives import OBJECTIVES, evaluate
from rebalproof.solver.optimize import optimal
from rebalproof.solver.rules import Facts, violations

LAGS = (None, 0, 5000, 20000, 80000)


def draw_tasks_and_ids(draw, max_members: int, max_tasks: int):
    """A drawn view's first draws: its tasks (``<subtopology>_<partition>`` over one or two
    subtopologies, each stateful or not) and its member ids ``I1 .. In``."""
    n_members = draw(st.integers(1, max_members))
    n_tasks = draw(st.integers(1, max_tasks))
    subs = draw(st.integers(1, 2))
    tasks = tuple(Task(id=f"{i % subs}_{i // subs}", stateful=draw(st.booleans())) for i in range(n_tasks))
    return tasks, [f"I{i + 1}" for i in range(n_members)]


@st.composite
def views(draw, max_members=3, max_tasks=3):
    """Small KIP-441-style views: lags, previous actives/standbys, capacities, leaving members."""
    tasks, ids = draw_tasks_and_ids(draw, max_members, max_tasks)
    held = {m: {"active": [], "standby": []} for m in ids}
    for t in tasks:
        owner = draw(st.sampled_from(ids + [None]))
        if owner:
            held[owner]["active"].append(t.id)
        spare = draw(st.sampled_from(ids + [None]))
        if spare and spare != owner and t.stateful:
            held[spare]["standby"].append(t.id)
    members = []
    for m in ids:
        lags = {}
        for t in tasks:
            if t.stateful:
                lag = draw(st.sampled_from(LAGS))
                if lag is not None:
                    lags[t.id] = lag
        members.append(Member(id=m, capacity=draw(st.sampled_from((1, 1, 2))), leaving=draw(st.sampled_from((False, False, False, True))),
                              active=tuple(held[m]["active"]), standby=tuple(held[m]["standby"]), lags=lags))
    config = Config(num_standby_replicas=draw(st.integers(0, 2)), max_warmup_replicas=draw(st.integers(0, 2)))
    previous = draw(st.sampled_from((None, tuple(ids), tuple(ids[:1]))))
    return RebalanceInput(config=config, tasks=tasks, members=tuple(members), previous_members=previous)


def brute_force(view, rules_name):
    """Lexicographic optimum over every assignment: per task an active host and a role for each other member."""
    facts = Facts(view, rules_name)
    members = view.member_ids
    per_task = []
    for t in view.task_ids:
        options = []
        for host in members:
            others = [m for m in members if m != host]
            for roles in itertools.product((None, "standby", "warmup"), repeat=len(others)):
                options.append((host, tuple(zip(others, roles))))
        per_task.append(options)
    best = None
    for combo in itertools.product(*per_task):
        layout = {m: {"active": [], "standby": [], "warmup": []} for m in members}
        for t, (host, roles) in zip(view.task_ids, combo):
            layout[host]["active"].append(t)
            for m, role in roles:
                if role:
                    layout[m][role].append(t)
        for probing in (False, True):
            answer = Assignment.build(layout, probing_rebalance=probing)
            if violations(view, answer, rules_name, facts=facts):
                continue
            value = evaluate(view, answer, facts).as_tuple()
            if best is None or value < best:
                best = value
    return best


def small_enough(view):
    return len(view.tasks) * max(0, len(view.members) - 1) <= 6


@pytest.mark.parametrize("module", [encode, flow, objectives, optimize, rules, placement])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


@settings(max_examples=25)
@given(views(max_members=3, max_tasks=3), st.sampled_from(("ha", "sticky", "learner")))
def test_flow_engine_agrees_with_brute_force(view, rules_name):
    if not small_enough(view):
        return
    result = optimal(view, rules_name)
    expected = brute_force(view, rules_name)
    if expected is None:
        assert result.status == "infeasible"
        return
    assert result.status == "optimal"
    assert tuple(result.values[n] for n in OBJECTIVES) == expected


@settings(max_examples=20)
@given(views(max_members=4, max_tasks=5), st.sampled_from(("ha", "sticky", "eager", "learner")))
def test_engines_agree_and_answers_pass_the_oracle(view, rules_name):
    fast = optimal(view, rules_name)
    reference = optimal(view, rules_name, engine="z3")
    assert fast.status == reference.status
    if fast.status != "optimal":
        return
    assert fast.values == reference.values
    assert all(b.proven for b in fast.objectives)
    assert not violations(view, fast.assignment, rules_name)
    for verdict in check_assignment(view, fast.assignment, rules=rules_name):
        assert not verdict.violated, (verdict.property, verdict.message)


@st.composite
def bounded_networks(draw):
    """Small networks with lower and upper bounds: 2 sources, 3 middle nodes, 1 sink."""
    arcs = []
    for u in ("a", "b"):
        for v in ("x", "y", "z"):
            if draw(st.booleans()):
                lo = draw(st.integers(0, 2))
                arcs.append((u, v, lo, lo + draw(st.integers(0, 2)), draw(st.integers(0, 3))))
    for v in ("x", "y", "z"):
        lo = draw(st.integers(0, 3))
        arcs.append((v, "t", lo, draw(st.sampled_from((None, lo, lo + 1, lo + 3))), 0))
    supplies = {"a": draw(st.integers(0, 4)), "b": draw(st.integers(0, 4))}
    supplies["t"] = -supplies["a"] - supplies["b"]
    return arcs, supplies


@settings(max_examples=150)
@given(bounded_networks())
def test_flow_certificates_are_sound(network):
    arcs, supplies = network
    solution = flow.bounded_min_cost(arcs, supplies)
    if solution is None:
        assert flow.infeasibility_cut(arcs, supplies)
        return
    assert flow.quick_cut(arcs, supplies) is None
    with pytest.raises(AssertionError):
        flow.infeasibility_cut(arcs, supplies)
    for u, v, lo, hi, _ in arcs:  # the flow keeps every bound and conserves
        assert lo <= solution.flow[(u, v)] and (hi is None or solution.flow[(u, v)] <= hi)
    for node, units in supplies.items():
        sent = sum(f for (u, _), f in solution.flow.items() if u == node) - sum(f for (_, v), f in solution.flow.items() if v == node)
        assert sent == units


def analysed(view):
    """The capacity path's problem for ``view`` under the ha rules, with the balance analysis of the
    instance group and of each subtopology that the level and box searches start from."""
    prob = placement._Problem(view, Facts(view, "ha"))
    inst = placement.analyse_group(prob.balance_classes(), prob.caps, name="imbalance")
    subs = {s: placement.analyse_group(prob.balance_classes(s), prob.caps, name=s) for s in prob.subs}
    return prob, inst, subs


def agrees_with_brute_force(view, rules_name):
    """The flow path's answer (no enumeration) against scoring every layout: its result, or None
    when the view is too big to enumerate; an infeasible view must be reported infeasible."""
    if not small_enough(view):
        return None
    from rebalproof.solver.objectives import OBJECTIVES
    from rebalproof.solver.placement import solve_placement

    result = solve_placement(view, rules_name, small=0)
    expected = brute_force(view, rules_name)
    if expected is None:
        assert result.status == "infeasible"
        return None
    assert result.status == "optimal"
    assert tuple(result.values[n] for n in OBJECTIVES) == expected
    return result
