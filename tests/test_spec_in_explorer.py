"""``--assignor spec:ha`` in the explorer: every answer the KIP-441 rules allow is a successor.

This checks the specification rather than one implementation. The rules alone (caught-up
actives, standbys, warmup bound, fixpoint once balanced) keep every safety property but do
not force convergence: while unbalanced, an allowed answer may keep probing and move tasks
back and forth. That is why a conforming implementation needs a stable target (as ``ha`` has).
"""

import json

from rebalproof.cli.main import main

BOUNDS = ["--instances", "2", "--initial", "1", "--subtopologies", "1", "--partitions", "2", "--standbys", "0", "--events", "1"]


def _check(capsys, assignor):
    code = main(["check", "--assignor", assignor, *BOUNDS, "--json"])
    report = json.loads(capsys.readouterr().out)
    return code, report, {p["property"]: p["status"] for p in report["properties"]}


def test_the_kip441_rules_alone_allow_a_shuffle_cycle(capsys):
    code, report, status = _check(capsys, "spec:ha")
    assert code == 1 and report["complete"]
    for safe in ("single-owner", "no-lost-task", "warmup-bound", "assignor-answers"):
        assert status[safe] == "holds", safe
    assert status["converges"] == "violated" and status["no-shuffle-cycle"] == "violated"
    assert report["statistics"]["distinct_states"] == 325  # with partial-order reduction (331 with --por off)
    assert report["assignor_calls"]["calls"] < report["statistics"]["distinct_states"]


def test_ha_converges_within_the_same_bounds(capsys):
    code, _, status = _check(capsys, "ha")
    assert status["converges"] == "holds" and status["no-shuffle-cycle"] == "holds"


def test_spec_assignor_is_only_for_the_explorer(capsys, tmp_path):
    view = tmp_path / "in.json"
    view.write_text('{"tasks": [{"id": "0_0"}], "members": [{"id": "I1"}]}')
    assert main(["assign", "--assignor", "spec:ha", str(view)]) == 2
    assert "rebalproof check" in capsys.readouterr().err
