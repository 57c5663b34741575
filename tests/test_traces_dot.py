"""Graph export: the stable-state graph of a small model as DOT, a counterexample's run highlighted.

Also runs the doctests of the trace modules (their examples are part of the documentation).
"""

from __future__ import annotations

import doctest
import re

import pytest

from rebalproof.errors import InputError
from rebalproof.model.explorer import explore
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import parse_protocol
from rebalproof.model.group_state import is_stable
from rebalproof.model.toy_assignors import RoundRobin
from rebalproof.properties.run import RunContext, RunMonitor, evaluate
from rebalproof.traces import dot as dot_module
from rebalproof.traces.dot import counterexample_path, stable_graph, to_dot, write_dot


@pytest.fixture(scope="module")
def explored():
    bounds = Bounds(instances=3, initial=2, subtopologies=1, partitions=3, standbys=0, events=1)
    proto = parse_protocol("cooperative:early_handover=true")
    model = GroupModel(protocol=proto, bounds=bounds, assignor=RoundRobin(), assignor_name="round-robin")
    ctx = RunContext(protocol=proto, rules=None, bounds=bounds, assignor="round-robin")
    monitor = RunMonitor(ctx, model)
    exp = explore(model, monitor=monitor)
    results = {r.property.name: r for r in evaluate(ctx, exp, monitor)}
    return exp, results["single-owner"].discovery


def test_the_graph_keeps_initial_and_stable_states_only(explored):
    exp, _ = explored
    g = stable_graph(exp)
    assert 0 < g.number_of_nodes() < exp.states
    for n, data in g.nodes(data=True):
        assert data["init"] or data["stable"], n
    assert all(g.edges[e]["label"] for e in g.edges)
    assert any("join I3" in g.edges[e]["label"] for e in g.edges)


def test_the_counterexample_run_is_highlighted_and_ends_in_a_filled_node(explored, tmp_path):
    exp, discovery = explored
    run = counterexample_path(exp, discovery)
    assert run[0] == 0 and len(run) == 4  # warm start: init, join I3, rebalance, the double owner
    assert not is_stable(exp.state_at(run[-1]))
    path = tmp_path / "graph.dot"
    write_dot(path, exp, discovery)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("digraph rebalproof {") and text.rstrip().endswith("}")
    fail_node = re.search(rf"^  s{run[-1]} \[(.*)\];$", text, re.M).group(1)
    assert 'fillcolor="#ffebe9"' in fail_node and "I3[0_2]" in fail_node
    red_edges = re.findall(r"^  s(\d+) -> s(\d+) \[.*color=\"#cf222e\".*\];$", text, re.M)
    assert red_edges == [("0", str(run[-1]))]  # init -> (unstable states) -> the failing state
    assert text == path.read_text(encoding="utf-8")
    write_dot(tmp_path / "again.dot", exp, discovery)
    assert (tmp_path / "again.dot").read_text(encoding="utf-8") == text  # deterministic


def test_dot_quotes_labels_and_refuses_huge_graphs(explored, monkeypatch):
    import networkx as nx

    g = nx.DiGraph()
    g.add_node(1, label='say "hi"\nback\\slash')
    g.add_node(2, label="x")
    g.add_edge(1, 2, label="a")
    text = to_dot(g)
    assert r'label="say \"hi\"\nback\\slash"' in text
    exp, _ = explored
    monkeypatch.setattr(dot_module, "MAX_STATES", 10)
    with pytest.raises(InputError, match="lower the bounds"):
        stable_graph(exp)


@pytest.mark.parametrize("module", ["dot", "render_text", "replay"])
def test_doctests(module):
    import importlib

    mod = importlib.import_module(f"rebalproof.traces.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
