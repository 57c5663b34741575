"""``check`` judges every answer it reaches by the per-rebalance catalogue (issue #10 item 1).

An owner-ignoring round-robin (``tests/mutants.py: owner_blind``) is named for
``caught-up-active`` with the number of distinct violating views and a shortest trace that
replays; the built-in references keep every per-rebalance property their rules promise; an
answer that gives a member one task twice is a ``no-colocation`` finding (exit 1), never a
usage error (exit 2); the promise table is the catalogue's, ``--rules none`` promising only
what any answer must be.
"""

from __future__ import annotations

import json

import pytest

from rebalproof.cli.main import main
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_protocol import parse_protocol
from rebalproof.model.toy_assignors import RoundRobin
from rebalproof.properties.catalogue import PER_ASSIGNMENT
from rebalproof.properties.run import RunContext
from rebalproof.properties.run_check import check_model
from rebalproof.properties.run_rebalance import PROMISED_WITHOUT_RULES, REBALANCE_NAMES, promised
from rebalproof.traces.replay import replay

from conftest import ROOT

SMALL = ["--events", "1"]


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # py:tests.mutants:... imports from the repository root


def test_owner_blind_round_robin_is_named_for_caught_up_active(at_root, tmp_path, capsys):
    code = main(["check", "--assignor", "py:tests.mutants:owner_blind", *SMALL, "--trace-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    row = next(line for line in out.splitlines() if line.startswith("caught-up-active "))
    assert " violated " in row and "distinct views break it; first: task 1_0 is active on I3" in row and "violating_views=" in row
    assert "33 of 77 distinct views break it" in row  # README "Checking your own assignor"
    assert 'Discovered "caught-up-active" counterexample, 2 steps' in out
    assert out.splitlines()[-1].startswith("violated: standby-count, caught-up-active, bounded-unavailability")
    (path,) = tmp_path.glob("*caught-up-active.json")
    trace = json.loads(path.read_text())
    assert trace["property"] == "caught-up-active" and trace["kind"] == "safety"
    report = replay(trace)
    assert report.claim is not None and report.claim.status == "confirmed", report.claim


def test_json_counts_distinct_violating_views(at_root, capsys):
    code = main(["check", "--assignor", "py:tests.mutants:owner_blind", *SMALL, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["exit_code"] == 1
    by_name = {p["property"]: p for p in report["properties"]}
    measure = by_name["caught-up-active"]["measure"]
    assert 0 < measure["violating_views"] <= measure["judged_views"]
    assert by_name["one-active"]["status"] == "holds" and by_name["one-active"]["measure"]["violating_views"] == 0
    assert "caught-up-active" in report["traces"] or report["traces"] == {}


def test_a_task_twice_for_a_member_is_a_no_colocation_finding_not_a_usage_error(at_root, capsys):
    code = main(["check", "--assignor", "py:tests.mutants:task_twice", *SMALL])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    assert 'Discovered "no-colocation" counterexample, 1 step' in captured.out  # a rebalance requested at the warm start
    assert "error:" not in captured.err


@pytest.mark.parametrize("rules", ["ha", "sticky", "eager", "learner", None])
def test_the_promise_table_is_the_catalogues(rules):
    for prop in PER_ASSIGNMENT:
        expected = prop.name in PROMISED_WITHOUT_RULES if rules is None else rules in prop.promised_by
        assert promised(prop.name, rules) is expected


@pytest.mark.parametrize(
    "proto, assignor, rules",
    [("cooperative", "ha", "ha"), ("eager", "sticky", "sticky"), ("cooperative", "sticky", "sticky"), ("learner", "learner", "learner")],
)
def test_references_keep_every_promised_per_rebalance_property(proto, assignor, rules):
    from rebalproof.model.assignors import builtin

    bounds = Bounds(instances=3, initial=2, events=2, subtopologies=1, partitions=2)
    result = check_model(protocol=parse_protocol(proto), assignor=builtin(assignor).make(), assignor_name=assignor,
                         rules=rules, bounds=bounds)
    ctx = RunContext(protocol=parse_protocol(proto), rules=rules, bounds=bounds)
    for name in REBALANCE_NAMES:
        verdict = result.result(name).verdict
        if promised(name, rules):
            assert verdict.status.value == "holds", f"{proto}+{assignor}: {name}: {verdict.message}"
            assert verdict.measure["judged_views"] > 0
        else:
            assert verdict.status.value == "not promised"
    assert result.result("caught-up-active").property.promised(ctx) is (rules == "ha")


def test_no_rule_set_promises_only_what_any_answer_must_be():
    bounds = Bounds(instances=3, initial=2, subtopologies=1, partitions=2, events=1)
    result = check_model(protocol=parse_protocol("cooperative"), assignor=RoundRobin(), assignor_name="round-robin",
                         rules=None, bounds=bounds)
    statuses = {n: result.status(n).value for n in REBALANCE_NAMES}
    assert statuses["one-active"] == statuses["no-colocation"] == "holds"
    assert statuses["caught-up-active"] == "not promised"
    assert "observed: violated" in result.result("standby-count").verdict.message  # judged all the same
