"""The ``ha`` assignor's min-cost flow on OR-tools gives the networkx oracle's answers.

:func:`~rebalproof.model.assignors.ha_flow.transport` (OR-tools ``SimpleMinCostFlow``) and
:func:`~rebalproof.model.assignors.ha_flow.transport_networkx` (network simplex, exact Python
integers) are compared on generated placement problems: the same feasibility, the same optimal
cost, every answer a valid placement (certificate), and with the ``ha`` assignor's unique costs
(:func:`~rebalproof.model.assignors.ha_flow.lexicographic_costs`) the very same answer.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rebalproof.model.assignors.ha_flow import lexicographic_costs, transport, transport_networkx


@st.composite
def problems(draw, unique: bool):
    members = [f"I{i}" for i in range(1, draw(st.integers(1, 4)) + 1)]
    groups = draw(st.integers(1, 3))
    items = [f"{g}_{p}" for g in range(groups) for p in range(draw(st.integers(1, 3)))]
    units = {t: draw(st.integers(1, min(2, len(members)))) for t in items}
    arcs, tiers = [], []
    for t in items:
        for m in members:
            if draw(st.integers(0, 5)) == 0:
                continue  # an arc left out: the item may not go there
            arcs.append((t, m))
            tiers.append(tuple(draw(st.integers(0, 1)) for _ in range(3)))
    if unique:
        costs = lexicographic_costs(tiers, flow=sum(units.values()))
    else:
        costs = [draw(st.integers(0, 4)) for _ in arcs]
    priced = [(t, m, c) for (t, m), c in zip(arcs, costs)]
    bounds = {}
    for m in members:
        lo = draw(st.integers(0, 2))
        bounds[m] = (lo, lo + draw(st.integers(-1, 4)))
    grouped = draw(st.booleans())
    group_of = {t: t.split("_")[0] for t in items} if grouped else None
    group_bounds = None
    if grouped:
        group_bounds = {}
        for g in range(groups):
            for m in members:
                if draw(st.booleans()):
                    lo = draw(st.integers(0, 1))
                    group_bounds[(str(g), m)] = (lo, lo + draw(st.integers(0, 2)))
    return units, priced, bounds, group_of, group_bounds


def _cost(placed, priced) -> int:
    price = {(t, m): c for t, m, c in priced}
    return sum(price[(t, m)] for t, ms in placed.items() for m in ms)


def _valid(placed, units, priced, bounds, group_of, group_bounds) -> bool:
    allowed = {(t, m) for t, m, _ in priced}
    load = {m: 0 for m in bounds}
    per_group: dict = {}
    for t, ms in placed.items():
        if len(ms) != units[t] or len(set(ms)) != len(ms) or any((t, m) not in allowed for m in ms):
            return False
        for m in ms:
            load[m] = load.get(m, 0) + 1
            if group_of is not None:
                per_group[(group_of[t], m)] = per_group.get((group_of[t], m), 0) + 1
    if any(not (lo <= load.get(m, 0) <= hi) for m, (lo, hi) in bounds.items()):
        return False
    return all(lo <= per_group.get(key, 0) <= hi for key, (lo, hi) in (group_bounds or {}).items())


@settings(max_examples=300)
@given(problems(unique=True))
def test_unique_costs_give_the_oracles_very_answer(problem):
    units, priced, bounds, group_of, group_bounds = problem
    fast = transport(units, priced, bounds, group_of=group_of, group_bounds=group_bounds)
    slow = transport_networkx(units, priced, bounds, group_of=group_of, group_bounds=group_bounds)
    assert fast == slow
    if fast is not None:
        assert _valid(fast, units, priced, bounds, group_of, group_bounds)


@settings(max_examples=300)
@given(problems(unique=False))
def test_tied_costs_give_an_optimum_of_the_oracles_cost(problem):
    units, priced, bounds, group_of, group_bounds = problem
    fast = transport(units, priced, bounds, group_of=group_of, group_bounds=group_bounds)
    slow = transport_networkx(units, priced, bounds, group_of=group_of, group_bounds=group_bounds)
    assert (fast is None) == (slow is None)
    if fast is not None:
        assert _valid(fast, units, priced, bounds, group_of, group_bounds)
        assert _cost(fast, priced) == _cost(slow, priced)


def test_costs_beyond_64_bits_are_solved_exactly_by_the_fallback():
    big = 2**80
    arcs = [("T1", "I1", big + 1), ("T1", "I2", big), ("T2", "I1", big), ("T2", "I2", big + 1)]
    box = {"I1": (1, 1), "I2": (1, 1)}
    assert transport({"T1": 1, "T2": 1}, arcs, box) == {"T1": ("I2",), "T2": ("I1",)}
    assert transport({"T1": 1, "T2": 1}, arcs, box) == transport_networkx({"T1": 1, "T2": 1}, arcs, box)
