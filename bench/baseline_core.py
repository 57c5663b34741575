"""The explorer core as it was before #11, for bench/explore.py's same-run baseline.

Run as ``python bench/baseline_core.py <rebalproof arguments>``: it swaps the previous hot
paths back in -- the ``ha`` assignor's flows on networkx network simplex and its quota boxes in
:class:`~fractions.Fraction`, the liveness graph (strong components, longest decisive paths)
rebuilt as networkx graphs, fingerprints joined as strings on every call, the visited set as one
dict of fingerprint to index, every distinct view judged (not each shape once), the BFS queue
holding states as objects (not packed records), ``ha`` asked about every distinct view (not
once per shape), the cyclic garbage collector running while exploring, all of it in one process
(no judge or answers on the second core) -- and runs the command.
Everything else is the current code, so the ratio bench/explore.py prints is what those paths
cost. Not part of the package: the code below is the code those paths had.
"""

from __future__ import annotations

import contextlib
import math
import sys
from fractions import Fraction
from pathlib import Path

import networkx as nx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rebalproof.model.assignors import ha, ha_round, ha_target  # noqa: E402
from rebalproof.model.group_model import GroupModel  # noqa: E402
from rebalproof.properties import run_judge_worker  # noqa: E402
from rebalproof.model.assignors.ha_flow import transport_networkx  # noqa: E402
from rebalproof.model.group_fingerprint import Fingerprinter, fingerprint, fingerprint_symmetric  # noqa: E402
from rebalproof.model.names import sorted_ids  # noqa: E402
from rebalproof.model import explorer  # noqa: E402
from rebalproof.properties import run  # noqa: E402
from rebalproof.properties.run_rebalance import RebalanceJudge  # noqa: E402


def quota_box(total, capacities, *, start=None):
    start = start or {}
    members = sorted_ids(capacities)
    if not members:
        return {}
    base = {m: start.get(m, 0) for m in members}

    def room(level):
        return sum(max(0, math.floor(level * capacities[m]) - base[m]) for m in members)

    level = Fraction(0)
    while room(level) < total:
        level = min(Fraction(math.floor(level * capacities[m]) + 1, capacities[m]) for m in members)
    box = {}
    for m in members:
        top = math.floor(level * capacities[m])
        box[m] = (max(0, math.ceil(level * capacities[m]) - 1 - base[m]), max(0, top - base[m]))
    return box


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


class _Dict(dict):
    def largest(self, default=0):
        return max(self.values(), default=default)


def _as_callable(value):
    if value is None:
        return lambda e: True
    if callable(value):
        return value
    return lambda e: value[e].item()


def longest_paths(exp, ranges, nodes, edge_ok, weight):
    """The previous :func:`~rebalproof.properties.run_liveness.longest_paths` (its callers now
    pass masks and arrays: read back as the sets and callables it took)."""
    import numpy as np

    if nodes is None:
        nodes = set(range(exp.states))
    elif isinstance(nodes, np.ndarray):
        nodes = set(np.flatnonzero(nodes).tolist())
    return _longest_paths(exp, ranges, nodes, _as_callable(edge_ok), _as_callable(weight))


def _longest_paths(exp, ranges, nodes, edge_ok, weight):
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
    best = _Dict({n: best_c[member[n]] for n in nodes})
    unbounded = {n for n in nodes if member[n] in heavy}
    step = {n: step_c[member[n]] for n in nodes}
    return best, step, unbounded, member


class _DictVisited(dict):
    """The visited set before: one dict of fingerprint to index."""

    def add(self, fp, idx):
        self[fp] = idx

    def nbytes(self):
        sample = next(iter(self.items()), (0, 0))
        return sys.getsizeof(self) + len(self) * (sys.getsizeof(sample[0]) + sys.getsizeof(max(len(self) - 1, 0)))


def _judge_every_view(*args, **kwargs):
    return RebalanceJudge(*args, **kwargs, by_shape=False)


def _plain_call(self, state):
    if self.symmetry:
        return fingerprint_symmetric(state, self.perms, self.classes)
    return fingerprint(state)


def install() -> None:
    """Swap the previous hot paths in."""
    for module in (ha_target, ha_round):
        module.transport = transport_networkx
        module.quota_box = quota_box
    explorer._collector_paused = contextlib.nullcontext  # the collector ran all along
    run.nontrivial_sccs = nontrivial_sccs
    run.longest_paths = longest_paths
    run.RebalanceJudge = _judge_every_view
    explorer.Visited = _DictVisited
    Fingerprinter.__call__ = _plain_call
    delattr(GroupModel, "packer")  # the BFS queue holds states as objects (compact-ed), not packed records
    GroupModel.answers_ahead = lambda self: False  # one process: ha answered by the explorer itself
    run_judge_worker._can_fork = lambda: False  # ... and every answer judged by it
    object.__setattr__(ha.INFO, "make", lambda: ha.assign)  # ha asked about every view, not once per shape


if __name__ == "__main__":
    install()
    from rebalproof.cli.main import main

    sys.exit(main(sys.argv[1:]))
