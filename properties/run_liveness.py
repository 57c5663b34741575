"""Graph algorithms behind the run properties: fair cycles, lassos, longest weighted paths.

Every routine stops with :class:`~rebalproof.model.budget.BudgetSpent` once the command's
budget (``exp.budget``: its time limit, an interrupt) is spent, so the caller can report the
verdict as inconclusive.

Fairness is *weak fairness per action instance* (``Action.fairness_key``: kind, member, task)
for the kinds in :data:`~rebalproof.model.group_state.FAIR_KINDS`: a restore that stays
possible eventually happens, a delivery eventually arrives, a needed rebalance and a scheduled
probing rebalance eventually happen. Membership events, aging and cleanup are never forced.

A run that never ends stays in one strongly connected component of the explored graph
(computed on the edge arrays by :func:`scipy.sparse.csgraph.connected_components`, Pearce's
algorithm in C, instead of a networkx graph rebuilt edge by edge). A non-trivial SCC ``C`` holds a weakly fair run iff every fairness key enabled in *all*
states of ``C`` is taken on some edge inside ``C`` (then the tour through all of ``C`` is fair;
otherwise no run staying in ``C`` is). Membership events use a budget that only grows, so no
cycle contains one: every cycle is a run "once membership stops changing".

A *lasso* is a path from an initial state to a state of a fair SCC (prefix) and a cycle inside
the SCC back to that state, built to be fair itself: it takes every fairness key that is
enabled all along it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from array import array
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from rebalproof.model.group_state import FAIR_KINDS

__all__ = ["Component", "EdgeRanges", "nontrivial_sccs", "fair_components", "fair_cycle", "longest_paths", "fair_keys", "edge_array"]


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


def _check_budget(exp) -> None:
    """Raise :class:`~rebalproof.model.budget.BudgetSpent` once the command's budget is spent."""
    budget = getattr(exp, "budget", None)
    if budget is not None:
        budget.check()


def edge_array(values) -> np.ndarray:
    """A flat array (``array.array``, numpy, list) as a numpy array, without a copy where it can.

    A view of an ``array.array`` pins its buffer (it cannot grow while the view lives): the
    routines here take views of a finished exploration and drop them when they return.
    """
    if isinstance(values, np.ndarray):
        return values
    if isinstance(values, array) and len(values):
        return np.frombuffer(values, dtype=np.dtype(values.typecode))
    return np.asarray(values, dtype=np.int64)


class EdgeRanges:
    """``ranges[u]``: the edge indices leaving ``u`` (:meth:`Exploration.out_edges`), for every
    state, from two flat arrays instead of a list of ``range`` objects (16 bytes a state, not 56)."""

    def __init__(self, exp):
        first = edge_array(exp.first_edge).astype(np.int64)
        n, total = len(first), len(exp.edge_src)
        end = np.full(n, total, dtype=np.int64)
        expanded = np.flatnonzero(first >= 0)
        if len(expanded) > 1:
            end[expanded[:-1]] = first[expanded[1:]]
        self._first, self._end = first, end

    def __len__(self) -> int:
        return len(self._first)

    def __getitem__(self, u) -> range:
        start = int(self._first[u])
        return range(start, int(self._end[u])) if start >= 0 else range(0)


def _edge_arrays(exp) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` of every edge (views of the explorer's arrays where they are ``array.array``)."""
    return edge_array(exp.edge_src), edge_array(exp.edge_dst)


def _node_mask(n: int, nodes) -> np.ndarray:
    """``nodes`` (None: all; a boolean array of length ``n``; an iterable of indices) as a mask."""
    if isinstance(nodes, np.ndarray) and nodes.dtype == bool:
        return nodes
    keep = np.zeros(n, dtype=bool)
    if nodes is None:
        keep[:] = True
    else:
        keep[np.fromiter(nodes, dtype=np.int64, count=len(nodes))] = True
    return keep


#: Edges handed to a per-edge Python callable at a time (a list of a million ints costs 36 MB).
_CHUNK = 1 << 16


def _per_edge(chosen: np.ndarray, fn, dtype) -> np.ndarray:
    """``fn(e)`` for every edge index of ``chosen``: an array indexed by edge as is, a callable chunk by chunk."""
    if isinstance(fn, np.ndarray):
        return fn[chosen].astype(dtype, copy=False)
    out = np.empty(len(chosen), dtype=dtype)
    for at in range(0, len(chosen), _CHUNK):
        part = chosen[at:at + _CHUNK].tolist()
        out[at:at + len(part)] = np.fromiter((fn(e) for e in part), dtype=dtype, count=len(part))
    return out


def _selected_edges(exp, nodes, edge_ok) -> np.ndarray:
    """Indices of the edges between ``nodes`` (default: all) with ``edge_ok(e)`` (default: all;
    a boolean array indexed by edge also does)."""
    src, dst = _edge_arrays(exp)
    if nodes is None:
        chosen = np.arange(len(src), dtype=np.int64)
    else:
        keep = _node_mask(exp.states, nodes)
        chosen = np.flatnonzero(keep[src] & keep[dst])
    if edge_ok is not None and len(chosen):
        chosen = chosen[_per_edge(chosen, edge_ok, bool)]
    return chosen


def _scc_labels(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Strongly connected component id of each of ``n`` nodes, over the edges ``src -> dst``."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    graph = csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n))
    _, labels = connected_components(graph, directed=True, connection="strong")
    return labels.astype(np.int64)


def nontrivial_sccs(exp, ranges, nodes=None, edge_ok=None) -> list[frozenset]:
    """SCCs with a cycle (more than one state, or a self-loop) among ``nodes`` (default: all),
    using only edges with ``edge_ok(e)`` (default: all); sorted by least state."""
    _check_budget(exp)
    chosen = _selected_edges(exp, nodes, edge_ok)
    src, dst = _edge_arrays(exp)
    s, d = src[chosen], dst[chosen]
    del chosen, src, dst
    labels = _scc_labels(exp.states, s, d)
    _check_budget(exp)
    if not len(labels):
        return []
    size = np.bincount(labels)
    cyclic = size > 1
    cyclic[labels[s[s == d]]] = True
    members = np.flatnonzero(cyclic[labels])
    order = members[np.argsort(labels[members], kind="stable")]
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    out = [frozenset(part.tolist()) for part in np.split(order, cuts) if len(part)]
    out.sort(key=min)
    return out


def fair_components(exp, ranges, comps) -> list[Component]:
    """Each component with its fairness verdict (see the module docstring)."""
    out = []
    _check_budget(exp)
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
        _check_budget(exp)
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
    component on such a path (None at the end; among equally heavy ones the first found),
    ``unbounded`` the nodes of components whose cycles carry weight, ``component[n]`` an id of
    ``n``'s strongly connected component.

    Notes
    -----
    The components come from :func:`_scc_labels`; the weights are summed over the condensation
    (a DAG) sink first, one layer of components at a time in numpy, so the Python work is at most
    one call of ``edge_ok`` and of ``weight`` per edge between ``nodes`` -- none when they are
    arrays indexed by edge. ``nodes`` may be None (every state) or a boolean mask. The four
    results are read-only mappings backed by arrays (a few bytes a state, not a dict entry).
    """
    if not isinstance(nodes, np.ndarray) and nodes is not None and not isinstance(nodes, (set, frozenset, list, tuple, range)):
        nodes = list(nodes)
    _check_budget(exp)
    chosen = _selected_edges(exp, nodes, edge_ok)
    src, dst = _edge_arrays(exp)
    s, d = src[chosen], dst[chosen]
    del src, dst
    w = _per_edge(chosen, weight, np.float64)
    labels = _scc_labels(exp.states, s, d)
    count = int(labels.max()) + 1 if len(labels) else 0
    cs, cd = labels[s], labels[d]
    inside = cs == cd
    heavy = np.zeros(count, dtype=bool)
    heavy[cs[inside & (w > 0)]] = True
    cross = ~inside
    cs, cd, w, eid = cs[cross], cd[cross], w[cross], chosen[cross]
    best = np.where(heavy, np.inf, 0.0)
    cand = np.zeros(count)
    cand_edge = np.full(count, -1, dtype=np.int64)
    remaining = np.bincount(cs, minlength=count)
    done = remaining == 0
    while len(cs):
        _check_budget(exp)
        ready = done[cd]
        if not ready.any():
            raise RuntimeError("the condensation of a graph has a cycle")
        a_cs, a_w, a_e = cs[ready], w[ready], eid[ready]
        val = a_w + best[cd[ready]]
        order = np.lexsort((a_e, -val, a_cs))
        a_cs, val, a_e = a_cs[order], val[order], a_e[order]
        first = np.ones(len(a_cs), dtype=bool)
        first[1:] = a_cs[1:] != a_cs[:-1]
        c, v, e = a_cs[first], val[first], a_e[first]
        better = (v > cand[c]) | ((v == cand[c]) & (cand_edge[c] >= 0) & (e < cand_edge[c]))
        cand[c[better]] = v[better]
        cand_edge[c[better]] = e[better]
        remaining -= np.bincount(a_cs, minlength=count)
        newly = (remaining == 0) & ~done
        best[newly & ~heavy] = cand[newly & ~heavy]
        done |= newly
        cs, cd, w, eid = cs[~ready], cd[~ready], w[~ready], eid[~ready]
    step_c = np.where(heavy, -1, cand_edge)
    mask = _node_mask(exp.states, nodes)
    return (
        _NodeMap(mask, labels, best, _weight_value),
        _NodeMap(mask, labels, step_c, _edge_value),
        set(np.flatnonzero(mask & heavy[labels]).tolist()) if heavy.any() else set(),
        _NodeMap(mask, labels, None, int),
    )


def _weight_value(value) -> float | int:
    return float("inf") if value == np.inf else int(value)


def _edge_value(value) -> int | None:
    return None if value < 0 else int(value)


class _NodeMap(Mapping):
    """Node -> a value of its component (``per_component[labels[node]]``, or the label itself),
    over the nodes of ``mask``, in index order."""

    def __init__(self, mask: np.ndarray, labels: np.ndarray, per_component, convert):
        self._mask, self._labels, self._values, self._convert = mask, labels, per_component, convert

    def __getitem__(self, node):
        if not (0 <= node < len(self._mask)) or not self._mask[node]:
            raise KeyError(node)
        c = self._labels[node]
        return self._convert(c if self._values is None else self._values[c])

    def __iter__(self):
        return iter(np.flatnonzero(self._mask).tolist())

    def __len__(self) -> int:
        return int(self._mask.sum())

    def largest(self, default=0):
        """The largest value over the nodes (``default`` when there are none), in numpy."""
        nodes = np.flatnonzero(self._mask)
        if not len(nodes):
            return default
        c = self._labels[nodes]
        return self._convert((c if self._values is None else self._values[c]).max())
