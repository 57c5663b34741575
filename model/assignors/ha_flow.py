"""Exact tools for the ``ha`` target: balance boxes and a bounded min-cost transport.

KIP-441 ("Defining 'balance'") asks for instance balance and subtopology balance;
:mod:`rebalproof.model.balance` states them, with capacities, as
:func:`~rebalproof.model.balance.within_one`. This module turns that rule into per-member
count bounds (a *box*) and solves "place every item on members within the boxes at least
cost" as a min-cost flow, so that the ``ha`` target is an exact optimum rather than a
greedy guess -- the property its convergence argument rests on (see
:mod:`rebalproof.model.assignors.ha_target`).

- :func:`quota_box` -- the count vectors satisfying ``within_one`` are exactly the ones inside
  a box ``lo_i <= n_i <= hi_i`` that sum to the total (proof in its Notes).
- :func:`lexicographic_costs` -- tiers of 0/1 preferences per arc encoded into one integer
  cost per arc whose minimum over whole placements is lexicographic in the tiers and then
  unique (a final tier of distinct powers of two), so every solver finds the same answer.
- :func:`transport` -- the min-cost flow with lower bounds, on OR-tools' C++ min-cost flow
  (``SimpleMinCostFlow``, exact 64-bit integer costs); when the costs could overflow 64 bits it
  falls back to :func:`transport_networkx` (networkx network simplex, exact Python integers),
  which is also the oracle the tests compare it with. The optimum is unique (see
  :func:`lexicographic_costs`), so both give the same answer.

Examples
--------
>>> quota_box(5, {"I1": 1, "I2": 1})
{'I1': (2, 3), 'I2': (2, 3)}
>>> quota_box(1, {"I1": 2, "I2": 1})
{'I1': (0, 1), 'I2': (0, 0)}
>>> quota_box(2, {"I1": 1, "I2": 1}, start={"I1": 3})
{'I1': (0, 0), 'I2': (1, 2)}
>>> arcs = [("T1", "I1", 0), ("T1", "I2", 1), ("T2", "I1", 1), ("T2", "I2", 0)]
>>> transport({"T1": 1, "T2": 1}, arcs, {"I1": (1, 1), "I2": (1, 1)})
{'T1': ('I1',), 'T2': ('I2',)}
"""

from __future__ import annotations

import functools
from collections import defaultdict
from typing import Hashable, Mapping, Sequence

import numpy as np
from ortools.graph.python import min_cost_flow

from rebalproof.model.names import id_key, sorted_ids

__all__ = ["Bounds", "quota_box", "lexicographic_costs", "transport", "transport_networkx"]

Bounds = tuple[int, int]
"""``(lo, hi)``: least and most items a member (or a member within a group) may take."""


def quota_box(total: int, capacities: Mapping[str, int], *, start: Mapping[str, int] | None = None) -> dict[str, Bounds]:
    """Per-member bounds on how many of ``total`` items each member takes, for load within one.

    Parameters
    ----------
    total : int
        Items to share out (at least 0).
    capacities : mapping of str to int
        Member id to capacity (stream threads, at least 1).
    start : mapping of str to int, optional
        Items members already hold from elsewhere: they count towards the load, and the
        bounds are for the new items only (a member already above the water level gets
        ``(0, 0)``).

    Returns
    -------
    dict of str to (int, int)
        Member id to ``(lo, hi)``, in id order. ``sum(lo) <= total <= sum(hi)``.

    Notes
    -----
    Let ``lam`` be the least load per thread with ``sum_i max(0, floor(lam * c_i) - s_i) >= total``
    ("water level"). The bounds are ``hi_i = max(0, floor(lam c_i) - s_i)`` and
    ``lo_i = max(0, ceil(lam c_i) - 1 - s_i)``. Without ``start``, a count vector summing to
    ``total`` satisfies :func:`~rebalproof.model.balance.within_one` *if and only if* it lies in
    the box: inside it, every non-empty member has ``n_i / c_i <= lam <= (n_j + 1) / c_j`` for
    every ``j``; conversely a balanced vector with top load ``mu`` lies in the box of ``mu``, and
    ``mu > lam`` would force ``sum(lo(mu)) >= sum(hi(lam)) >= total`` with equality throughout,
    i.e. the same vector. So the box is the exact set of balanced layouts, and a placement
    problem with boxes is infeasible exactly when no balanced placement exists. With
    ``start``, the box is the water-filling one: the new items top up the least loaded.
    """
    members = tuple(sorted_ids(capacities))
    if not members:
        return {}
    start = start or {}
    key = (total, tuple((m, capacities[m], start.get(m, 0)) for m in members))
    return dict(zip(members, _quota_box(*key)))


@functools.lru_cache(maxsize=4096)
def _quota_box(total: int, members: tuple[tuple[str, int, int], ...]) -> tuple[Bounds, ...]:
    """:func:`quota_box` on ``(id, capacity, start)`` per member, in exact integer arithmetic:
    the water level ``lam = p / q`` is kept as two integers, ``floor(lam c) = (p c) // q``."""

    def room(p: int, q: int) -> int:
        return sum(max(0, (p * c) // q - s) for _, c, s in members)

    p, q = 0, 1
    while room(p, q) < total:
        # the next level at which some member's floor(lam c) grows: min over (floor(lam c) + 1) / c
        best_p, best_q = None, None
        for _, c, _ in members:
            cand_p, cand_q = (p * c) // q + 1, c
            if best_p is None or cand_p * best_q < best_p * cand_q:
                best_p, best_q = cand_p, cand_q
        p, q = best_p, best_q
    box = []
    for _, c, s in members:
        top = (p * c) // q
        ceil = -((-p * c) // q)
        box.append((max(0, ceil - 1 - s), max(0, top - s)))
    return tuple(box)


def lexicographic_costs(tiers: Sequence[tuple[int, ...]], *, flow: int) -> list[int]:
    """One integer cost per arc, minimised lexicographically by tier, ties broken uniquely.

    Parameters
    ----------
    tiers : sequence of tuple of int
        Per arc, its tier values (each 0 or 1; first tier most important), in arc order.
    flow : int
        The most arcs any placement uses (the total of the items' units).

    Returns
    -------
    list of int
        ``cost[k] = sum_j tier_j * M**(L-1-j) * U + 2**k`` with ``U = 2**len(tiers)`` and
        ``M = flow + 1``: the tier sums of a placement are compared first to last, and two
        different placements never cost the same (distinct arc sets have distinct sums of
        powers of two), so the optimum is unique; among equal tiers the placement avoiding
        the latest arcs wins.

    Examples
    --------
    >>> lexicographic_costs([(1, 0), (0, 1)], flow=1)
    [9, 6]
    """
    if not tiers:
        return []
    depth = len(tiers[0])
    scale = flow + 1
    unique = 2 ** len(tiers)
    costs = []
    for index, values in enumerate(tiers):
        head = 0
        for value in values:
            head = head * scale + value
        costs.append(head * unique + 2**index)
    assert all(len(t) == depth for t in tiers)
    return costs


def transport_networkx(
    units: Mapping[Hashable, int],
    arcs: Sequence[tuple[Hashable, str, int]],
    member_bounds: Mapping[str, Bounds],
    *,
    group_of: Mapping[Hashable, Hashable] | None = None,
    group_bounds: Mapping[tuple[Hashable, str], Bounds] | None = None,
) -> dict[Hashable, tuple[str, ...]] | None:
    """Place each item's units on distinct members at least total cost, within bounds.

    Parameters
    ----------
    units : mapping
        Item to how many copies it needs (each copy on a different member).
    arcs : sequence of (item, member, cost)
        Where an item may go and at what cost; at most one arc per (item, member).
    member_bounds : mapping of str to (int, int)
        Member id to the least and most copies it takes in total.
    group_of : mapping, optional
        Item to its group (a subtopology); with ``group_bounds``, the copies of one group on
        one member are bounded too.
    group_bounds : mapping of (group, member) to (int, int), optional
        Bounds per group and member; a pair not listed is unbounded.

    Returns
    -------
    dict or None
        Item to the members chosen (id order), items in the order of ``units``; None when
        the bounds cannot all be met.

    Notes
    -----
    A min-cost flow: item -> (group, member) -> member -> sink, lower bounds removed by the
    usual shift of node demands, solved by :func:`networkx.network_simplex`. The graph is
    built in a fixed order, so the answer is deterministic; with
    :func:`lexicographic_costs` it is also the unique optimum. :func:`transport` solves the
    same network in C++; this one is its fallback and its oracle in the tests.
    """
    import networkx as nx  # only here (12 MiB): the C++ solver answers unless it cannot

    graph = nx.DiGraph()
    demand: dict[Hashable, int] = defaultdict(int)
    total = 0
    for item, count in units.items():
        demand[("item", item)] -= count
        total += count
        graph.add_node(("item", item))
    grouped = group_of is not None

    def middle(item, member):
        return ("slot", group_of[item], member) if grouped else ("member", member)

    for item, member, cost in arcs:
        graph.add_edge(("item", item), middle(item, member), capacity=1, weight=cost)

    def bounded(u, v, bounds: Bounds) -> bool:
        lo, hi = bounds
        if hi < lo or hi < 0:
            return False
        graph.add_edge(u, v, capacity=hi - lo, weight=0)
        demand[u] += lo
        demand[v] -= lo
        return True

    if grouped:
        bounds = group_bounds or {}
        slots = sorted({(group_of[item], member) for item, member, _ in arcs} | set(bounds), key=_slot_key)
        for group, member in slots:
            if (group, member) in bounds:
                if not bounded(("slot", group, member), ("member", member), bounds[(group, member)]):
                    return None
            else:
                graph.add_edge(("slot", group, member), ("member", member), weight=0)
    for member in sorted_ids(member_bounds):
        if not bounded(("member", member), "sink", member_bounds[member]):
            return None
    demand["sink"] += total
    for node, value in demand.items():
        graph.add_node(node, demand=value)
    try:
        _, flow = nx.network_simplex(graph)
    except (nx.NetworkXUnfeasible, nx.NetworkXError):
        return None
    placed: dict[Hashable, tuple[str, ...]] = {}
    for item in units:
        chosen = []
        for node, amount in flow.get(("item", item), {}).items():
            if amount:
                chosen.append(node[-1])
        placed[item] = tuple(sorted(chosen, key=id_key))
    return placed


#: Largest arc cost handed to OR-tools: its cost-scaling algorithm multiplies costs by the
#: number of nodes plus one and sums them along paths in 64-bit integers.
_COST_LIMIT = 2**62


def transport(
    units: Mapping[Hashable, int],
    arcs: Sequence[tuple[Hashable, str, int]],
    member_bounds: Mapping[str, Bounds],
    *,
    group_of: Mapping[Hashable, Hashable] | None = None,
    group_bounds: Mapping[tuple[Hashable, str], Bounds] | None = None,
) -> dict[Hashable, tuple[str, ...]] | None:
    """Place each item's units on distinct members at least total cost, within bounds.

    The same problem, parameters and answer as :func:`transport_networkx` (the same network:
    item -> (group, member) -> member -> sink, lower bounds shifted into supplies), solved by
    OR-tools' ``SimpleMinCostFlow`` (C++). Costs that could overflow its 64-bit arithmetic go
    to :func:`transport_networkx` instead, so the answer is always an exact optimum, and with
    :func:`lexicographic_costs` the unique one (with ties in the costs, which of the optima
    comes back is the solver's choice: the ``ha`` assignor never leaves ties).
    """
    node_of: dict[Hashable, int] = {}

    def node(key) -> int:
        found = node_of.get(key)
        if found is None:
            found = node_of[key] = len(node_of)
        return found

    supply: dict[int, int] = defaultdict(int)
    total = 0
    for item, count in units.items():
        supply[node(("item", item))] += count
        total += count
    tails: list[int] = []
    heads: list[int] = []
    caps: list[int] = []
    costs: list[int] = []
    grouped = group_of is not None
    item_arcs: list[tuple[Hashable, str]] = []
    top = 0
    for item, member, cost in arcs:
        middle = ("slot", group_of[item], member) if grouped else ("member", member)
        tails.append(node(("item", item)))
        heads.append(node(middle))
        caps.append(1)
        costs.append(cost)
        item_arcs.append((item, member))
        top = max(top, abs(cost))

    def bounded(u: int, v: int, bounds: Bounds) -> bool:
        lo, hi = bounds
        if hi < lo or hi < 0:
            return False
        tails.append(u)
        heads.append(v)
        caps.append(hi - lo)
        costs.append(0)
        supply[u] -= lo
        supply[v] += lo
        return True

    if grouped:
        bounds = group_bounds or {}
        slots = sorted({(group_of[item], member) for item, member, _ in arcs} | set(bounds), key=_slot_key)
        for group, member in slots:
            u, v = node(("slot", group, member)), node(("member", member))
            if (group, member) in bounds:
                if not bounded(u, v, bounds[(group, member)]):
                    return None
            else:
                tails.append(u)
                heads.append(v)
                caps.append(total)
                costs.append(0)
    members = sorted_ids(member_bounds)
    member_nodes = [node(("member", member)) for member in members]
    sink = node("sink")
    for member, u in zip(members, member_nodes):
        if not bounded(u, sink, member_bounds[member]):
            return None
    supply[sink] -= total
    if top * (len(node_of) + 1) * max(total, 1) >= _COST_LIMIT:
        return transport_networkx(units, arcs, member_bounds, group_of=group_of, group_bounds=group_bounds)
    solver = min_cost_flow.SimpleMinCostFlow()
    handles = solver.add_arcs_with_capacity_and_unit_cost(
        np.asarray(tails, dtype=np.int32),
        np.asarray(heads, dtype=np.int32),
        np.asarray(caps, dtype=np.int64),
        np.asarray(costs, dtype=np.int64),
    )
    solver.set_nodes_supplies(
        np.arange(len(node_of), dtype=np.int32),
        np.asarray([supply.get(i, 0) for i in range(len(node_of))], dtype=np.int64),
    )
    status = solver.solve()
    if status == solver.INFEASIBLE:
        return None
    if status != solver.OPTIMAL:  # a range the solver refuses: the exact Python fallback decides
        return transport_networkx(units, arcs, member_bounds, group_of=group_of, group_bounds=group_bounds)
    flows = solver.flows(handles[: len(item_arcs)])
    chosen: dict[Hashable, list[str]] = {item: [] for item in units}
    for (item, member), amount in zip(item_arcs, flows.tolist()):
        if amount:
            chosen[item].append(member)
    return {item: tuple(sorted(members, key=id_key)) for item, members in chosen.items()}


def _slot_key(slot: tuple[Hashable, str]):
    group, member = slot
    return (id_key(str(group)), id_key(member))
