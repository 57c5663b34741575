"""The liveness graph routines on edge arrays (scipy) agree with networkx on generated graphs.

:func:`~rebalproof.properties.run_liveness.nontrivial_sccs` and
:func:`~rebalproof.properties.run_liveness.longest_paths` work on the explorer's edge arrays
with :func:`scipy.sparse.csgraph.connected_components`; the oracles here are the networkx
versions they replaced (strongly connected components, condensation, longest path by
topological order), run on the same random graphs, node subsets, edge filters and weights.
"""

from __future__ import annotations

from array import array

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalproof.properties.run_liveness import longest_paths, nontrivial_sccs


class _Graph:
    """The part of an :class:`~rebalproof.model.explorer.Exploration` the routines read."""

    def __init__(self, n: int, edges: list[tuple[int, int]]):
        self.states = n
        edges = sorted(edges, key=lambda e: e[0])  # grouped by source, as the explorer stores them
        self.edge_src = array("I", [u for u, _ in edges])
        self.edge_dst = array("I", [v for _, v in edges])
        self.ranges = [range(0)] * n
        for u in range(n):
            idx = [i for i, (a, _) in enumerate(edges) if a == u]
            if idx:
                self.ranges[u] = range(idx[0], idx[-1] + 1)


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 12))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30))
    g = _Graph(n, edges)
    nodes = set(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n)))
    ok = [draw(st.booleans()) or draw(st.booleans()) for _ in edges]
    weight = [draw(st.integers(0, 2)) for _ in edges]
    return g, nodes, ok, weight


def _oracle_sccs(g, nodes, edge_ok):
    graph = nx.DiGraph()
    loops = set()
    for e, (u, v) in enumerate(zip(g.edge_src, g.edge_dst)):
        if u in nodes and v in nodes and edge_ok(e):
            graph.add_edge(u, v)
            if u == v:
                loops.add(u)
    comps = [frozenset(c) for c in nx.strongly_connected_components(graph) if len(c) > 1 or next(iter(c)) in loops]
    return sorted(comps, key=min)


def _oracle_longest(g, nodes, edge_ok, weight):
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    kept = [e for e, (u, v) in enumerate(zip(g.edge_src, g.edge_dst)) if u in nodes and v in nodes and edge_ok(e)]
    for e in kept:
        graph.add_edge(g.edge_src[e], g.edge_dst[e])
    cond = nx.condensation(graph)
    member = cond.graph["mapping"]
    heavy = {member[g.edge_src[e]] for e in kept if weight(e) and member[g.edge_src[e]] == member[g.edge_dst[e]]}
    best_c = {}
    for c in reversed(list(nx.topological_sort(cond))):
        if c in heavy:
            best_c[c] = float("inf")
            continue
        best_c[c] = max(
            [0] + [weight(e) + best_c[member[g.edge_dst[e]]] for e in kept if member[g.edge_src[e]] == c != member[g.edge_dst[e]]]
        )
    return {n: best_c[member[n]] for n in nodes}, {n for n in nodes if member[n] in heavy}, member


@settings(max_examples=300)
@given(graphs())
def test_sccs_are_networkx_s(case):
    g, nodes, ok, _ = case
    assert nontrivial_sccs(g, g.ranges) == _oracle_sccs(g, set(range(g.states)), lambda e: True)
    assert nontrivial_sccs(g, g.ranges, nodes, ok.__getitem__) == _oracle_sccs(g, nodes, ok.__getitem__)


@settings(max_examples=300)
@given(graphs())
def test_longest_paths_are_networkx_s(case):
    g, nodes, ok, weight = case
    best, step, unbounded, component = longest_paths(g, g.ranges, nodes, ok.__getitem__, weight.__getitem__)
    want_best, want_unbounded, member = _oracle_longest(g, nodes, ok.__getitem__, weight.__getitem__)
    assert best == want_best
    assert unbounded == want_unbounded
    # the same partition into components
    assert {frozenset(n for n in nodes if component[n] == c) for c in component.values()} == {
        frozenset(n for n in nodes if member[n] == c) for c in member.values()
    }
    # each step is an allowed edge leaving the component that achieves the best weight
    for n in nodes:
        e = step[n]
        if e is None:
            assert best[n] in (0, float("inf"))
            continue
        u, v = g.edge_src[e], g.edge_dst[e]
        assert ok[e] and u in nodes and v in nodes
        assert component[u] == component[n] != component[v]
        assert weight[e] + best[v] == best[n] > 0
