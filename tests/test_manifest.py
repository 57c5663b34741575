"""Replay every configuration of tests/manifest.toml: exact distinct-state counts, verdicts, traces.

Each row is a regression (TLA+ Examples' manifest): the model is explored again, its number of
distinct states must be the pinned one, each listed property must get the pinned verdict, and
each listed counterexample must come out as a trace of the pinned kind (and length) that decodes
and replays step by step through the model.

``python tests/test_manifest.py`` prints the actual figures of every row (to update the file).
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from rebalproof.model.group_assignor import resolve_for_model
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import parse_protocol
from rebalproof.properties.run_check import check_model
from rebalproof.traces.format import decode_trace

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tests" / "manifest.toml"
ROWS = tomllib.loads(MANIFEST.read_text())["model"]


def run_row(row: dict):
    spec = row["assignor"].replace("{python}", sys.executable).replace("{root}", str(ROOT))
    proto = parse_protocol(row["protocol"])
    bounds = Bounds(**row.get("bounds", {}))
    with resolve_for_model(spec, timeout=30) as resolved:
        symmetry = row.get("symmetry", False)
        rules = row.get("rules", resolved.rules)  # as rebalproof check: ha for py:/exec: unless told
        result = check_model(
            protocol=proto,
            assignor=resolved.assignor,
            assignor_name=resolved.name,
            rules=None if rules == "none" else rules,
            bounds=bounds,
            symmetry=symmetry,
        )
        model = result.exploration.model
        replays = {}
        for name, trace in result.traces.items():
            replays[name] = replay(model, decode_trace(json.loads(json.dumps(trace))))
    return result, replays


def replay(model: GroupModel, trace) -> bool:
    """Replay a trace's actions from its first state through the model; True when every state matches."""
    state = trace.steps[0].state
    if state not in model.init_states():
        return False
    for step in trace.steps[1:]:
        state = model.next_state(state, step.action)
        if state != step.state:
            return False
    if trace.kind == "lasso":
        return trace.steps[trace.header["cycle_start"]].state == trace.steps[-1].state or trace.header.get("symmetry", False)
    return True


@pytest.mark.parametrize("row", ROWS, ids=[r["name"] for r in ROWS])
def test_manifest_row(row):
    result, replays = run_row(row)
    exp = result.exploration
    assert exp.complete, f"{row['name']}: exploration incomplete ({exp.bound})"
    assert exp.states == row["states"], f"{row['name']}: {exp.states} distinct states, manifest says {row['states']}"
    for name, expected in row.get("verdicts", {}).items():
        got = result.status(name).value
        assert got == expected, f"{row['name']}: {name} is {got}, manifest says {expected}: {result.result(name).verdict.message}"
    for name, kind in row.get("traces", {}).items():
        assert name in result.traces, f"{row['name']}: no trace for {name}"
        assert result.traces[name]["kind"] == kind
        assert replays[name], f"{row['name']}: the {name} trace does not replay"
    for name, steps in row.get("steps", {}).items():
        assert len(result.traces[name]["steps"]) - 1 == steps
    if "calls" in row:  # views answered by the assignor: the memo at work
        assert result.calls == row["calls"], f"{row['name']}: {result.calls} assignor calls, manifest says {row['calls']}"
        assert result.calls < exp.states
    if "reduced" in row:  # symmetry = "auto": the sampled equivariance check decided
        assert result.symmetry_check is not None and result.symmetry_check.reduce is row["reduced"], (
            f"{row['name']}: {result.symmetry_check.message if result.symmetry_check else 'no symmetry check'}")


def test_manifest_names_are_unique():
    names = [r["name"] for r in ROWS]
    assert len(names) == len(set(names))


if __name__ == "__main__":  # print the actual figures of every row
    for row in ROWS:
        result, replays = run_row(row)
        exp = result.exploration
        verdicts = {r.property.name: r.verdict.status.value for r in result.results}
        steps = {n: len(t["steps"]) - 1 for n, t in result.traces.items()}
        print(f"{row['name']}: states={exp.states} calls={result.calls} complete={exp.complete} {exp.stats.seconds:.2f}s traces={steps} replay={replays}")
        print("   ", {k: verdicts[k] for k in row.get("verdicts", {})})
        wrong = {k: verdicts[k] for k, v in row.get("verdicts", {}).items() if verdicts[k] != v}
        if wrong:
            print("    DIFFERS:", wrong)
