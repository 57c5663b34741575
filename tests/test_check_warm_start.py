"""A counterexample at step 0 of a warm start says what step 0 is: the assignor's own settled group.

The warm start (DESIGN "Warm start") is built by calling the assignor from an empty group and
letting every copy catch up; those calls are not steps of the trace. A bug in that very first
answer shows as a counterexample of 0 steps, which without a word reads as "nothing happened".
"""

from __future__ import annotations

import json
from pathlib import Path

from rebalproof.cli.main import main
from rebalproof.model.assignors import builtin
from rebalproof.model.codec import decode_input, encode_assignment
from rebalproof.traces.render_text import warm_start_note

_HA = builtin("ha").make()
SMALL = ("--subtopologies", "1", "--partitions", "2", "--standbys", "0", "--events", "1")


def drops_first_active(inp: dict) -> dict:
    """The built-in ha's answer without an active for the first task: wrong from the very first call."""
    out = encode_assignment(_HA(decode_input(inp)))
    first = min(t["id"] for t in inp["tasks"])
    for roles in out["assignment"].values():
        if first in roles["active"]:
            roles["active"].remove(first)
    return out


def check(capsys, tmp_path, *extra):
    code = main(["check", "--assignor", "py:test_check_warm_start:drops_first_active", *SMALL,
                 "--trace-dir", str(tmp_path), *extra])
    return code, capsys.readouterr().out


def test_a_counterexample_at_the_warm_start_says_the_assignor_settled_it(capsys, tmp_path):
    code, out = check(capsys, tmp_path)
    assert code == 1
    lines = out.splitlines()
    at = lines.index('Discovered "no-lost-task" counterexample, 0 steps: stable with task(s) 0_0 owned by nobody')
    assert lines[at + 1].startswith("  (step 0 is the warm start: the group as this assignor settled it")
    assert main(["show", str(tmp_path / "cooperative+py_test_check_warm_start_drops_first_active--no-lost-task.json")]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[1].startswith("(step 0 is the warm start") and "--start cold" in shown[1]


def test_no_note_on_a_cold_start_or_a_later_step(capsys, tmp_path):
    code, out = check(capsys, tmp_path, "--start", "cold")
    assert code == 1 and "violated" in out
    assert "warm start" not in out
    header = {"kind": "safety", "fail_step": 0, "bounds": {"start": "warm"}}
    assert warm_start_note(header) is not None
    assert warm_start_note({**header, "fail_step": 2}) is None
    assert warm_start_note({**header, "kind": "lasso"}) is None
    assert warm_start_note({**header, "bounds": {"start": "cold"}}) is None
    assert warm_start_note({"kind": "safety", "fail_step": 0}) is None  # a trace from elsewhere (replay, seeds)


def test_the_answers_that_built_the_warm_start_are_judged(capsys, tmp_path):
    """An assignor wrong only on a group's first rebalance (no leader memory, no state) is caught at
    step 0 at any bounds: ``standbys_from_memory`` places no standbys when the leader remembers no
    last round, which the exploration's views never show at ``--events 1`` (no leader crash)."""
    code = main(["check", "--assignor", "py:tests.mutants:standbys_from_memory", "--events", "1", "--json",
                 "--trace-dir", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    verdict = next(p for p in report["properties"] if p["property"] == "standby-count")
    assert verdict["status"] == "violated"
    assert verdict["message"].startswith("an answer that built the warm start (before step 0) breaks it: task ")
    assert verdict["measure"]["violating_views"] == 0 and verdict["measure"]["warm_start_answers_violating"] >= 1
    trace = json.loads(Path(report["traces"]["standby-count"]).read_text())
    assert len(trace["steps"]) == 1 and warm_start_note(trace) is not None
    # the correct assignor it was made from keeps every promise there
    assert main(["check", "--assignor", "py:tests.mutants:correct", "--events", "1"]) == 0
