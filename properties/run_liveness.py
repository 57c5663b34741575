"""Graph algorithms behind the run properties: fair cycles, lassos, longest weighted paths.

Fairness is *weak fairness per action instance* (``Action.fairness_key``: kind, member, task)
for the kinds in :data:`~rebalproof.model.group_state.FAIR_KINDS`: a restore that stays
possible eventually happens, a delivery eventually arrives, a needed rebalance and a scheduled
probing rebalance eventually happen. Membership events, aging and cleanup are never forced.

A run that never ends stays in one strongly connected component (networkx) of the explored
graph. A non-trivial SCC ``C`` holds a weakly fair run iff every fairness key enabled in *all*
states of ``C`` is taken on some edge inside ``C`` (then the tour through all of ``C`` is fair;
otherwise no run staying in ``C`` is). Membership events use a budget that only grows, so no
cycle contains one: every cycle is a run "once membership stops changing".

A *lasso* is a path from an initial state to a state of a fair SCC (prefix) and a cycle inside
the SCC back to that state, built to be fair itself: it takes every fairness key that is
enabled all along it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import networkx as nx

from rebalproof.model.group_state import FAIR_KINDS

__all__ = ["Component", "nontrivial_sccs", "fair_components", "fair_cycle", "longest_paths", "fair_keys"]


@dataclass(frozen=True)
class Component:
    """A non-trivial strongly connected component and whether it holds a fair run."""

    nodes: frozenset
    fair: bool
    unfair_keys: tuple  # fairness keys enabled throughout and never taken inside (why unfair)


def fair_keys(exp, edges) -> set:
    """Fairness keys of the fair-kind actions on ``edges``."""
    out = set()
    for e in edges:
        a = exp.actions[exp.edge_act[e]]
        if a.kind in FAIR_KINDS:
            out.add(a.fairness_key)
    return out


def nontrivial_sccs(exp, ranges, nodes=None, edge_ok=None) -> list[frozenset]:
    """SCCs with a cycle (more than one state, or a self-loop) among ``nodes`` (default: all)."""
    g = nx.DiGraph()
    selfloops = set()
    src, dst = exp.edge_src, exp.edge_dst
    node_iter = range(exp.states) if nodes is None else nodes
    for u in node_iter:
        for e in ranges[u]:
            v = dst[e]
            if nodes is not None and v not in nodes:
                continue
            if edge_ok is not None and not edge_ok(e):
                continue
            if u == v:
                selfloops.add(u)
            g.add_edge(u, v)
    out = []
    for comp in nx.strongly_connected_components(g):
        if len(comp) > 1 or next(iter(comp)) in selfloops:
            out.append(frozenset(comp))
    out.sort(key=min)
    return out


def fair_components(exp, ranges, comps) -> list[Component]:
    """Each component with its fairness verdict (see the module docstring)."""
    out = []
    for comp in comps:
        taken = set()
        everywhere = None
        for u in comp:
            enabled = set()
            for e in ranges[u]:
                a = exp.actions[exp.edge_act[e]]
                if a.kind not in FAIR_KINDS:
                    continue
                enabled.add(a.fairness_key)
                if exp.edge_dst[e] in comp:
                    taken.add(a.fairness_key)
            everywhere = enabled if everywhere is None else everywhere & enabled
        missing = tuple(sorted((everywhere or set()) - taken, key=repr))
        out.append(Component(nodes=comp, fair=not missing, unfair_keys=missing))
    return out


def _bfs_path(exp, ranges, comp, start: int, goal) -> list[int]:
    """Shortest edge path inside ``comp`` from ``start`` to a node with ``goal(node)`` true
    (or, for an edge goal ``("edge", e)``, ending by taking edge ``e``)."""
    if isinstance(goal, tuple):
        target_edge = goal[1]
        head = _bfs_path(exp, ranges, comp, start, lambda n: n == exp.edge_src[target_edge])
        return head + [target_edge]
    if goal(start):
        return []
    prev = {start: None}
    queue = deque([start])
    while queue:
        u = queue.popleft()
        for e in ranges[u]:
            v = exp.edge_dst[e]
            if v in comp and v not in prev:
                prev[v] = e
                if goal(v):
                    path = []
                    while prev[v] is not None:
                        e2 = prev[v]
                        path.append(e2)
                        v = exp.edge_src[e2]
                    path.reverse()
                    return path
                queue.append(v)
    raise RuntimeError("no path inside a strongly connected component")


def fair_cycle(exp, ranges, comp, entry: int, must_visit=()) -> list[int]:
    """Edges of a fair cycle inside ``comp`` from ``entry`` back to it, visiting ``must_visit``."""
    waypoints: list = [("node", n) for n in must_visit]
    for _ in range(4 * len(comp) + 8):
        edges = []
        here = entry
        for kind, what in waypoints:
            if kind == "node":
                piece = _bfs_path(exp, ranges, comp, here, lambda n, w=what: n == w)
            else:
                piece = _bfs_path(exp, ranges, comp, here, ("edge", what))
            edges += piece
            if piece:
                here = exp.edge_dst[piece[-1]]
        back = _bfs_path(exp, ranges, comp, here, lambda n: n == entry)
        edges += back
        if not edges:  # no waypoint: leave the entry by some edge inside and come back
            first = next(e for e in ranges[entry] if exp.edge_dst[e] in comp)
            edges = [first] + _bfs_path(exp, ranges, comp, exp.edge_dst[first], lambda n: n == entry)
        nodes_on = {exp.edge_src[e] for e in edges}
        taken = fair_keys(exp, edges)
        enabled_all = None
        for u in nodes_on:
            keys = fair_keys(exp, ranges[u])
            enabled_all = keys if enabled_all is None else enabled_all & keys
        missing = sorted((enabled_all or set()) - taken, key=repr)
        if not missing:
            return edges
        key = missing[0]
        inside = next(
            (e for u in sorted(comp) for e in ranges[u] if exp.edge_dst[e] in comp and exp.actions[exp.edge_act[e]].fairness_key == key),
            None,
        )
        if inside is not None:
            waypoints.append(("edge", inside))
        else:
            off = next(u for u in sorted(comp) if key not in fair_keys(exp, ranges[u]))
            waypoints.append(("node", off))
    raise RuntimeError("could not close a fair cycle (the component is not fair)")


def longest_paths(exp, ranges, nodes, edge_ok, weight):
    """Most weight on a path that stays in ``nodes`` using edges with ``edge_ok(e)``, from each node.

    Returns ``(best, step, unbounded, component)``: ``best[n]`` the most weight from ``n``
    (``inf`` when a cycle with weight is reachable), ``step[n]`` the edge leaving ``n``'s
    component on such a path (None at the end), ``unbounded`` the nodes of components whose
    cycles carry weight, ``component[n]`` an id of ``n``'s strongly connected component.
    """
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    for u in nodes:
        for e in ranges[u]:
            v = exp.edge_dst[e]
            if v in nodes and edge_ok(e):
                g.add_edge(u, v)
    cond = nx.condensation(g)
    member = cond.graph["mapping"]
    heavy = set()
    for u in nodes:
        for e in ranges[u]:
            v = exp.edge_dst[e]
            if v in nodes and edge_ok(e) and weight(e) and member[u] == member[v]:
                heavy.add(member[u])
    best_c: dict = {}
    step_c: dict = {}
    comp_nodes = {c: cond.nodes[c]["members"] for c in cond.nodes}
    for c in reversed(list(nx.topological_sort(cond))):
        if c in heavy:
            best_c[c] = float("inf")
            step_c[c] = None
            continue
        best, arg = 0, None
        for u in comp_nodes[c]:
            for e in ranges[u]:
                v = exp.edge_dst[e]
                if v not in nodes or not edge_ok(e) or member[v] == c:
                    continue
                val = weight(e) + best_c[member[v]]
                if val > best:
                    best, arg = val, e
        best_c[c] = best
        step_c[c] = arg
    best = {n: best_c[member[n]] for n in nodes}
    unbounded = {n for n in nodes if member[n] in heavy}
    step = {n: step_c[member[n]] for n in nodes}
    return best, step, unbounded, member
