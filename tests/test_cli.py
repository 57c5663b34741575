"""The ``rebalproof`` command: exit codes 0/1/2, one-line errors, findings, never a traceback.

Most tests drive :func:`rebalproof.cli.main.main` in-process; a few run the installed console
script to pin what a CI job sees (exit codes, stdout/stderr apart, no "Traceback").
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rebalproof.cli.main import main

PROGRAMS = Path(__file__).resolve().parent / "assignors"
SCRIPT = Path(sys.executable).parent / "rebalproof"

INPUT = {
    "config": {"num_standby_replicas": 0},
    "tasks": [{"id": "0_0"}, {"id": "0_1"}, {"id": "1_0", "stateful": False}],
    "members": [
        {"id": "I1", "active": ["0_0", "1_0"], "lags": {"0_0": 0}},
        {"id": "I2", "active": ["0_1"], "lags": {"0_1": 0}},
    ],
    "previous_members": ["I1", "I2"],
}
KEEP = {  # the settled input's own assignment: every property holds
    "assignment": {"I1": {"active": ["0_0", "1_0"]}, "I2": {"active": ["0_1"]}},
    "probing_rebalance": False,
}
TWO_ACTIVES = {"assignment": {"I1": {"active": ["0_0", "0_1", "1_0"]}, "I2": {"active": ["0_1"]}}}


def exec_spec(name: str, *args: str) -> str:
    return "exec:" + shlex.join([sys.executable, str(PROGRAMS / name), *args])


def write(tmp_path: Path, name: str, content) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def script(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *argv], capture_output=True, text=True, timeout=timeout)


# ------------------------------------------------------------------------------------ schema


@pytest.mark.parametrize("which, title", [("input", "RebalanceInput"), ("assignment", "Assignment")])
def test_schema_prints_json_schema(capsys, which, title):
    code, out, _ = run(capsys, "schema", which)
    assert code == 0 and json.loads(out)["title"] == title


def test_the_input_schema_accepts_every_input_sent_and_tells_a_lost_memory_from_an_empty_one():
    """Red team 10: the schema gave ``previous_members`` the default ``[]`` and no null, though a
    lost memory is absent or null and an empty list means every member is new (``stable`` reads
    them apart); an exec assignor filling in the schema's defaults read every fail-over wrong."""
    jsonschema = pytest.importorskip("jsonschema")
    from rebalproof.model.codec import decode_input, encode_input
    from rebalproof.model.schema import INPUT_SCHEMA

    lost = {"tasks": [{"id": "0_0"}], "members": [{"id": "I1", "active": ["0_0"]}]}
    for memory in (None, [], ["I1"]):
        obj = dict(lost, previous_members=memory)
        jsonschema.validate(obj, INPUT_SCHEMA)
        sent = encode_input(decode_input(obj))  # what an exec assignor is sent
        jsonschema.validate(sent, INPUT_SCHEMA)
        assert sent.get("previous_members") == memory
    jsonschema.validate(lost, INPUT_SCHEMA)
    assert decode_input(lost).previous_members is None and decode_input(dict(lost, previous_members=[])).previous_members == ()
    assert INPUT_SCHEMA["properties"]["previous_members"]["default"] is None


def test_schema_of_something_else_is_usage(capsys):
    code, _, err = run(capsys, "schema", "trace")
    assert code == 2 and "input" in err and "assignment" in err


# ------------------------------------------------------------------------------------ oracle


def test_oracle_ok(capsys, tmp_path):
    code, out, err = run(capsys, "oracle", write(tmp_path, "in.json", INPUT), write(tmp_path, "out.json", KEEP))
    assert code == 0, out + err
    assert "one-active" in out and "holds" in out and out.rstrip().splitlines()[-1].startswith("ok:")
    assert "\x1b[" not in out  # plain text when not a terminal


def test_oracle_violation_names_property_tasks_and_members(capsys, tmp_path):
    code, out, _ = run(capsys, "oracle", write(tmp_path, "in.json", INPUT), write(tmp_path, "out.json", TWO_ACTIVES))
    assert code == 1
    line = next(l for l in out.splitlines() if l.startswith("violated: one-active"))
    assert "0_1" in line and "I1" in line and "I2" in line


def test_oracle_json(capsys, tmp_path):
    code, out, _ = run(capsys, "oracle", "--json", "--rules", "sticky",
                       write(tmp_path, "in.json", INPUT), write(tmp_path, "out.json", TWO_ACTIVES))
    result = json.loads(out)
    assert code == 1 and result["ok"] is False and result["rules"] == "sticky"
    by_name = {v["property"]: v for v in result["verdicts"]}
    assert by_name["one-active"]["status"] == "violated" and "0_1" in by_name["one-active"]["tasks"]
    assert {"one-active", "no-colocation", "balanced"} <= set(by_name)


@pytest.mark.parametrize(
    "input_text, output_text, says",
    [
        ("{not json", json.dumps(KEEP), "not valid JSON"),
        (json.dumps(INPUT), "[1, 2", "not valid JSON"),
        (json.dumps({**INPUT, "colour": "blue"}), json.dumps(KEEP), "unknown field 'colour'"),
        (json.dumps({**INPUT, "members": []}), json.dumps(KEEP), "members"),
    ],
)
def test_oracle_bad_input_is_one_line_exit_2(capsys, tmp_path, input_text, output_text, says):
    code, out, err = run(capsys, "oracle", write(tmp_path, "in.json", input_text), write(tmp_path, "out.json", output_text))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and says in err


@pytest.mark.parametrize(
    "answer, says",
    [
        ({"assignment": {"I1": {"active": ["9_9"]}, "I2": {}}}, "unknown task '9_9'"),
        ({"assignment": {"I1": {}, "I2": {}, "I9": {}}}, "unknown member 'I9'"),
        ({"assignment": {"I1": {}}}, "member 'I2' of the input is missing"),
        ({"members": {}}, "unknown field 'members'"),
        ({"assignment": {"I1": {"active": ["0_0"], "standby": "0_1"}, "I2": {}}}, "assignment.I1.standby"),
        ([{"I1": ["0_0"]}], "must be a JSON object"),
    ],
)
def test_oracle_an_answer_that_is_no_assignment_for_its_input_is_a_finding(capsys, tmp_path, answer, says):
    """#10 item 2: OUTPUT.json is the implementation's answer, so a malformed one is a finding (exit 1)
    named as check names it (assignor-answers) with corpus mode's message, not a usage error."""
    code, out, err = run(capsys, "oracle", write(tmp_path, "in.json", INPUT), write(tmp_path, "out.json", answer))
    assert code == 1 and err == ""
    line = next(l for l in out.splitlines() if l.startswith("violated: assignor-answers: "))
    assert "the answer is no assignment for its input: " in line and says in line
    code, out, _ = run(capsys, "oracle", "--json", write(tmp_path, "in.json", INPUT), write(tmp_path, "out.json", answer))
    result = json.loads(out)
    assert code == 1 and result["ok"] is False and result["violations"] == ["assignor-answers"]
    assert says in result["verdicts"][0]["message"]
    record = json.dumps({"input": INPUT, "output": answer}) + "\n"
    code, out, _ = run(capsys, "oracle", "--corpus", write(tmp_path, "c.jsonl", record))
    assert code == 1 and says in out  # the same answer in a corpus: the same finding


def test_oracle_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, "oracle", str(tmp_path / "nope.json"), write(tmp_path, "out.json", KEEP))
    assert code == 2 and "does not exist" in err


def test_oracle_exit_codes_from_the_console_script(tmp_path):
    inp = write(tmp_path, "in.json", INPUT)
    ok = script("oracle", inp, write(tmp_path, "ok.json", KEEP))
    bad = script("oracle", inp, write(tmp_path, "bad.json", TWO_ACTIVES))
    broken = script("oracle", inp, write(tmp_path, "broken.json", "{"))
    assert (ok.returncode, bad.returncode, broken.returncode) == (0, 1, 2)
    assert broken.stdout == "" and broken.stderr.startswith("error: ") and broken.stderr.count("\n") == 1
    assert all("Traceback" not in r.stderr for r in (ok, bad, broken))


# ------------------------------------------------------------------------------------ assign


def test_assign_prints_an_assignment_the_oracle_accepts(capsys, tmp_path):
    inp = write(tmp_path, "in.json", INPUT)
    code, out, err = run(capsys, "assign", "--assignor", exec_spec("correct.py"), "--no-check", inp)
    assert code == 0 and err == ""
    answer = json.loads(out)
    assert sorted(answer["assignment"]) == ["I1", "I2"]
    code, out, _ = run(capsys, "oracle", "--rules", "eager", inp, write(tmp_path, "out.json", answer))
    assert code in (0, 1) and "one-active" in out


def test_assign_with_check_judges_the_answer(capsys, tmp_path):
    code, out, err = run(capsys, "assign", "--assignor", exec_spec("correct.py"), "--rules", "eager",
                         write(tmp_path, "in.json", INPUT))
    assert code in (0, 1) and json.loads(out)["assignment"]
    assert "one-active" in err and "judged by the eager rules" in err


@pytest.mark.parametrize(
    "program, args, kind, says",
    [
        ("crash.py", (), "crash", "crashed on the input below: exited without answering (exit code 3; stderr: warming up | boom"),
        ("hang.py", ("sleep",), "timeout", "timed out on the input below: no answer within 0.5 s"),
        ("garbage.py", (), "malformed", "answered malformed output on the input below"),
        ("garbage.py", ("missing-member",), "invalid", "answered an assignment that does not fit the input below"),
    ],
)
def test_assign_finding_exit_1_with_the_input_saved(capsys, tmp_path, program, args, kind, says):
    spec = exec_spec(program, *args)
    findings = tmp_path / "findings"
    code, out, err = run(capsys, "assign", "--assignor", spec, "--timeout", "0.5", "--finding-dir", str(findings),
                         write(tmp_path, "in.json", INPUT))
    assert code == 1 and out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert lines[0] == f"finding: {spec} {says}" or lines[0].startswith(f"finding: {spec} {says}")
    assert json.loads(lines[1])["members"][1]["id"] == "I2"  # the input, on one line
    (saved,) = findings.glob(f"finding-{kind}-*.json")
    finding = json.loads(saved.read_text())
    assert finding["finding"] == kind and finding["assignor"] == spec and finding["input"] == json.loads(lines[1])
    assert lines[2] == f"saved: {saved}"


def test_assign_hang_from_the_console_script_ends_within_the_timeout(tmp_path):
    result = script("assign", "--assignor", exec_spec("hang.py", "child"), "--timeout", "0.5",
                    write(tmp_path, "in.json", INPUT), timeout=20)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("finding: ") and "timed out" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "spec, says",
    [
        ("fastest", "unknown assignor 'fastest'"),
        ("exec:no-such-assignor", "exec: 'no-such-assignor' not found; give a command on PATH or a path"),
        ("py:no_such_module_xyz:f", "cannot import module 'no_such_module_xyz'"),
        ("ha:colour=blue", "does not take option"),
    ],
)
def test_assign_bad_spec_is_exit_2(capsys, tmp_path, spec, says):
    code, out, err = run(capsys, "assign", "--assignor", spec, write(tmp_path, "in.json", INPUT))
    assert code == 2 and out == "" and err.startswith("error: ") and says in err and err.count("\n") == 1


def test_assign_unknown_assignor_from_the_console_script(tmp_path):
    result = script("assign", "--assignor", "fastest", write(tmp_path, "in.json", INPUT))
    assert result.returncode == 2 and "unknown assignor 'fastest'" in result.stderr and "Traceback" not in result.stderr


# ------------------------------------------------------------------------------------ verify


def test_verify_external_assignor_writes_json(capsys, tmp_path):
    out_file = tmp_path / "verify.json"
    code, out, _ = run(capsys, "verify", "--assignor", exec_spec("correct.py"), "--rules", "eager",
                       "--generated", "12", "--json", str(out_file), "--engine", "local", "--out", str(tmp_path / "out"))
    result = json.loads(out_file.read_text())
    (row,) = result["assignors"]
    assert row["rules"] == "eager" and row["findings"] == 0 and row["calls"] == result["corpus"]["views"]
    assert sum(row["properties"]["one-active"]["counts"].values()) == row["calls"]
    assert row["properties"]["one-active"]["counts"]["holds"] == row["calls"]  # round-robin: one active each
    assert code == (0 if result["ok"] else 1)
    assert out.rstrip().splitlines()[-1].startswith("verify: ")


def test_verify_counts_findings_and_fails(capsys, tmp_path):
    code, out, _ = run(capsys, "verify", "--assignor", exec_spec("crash.py", "2"), "--generated", "6",
                       "--finding-dir", str(tmp_path), "--engine", "local", "--out", str(tmp_path / "out"))
    assert code == 1 and "finding: exec:" in out
    assert len(list(tmp_path.glob("finding-crash-*.json"))) >= 1


def test_verify_is_deterministic(capsys, tmp_path):
    args = ("verify", "--assignor", "sticky", "--generated", "16", "--engine", "local", "--out", str(tmp_path))
    first = run(capsys, *args)
    second = run(capsys, *args)
    # stderr's progress lines (stderr is not a terminal here) carry the time since the start
    untimed = [(code, out, re.sub(r" \(\d+:\d\d\)$", "", err, flags=re.M)) for code, out, err in (first, second)]
    assert untimed[0] == untimed[1] and "sticky" in first[1] and "verify: one rebalance at a time" in first[2]


def test_oracle_corpus_exit_codes(capsys, tmp_path):
    good = json.dumps({"input": INPUT, "output": KEEP})
    bad = json.dumps({"input": INPUT, "output": TWO_ACTIVES, "name": "two actives"})
    code, out, _ = run(capsys, "oracle", "--corpus", write(tmp_path, "ok.jsonl", good + "\n" + good + "\n"))
    assert code == 0 and "2 lines" in out
    code, out, _ = run(capsys, "oracle", "--corpus", write(tmp_path, "bad.jsonl", good + "\n" + bad + "\n"))
    assert code == 1 and "one-active" in out
    code, out, err = run(capsys, "oracle", "--corpus", write(tmp_path, "broken.jsonl", good + "\n{nope\n"))
    assert code == 2 and out == "" and err.startswith("error: ") and "line 2" in err and err.count("\n") == 1
    code, _, err = run(capsys, "oracle", "--corpus", str(tmp_path / "ok.jsonl"), str(tmp_path / "ok.jsonl"))
    assert code == 2 and "not both" in err


def test_the_summary_line_says_every_property_holds_only_when_none_is_undecided():
    """A check cut short by its time limit printed "ok: every promised property holds (7 holds,
    14 inconclusive, ...)": the line now says how many are undecided."""
    import doctest

    from rebalproof.cli import render
    from rebalproof.cli.render import summary_line
    from rebalproof.properties.verdict import Status, Verdict

    assert doctest.testmod(render).failed == 0
    verdicts = [Verdict(property="single-owner", status=Status.INCONCLUSIVE), Verdict(property="converges", status=Status.INCONCLUSIVE),
                Verdict(property="task-moves", status=Status.HOLDS)]
    assert summary_line(verdicts) == "ok: nothing violated, but 2 of the promised properties are undecided (1 holds, 2 inconclusive)"
    assert summary_line(verdicts[2:]) == "ok: every promised property holds (1 holds)"
