"""The explored state graph of a small model as Graphviz DOT, a counterexample's path highlighted.

``rebalproof check ... --dot FILE`` writes it. The full graph interleaves every delivery and
restore, so even small models give hundreds of states; the picture a reader wants is the graph
of **stable states** (no rebalance in progress, none due: what the group settles in) and how
one leads to another. :func:`stable_graph` keeps the initial states and the stable states and
joins ``u -> v`` when ``v`` is reached from ``u`` through states that are not stable; the edge
is labelled with the first action taken from ``u`` (what started the way there: ``join I3``,
``restore I2 0_0``, ...), several of them when several lead to the same place. A state where a
counterexample ends that is not stable is kept as a node too.

:func:`to_dot` draws any such graph (a :class:`networkx.DiGraph` whose nodes carry ``label`` and
optionally ``init`` / ``fail``, and whose edges carry ``label``): one box per state listing who
holds what, the initial states with a double border, the counterexample's nodes and edges in
red, a failing node filled. Output is deterministic (nodes and edges sorted by state index).

Abstraction note: a stable-graph edge stands for *some* path through unstable states; its
label names the first action only. The highlighted path is the counterexample's states
projected on the nodes kept (consecutive kept states along it).

Examples
--------
>>> import networkx as nx
>>> g = nx.DiGraph()
>>> g.add_node(0, label="I1[0_0]", init=True)
>>> g.add_node(3, label="I1[] I2[0_0]")
>>> g.add_edge(0, 3, label="join I2")
>>> print(to_dot(g, highlight_path=(0, 3)))  # doctest: +NORMALIZE_WHITESPACE
digraph rebalproof {
  rankdir=LR;
  node [shape=box, fontname="Helvetica", fontsize=10];
  edge [fontname="Helvetica", fontsize=9];
  s0 [label="I1[0_0]", peripheries=2, color="#cf222e", penwidth=2];
  s3 [label="I1[] I2[0_0]", color="#cf222e", penwidth=2];
  s0 -> s3 [label="join I2", color="#cf222e", fontcolor="#cf222e", penwidth=2.5];
}
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import networkx as nx

from rebalproof.errors import InputError
from rebalproof.model.codec import write_text_atomic
from rebalproof.model.group_state import BEHIND, is_stable

__all__ = ["MAX_STATES", "stable_graph", "counterexample_path", "to_dot", "write_dot", "state_label"]

#: Exploration size above which ``--dot`` refuses (a picture of more is unreadable anyway).
MAX_STATES = 20_000

_RED = "#cf222e"


def state_label(state) -> str:
    """Who holds what, one member per line: ``I1*[0_0] sb[0_1] behind[0_1]``.

    ``*`` marks the leader; ``sb`` / ``wu`` standby and warmup copies; ``behind`` hosted copies
    still restoring; ``old state`` local state of tasks no longer hosted.
    """
    lines = []
    for m in state.members:
        text = f"{m.id}{'*' if m.id == state.leader else ''}{' (leaving)' if m.leaving else ''}[{', '.join(m.active)}]"
        if m.standby:
            text += f" sb[{', '.join(m.standby)}]"
        if m.warmup:
            text += f" wu[{', '.join(m.warmup)}]"
        behind = [t for t, c in m.lags if c == BEHIND and m.hosts(t)]
        if behind:
            text += f" behind[{', '.join(behind)}]"
        old = [t for t, _ in m.lags if not m.hosts(t)]
        if old:
            text += f" old state[{', '.join(old)}]"
        lines.append(text)
    if state.probe:
        lines.append("(probe scheduled)")
    return "\n".join(lines) or "(no members)"


def _states(exp) -> list:
    """Every state of the exploration, concrete, by index (one replay per BFS tree edge)."""
    n = exp.states
    out = [None] * n
    for i, s in enumerate(exp.init):
        out[i] = s
    children: dict[int, list[int]] = {}
    for idx in range(n):
        p = exp.parent[idx]
        if p >= 0:
            children.setdefault(p, []).append(idx)
    queue = deque(i for i in range(len(exp.init)))
    while queue:
        u = queue.popleft()
        for v in children.get(u, ()):
            out[v] = exp.model.next_state(out[u], exp.actions[exp.via[v]])
            queue.append(v)
    return out


def stable_graph(exp, *, keep=()) -> nx.DiGraph:
    """The graph of initial and stable states of exploration ``exp`` (see the module docstring).

    ``keep`` names more state indices to keep as nodes (a counterexample's last state).
    """
    if exp.states > MAX_STATES:
        raise InputError(
            f"the exploration has {exp.states} states; --dot draws at most {MAX_STATES}: lower the bounds "
            "(--instances, --events, --partitions) to draw the graph"
        )
    states = _states(exp)
    kept = {i for i, s in enumerate(states) if s is not None and is_stable(s)}
    kept |= set(range(len(exp.init)))
    kept |= set(keep)
    ranges = exp.edge_ranges()
    g = nx.DiGraph()
    for i in sorted(kept):
        g.add_node(i, label=state_label(states[i]), init=i < len(exp.init), stable=is_stable(states[i]))
    for u in sorted(kept):
        labels: dict[int, set] = {}
        for e in ranges[u]:
            first = exp.action(e).describe()
            seen = {exp.edge_dst[e]}
            queue = deque([exp.edge_dst[e]])
            while queue:
                v = queue.popleft()
                if v in kept:
                    labels.setdefault(v, set()).add(first)
                    continue
                for e2 in ranges[v]:
                    w = exp.edge_dst[e2]
                    if w not in seen:
                        seen.add(w)
                        queue.append(w)
        for v, names in labels.items():
            g.add_edge(u, v, label="\n".join(sorted(names)))
    return g


def counterexample_path(exp, discovery) -> tuple[int, ...]:
    """The state indices of a discovery's run: along BFS parents to its state, then its last
    action and its path (a lasso's cycle comes back to its entry)."""
    if discovery is None:
        return ()
    path = []
    idx = discovery.state
    while idx >= 0:
        path.append(idx)
        idx = exp.parent[idx]
    path.reverse()
    current = discovery.state
    if getattr(discovery, "action", None) is not None and discovery.kind != "finding":
        for e in exp.out_edges(current):
            if exp.action(e) == discovery.action:
                current = exp.edge_dst[e]
                path.append(current)
                break
    for e in getattr(discovery, "path", ()) or ():
        path.append(exp.edge_dst[e])
    return tuple(path)


def _q(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(graph: nx.DiGraph, *, highlight_path=()) -> str:
    """Graphviz DOT of ``graph`` with ``highlight_path`` (node ids in run order) in red."""
    on_path = [n for n in highlight_path if n in graph]
    path_nodes = set(on_path)
    path_edges = {(a, b) for a, b in zip(on_path, on_path[1:]) if a != b}
    fail = on_path[-1] if on_path else None
    lines = [
        "digraph rebalproof {",
        "  rankdir=LR;",
        '  node [shape=box, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for n in sorted(graph.nodes):
        data = graph.nodes[n]
        attrs = [f"label={_q(data.get('label', n))}"]
        if data.get("init"):
            attrs.append("peripheries=2")
        styles = ["dashed"] if data.get("stable") is False else []
        if n in path_nodes:
            attrs += [f'color="{_RED}"', "penwidth=2"]
        if n == fail and (data.get("fail") or data.get("stable") is False):
            styles.append("filled")
            attrs.append('fillcolor="#ffebe9"')
        if styles:
            attrs.append(f'style="{",".join(styles)}"')
        lines.append(f"  s{n} [{', '.join(attrs)}];")
    for a, b in sorted(graph.edges):
        attrs = [f"label={_q(graph.edges[a, b].get('label', ''))}"]
        if (a, b) in path_edges:
            attrs += [f'color="{_RED}"', f'fontcolor="{_RED}"', "penwidth=2.5"]
        lines.append(f"  s{a} -> s{b} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_dot(path: str | Path, exp, discovery=None) -> None:
    """Write the stable-state graph of ``exp`` to ``path``, ``discovery``'s run highlighted (atomically)."""
    run = counterexample_path(exp, discovery)
    graph = stable_graph(exp, keep=run[-1:])
    if run:
        graph.nodes[run[-1]]["fail"] = True
    write_text_atomic(path, to_dot(graph, highlight_path=run))
