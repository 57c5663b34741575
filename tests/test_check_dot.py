"""``rebalproof check --dot FILE``: the explored stable-state graph, the counterexample highlighted."""

import re

from rebalproof.cli.main import main

SMALL = ["--instances", "3", "--initial", "2", "--subtopologies", "1", "--partitions", "3", "--standbys", "0", "--events", "1"]


def test_dot_of_a_broken_handover_highlights_the_shortest_counterexample(tmp_path, capsys):
    path = tmp_path / "graph.dot"
    code = main(["check", "--protocol", "cooperative:early_handover=true", "--assignor", "round-robin", *SMALL, "--dot", str(path)])
    capsys.readouterr()
    assert code == 1
    text = path.read_text()
    assert text.startswith("digraph rebalproof {") and text.rstrip().endswith("}")
    red = re.findall(r"^  s(\d+) -> s(\d+) \[.*color=\"#cf222e\".*\];$", text, re.M)
    assert red and red[0][0] == "0"  # from the initial state
    assert 'fillcolor="#ffebe9"' in text  # the failing state is filled


def test_dot_of_a_passing_check_has_no_highlighted_run(tmp_path, capsys):
    path = tmp_path / "graph.dot"
    assert main(["check", "--protocol", "cooperative", "--assignor", "round-robin", *SMALL, "--dot", str(path)]) == 0
    capsys.readouterr()
    text = path.read_text()
    assert "->" in text and 'fillcolor="#ffebe9"' not in text
