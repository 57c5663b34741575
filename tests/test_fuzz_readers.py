"""Every reader survives hostile files (issue #15): a fuzzing suite over every kind of file.

Valid files of each kind (an input, an answer, a trace, a corpus, a suite, a scenario) are
mutated (:mod:`fuzzing`: drop, duplicate, retype and nest values, truncate, splice bytes) and
given to the reader *and* to the command that reads them, called in-process. Each case asserts:

- the reader returns a value or raises :class:`~rebalproof.errors.InputError`, nothing else;
- the command exits 0, 1 or 2 with the README's meaning (2: exactly one ``error:`` line on
  stderr; 0 / 1: its verdict printed), never raises (no traceback);
- a file the reading contract certainly rejects (a hostile number, a duplicate key, nesting past
  the limit, invalid UTF-8, a cut-off document, an empty corpus) is exit 2, never 0 or 1;
- the command agrees with its reader: the reader rejects the file => exit 2, and (where the
  file is the command's only input) the reader accepts it => exit 0 or 1.

Hypothesis runs derandomized in CI (tests/conftest.py); how many cases ran per reader, and
their exit codes, is printed at the end of the session (``fuzzing:`` lines).
"""

from __future__ import annotations

import contextlib
import doctest
import gzip
import io
import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rebalproof import reading
from rebalproof.cli.assign_cmd import read_assign_input
from rebalproof.cli.main import main
from rebalproof.corpus import check_corpus
from rebalproof.errors import InputError
from rebalproof.model.assignors.external import ExecAssignor, _Finding
from rebalproof.model.codec import decode_assignment, decode_input, read_json
from rebalproof.model.group_bounds import load_scenario
from rebalproof.pipeline.suite import load_suite
from rebalproof.traces.replay import load_trace

from conftest import ROOT
from fuzzing import Case, Pairs, json_cases, toml_cases

#: reader -> Counter of outcomes ("cases", "exit 0", "exit 1", "exit 2", "certainly bad");
#: printed by tests/conftest.py at the end of the session.
FUZZ_COUNTS: dict[str, Counter] = {}

SETTLED = read_json(ROOT / "examples" / "inputs" / "settled.json")
INPUTS = {p.stem: read_json(p) for p in sorted((ROOT / "examples" / "inputs").glob("*.json"))}
ANSWERS = {p.stem: read_json(p) for p in sorted((ROOT / "examples" / "answers").glob("*-settled.json"))}
TRACES = {p.stem: read_json(p) for p in (ROOT / "traces" / "seeds" / "kip429-leader-crash-before-scaling.json",)}
#: Three records of each example corpus: the ha assignor's hold, the rotating one's violate.
CORPORA = {name: [json.loads(line) for line in (ROOT / "examples" / "corpus" / f"{name}.jsonl").read_text().splitlines()[:3]]
           for name in ("ha", "rotating")}
SUITE = {
    "suite": {"name": "fuzz", "description": "one small check"},
    "check": [{
        "name": "eager+sticky", "protocol": "eager", "assignor": "sticky", "time_limit": 20,
        "bounds": {"instances": 2, "initial": 1, "events": 1, "subtopologies": 1, "partitions": 1},
        "not_promised": ["warmup-bound", "bounded-unavailability", "scale-down-completes", "warmup-assigned",
                         "warmup-promoted", "probing-rebalance", "learner-ready", "scale-down-done"],
    }],
    "rebalances": {"assignors": [], "generated": 0},
}
SCENARIO = {"protocol": "eager", "assignor": "sticky", "instances": 2, "initial": 1, "events": 1, "subtopologies": 1,
            "partitions": 1, "standbys": 0}

# Enough cases per reader to be thousands in `make test`, within ~60 s for the whole file unloaded.
EXAMPLES = {"input": 2000, "answer": 2000, "trace": 1500, "corpus": 1500, "suite": 1500, "scenario": 1500, "exec answer": 3000}
def fuzz(reader: str) -> settings:
    """The loaded profile (derandomized in CI) with this reader's number of cases."""
    return settings(max_examples=EXAMPLES[reader], deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="rebalproof-fuzz-") as name:
        yield Path(name)


def run(*args: str) -> tuple[int, str, str]:
    """The CLI in this process: (exit code, stdout, stderr). An exception here is a traceback."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def read(reader, path: Path) -> InputError | None:
    """Run a reader: None when it accepts the file, its InputError when it rejects it."""
    try:
        reader(path)
    except InputError as exc:
        return exc
    return None


def tally(kind: str, case: Case, code: int) -> None:
    counts = FUZZ_COUNTS.setdefault(kind, Counter())
    counts["cases"] += 1
    counts[f"exit {code}"] += 1
    counts["certainly bad"] += case.certainly_bad


def check_exit(case: Case, code: int, out: str, err: str, rejected: InputError | None, *, ok_words=("ok",),
               violated_words=("violated",), accepted_means_verdict: bool = True) -> None:
    """The shared assertions: exit codes with the README's meaning, agreeing with the reader."""
    steps = " / ".join(case.steps)
    assert code in (0, 1, 2), f"{steps}: exit {code}"
    if case.certainly_bad:
        assert rejected is not None, f"{steps}: a malformed file was read"
    if rejected is not None:
        assert code == 2, f"{steps}: the reader rejects the file ({rejected}) but the command exits {code}"
    if code == 2:
        assert err.startswith("error: ") and err.count("\n") == 1, f"{steps}: exit 2 must be one error line, got {err!r}"
        assert "Traceback" not in err
    else:
        assert rejected is None, f"{steps}: exit {code} on a file its reader rejects"
        words = ok_words if code == 0 else violated_words
        assert any(w in out or w in err for w in words), f"{steps}: exit {code} without saying so: {out[-300:]!r} {err[-300:]!r}"
    if accepted_means_verdict and rejected is None:
        assert code in (0, 1), f"{steps}: the reader accepts the file but the command exits 2: {err}"


# -- inputs: read_json + decode_input (+ at least one member); `assign --assignor sticky INPUT` ----
def read_input(path: Path):
    return read_assign_input(path)


@fuzz("input")
@given(case=json_cases(INPUTS))
def test_fuzz_input(workdir, case):
    path = workdir / "input.json"
    path.write_bytes(case.data)
    rejected = read(read_input, path)
    code, out, err = run("assign", "--assignor", "sticky", str(path))
    tally("input", case, code)
    check_exit(case, code, out, err, rejected, ok_words=('"assignment"',), violated_words=("violated", "finding"))


# -- answers: read_json (the reader); `oracle INPUT ANSWER` -------------------------------------------
# The answer is the implementation's (#10 item 2): a file the reader rejects is the user's (exit 2,
# as a corpus line that is not JSON), but JSON that is no assignment for the input (its shape, ids,
# a member left out) is a finding: exit 1 naming assignor-answers, as corpus mode counts it.
def read_answer_json(path: Path):
    return read_json(path, what="output")


@fuzz("answer")
@given(case=json_cases(ANSWERS))
def test_fuzz_answer(workdir, case):
    path, base = workdir / "answer.json", workdir / "settled.json"
    base.write_text(json.dumps(SETTLED))
    path.write_bytes(case.data)
    rejected = read(read_answer_json, path)
    code, out, err = run("oracle", str(base), str(path))
    tally("answer", case, code)
    check_exit(case, code, out, err, rejected)
    malformed = rejected is None and read(lambda p: decode_assignment(read_json(p), decode_input(SETTLED)), path)
    if malformed:
        assert code == 1 and "violated: assignor-answers: the answer is no assignment for its input" in out, (
            f"{' / '.join(case.steps)}: a malformed answer ({malformed}) is a finding, got exit {code}: {err[:300]}")


# -- exec answers: one line of an exec: assignor, a finding (never a crash) when malformed -------------
@fuzz("exec answer")
@given(case=json_cases(ANSWERS))
def test_fuzz_exec_answer_line(case):
    line = case.data.replace(b"\n", b" ").rstrip() + b"\n"
    counts = FUZZ_COUNTS.setdefault("exec answer line", Counter())
    counts["cases"] += 1
    try:
        obj = ExecAssignor._parse(None, line)
    except _Finding as finding:
        assert finding.kind == "malformed"
        counts["finding (exit 1)"] += 1
        return
    assert not case.certainly_bad, f"{' / '.join(case.steps)}: a malformed answer line was read"
    counts["read"] += 1
    try:
        decode_assignment(obj, decode_input(SETTLED))
    except InputError:
        pass


# -- traces: load_trace; `show TRACE` (and `replay TRACE` when the reader rejects it) -----------------
@fuzz("trace")
@given(case=json_cases(TRACES))
def test_fuzz_trace(workdir, case):
    path = workdir / "trace.json"
    path.write_bytes(case.data)
    rejected = read(load_trace, path)
    code, out, err = run("show", str(path))
    tally("trace", case, code)
    # show renders any readable trace: exit 0; it judges nothing, so there is no exit 1
    check_exit(case, code, out, err, rejected, ok_words=("",))
    assert code != 1
    code, out, err = run("replay", str(path), "--quiet")
    tally("trace (replay)", case, code)
    # replay judges: 0 conforms, 1 the first disagreement, 2 not a trace (or it names what cannot be run)
    check_exit(case, code, out, err, rejected, ok_words=("conforms", "ok"), violated_words=("disagree", "differ", "refute", "violated", "finding", "not"),
               accepted_means_verdict=False)


# -- corpora: check_corpus; `oracle --corpus FILE` -----------------------------------------------------
@st.composite
def corpus_cases(draw):
    """A mutated corpus: one record mutated, lines dropped or repeated or blank, bytes spliced, gzipped."""
    records = list(CORPORA[draw(st.sampled_from(sorted(CORPORA)))])
    index = draw(st.integers(0, len(records) - 1))
    record_case = draw(json_cases({"record": records[index]}))
    lines = [json.dumps(r).encode() for r in records]
    lines[index] = record_case.data.rstrip(b"\n").replace(b"\n", b" ")
    steps = list(record_case.steps[1:])
    bad = record_case.certainly_bad and bool(lines[index].strip())  # a record cut to nothing is a blank line
    shape = draw(st.sampled_from(["same"] * 4 + ["blank lines", "drop all", "only blank", "repeat", "extra keys", "extra keys"]))
    if shape == "blank lines":
        lines = [b"", *lines[:1], b"   ", *lines[1:], b""]
    elif shape == "drop all":
        lines, bad = [], True
    elif shape == "only blank":
        lines, bad = [b"", b" \t", b""], True
    elif shape == "repeat":
        lines = lines + lines
    elif shape == "extra keys" and not bad:
        extra = {"recorded_at": "2026-11-24T10:00:00Z", "group": "billing"}
        lines = [json.dumps({**extra, **r}).encode() for r in records]
        steps = ["extra keys on every record"]
    steps.append(shape)
    data = b"\n".join(lines) + b"\n"
    cut = draw(st.sampled_from(["none"] * 5 + ["truncate", "gzip", "gzip", "gzip truncated"]))
    if cut == "truncate" and data.strip():
        last = data.rstrip()
        at = draw(st.integers(last.rfind(b"\n") + 2, len(last) - 1)) if len(last) - last.rfind(b"\n") > 2 else len(last)
        data = data[:at]
        bad = bad or at < len(last)  # cut inside the last record (its closing brace gone)
        steps.append(f"truncate at {at}")
    elif cut.startswith("gzip"):
        data = gzip.compress(data, mtime=0)
        if cut == "gzip truncated":
            data = data[: draw(st.integers(0, len(data) - 1))]
            bad = True
        steps.append(cut)
    return Case(data=data, steps=tuple(steps), certainly_bad=bad)


@fuzz("corpus")
@given(case=corpus_cases())
def test_fuzz_corpus(workdir, case):
    path = workdir / "corpus.jsonl"
    path.write_bytes(case.data)
    rejected = read(check_corpus, path)
    code, out, err = run("oracle", "--corpus", str(path))
    tally("corpus", case, code)
    check_exit(case, code, out, err, rejected)
    if rejected is None:
        assert code == (0 if check_corpus(path).ok else 1)


# -- suites: load_suite; `verify SUITE --engine local --generated 0` -------------------------------------
@fuzz("suite")
@given(case=toml_cases({"suite": SUITE}))
def test_fuzz_suite(workdir, case):
    path = workdir / "suite.toml"
    path.write_bytes(case.data)
    rejected = read(load_suite, path)
    if rejected is None:  # a readable suite runs its model checks: cheap ones only (bounds as in SUITE)
        code, out, err = run("verify", str(path), "--engine", "local", "--generated", "0", "--out", str(workdir / "out"))
    else:
        code, out, err = run("verify", str(path), "--engine", "local", "--out", str(workdir / "out"))
    tally("suite", case, code)
    # a readable suite can still name an assignor or protocol that does not exist: exit 2 then
    check_exit(case, code, out, err, rejected, ok_words=("verify: ok", "verify: OK", "ok"),
               violated_words=("FAILED", "unexpected", "finding"), accepted_means_verdict=False)


# -- scenarios: load_scenario; `check --scenario FILE --max-states 200` ------------------------------
@fuzz("scenario")
@given(case=toml_cases({"scenario": SCENARIO}))
def test_fuzz_scenario(workdir, case):
    path = workdir / "scenario.toml"
    path.write_bytes(case.data)
    rejected = read(load_scenario, path)
    code, out, err = run("check", "--scenario", str(path), "--max-states", "200")
    tally("scenario", case, code)
    # bounds and names are checked by the command (Bounds, the protocol and assignor specs): 2 then
    check_exit(case, code, out, err, rejected, accepted_means_verdict=False)


# -- the hand-made cases of issue #15, through every command ------------------------------------------
DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "1" + "0" * 5000
HOSTILE_JSON = {
    "deep nesting": lambda doc: _splice(doc, "members", DEEP),
    "5,000-digit integer": lambda doc: _splice(doc, "config", '{"acceptable_recovery_lag": %s}' % HUGE),
    "duplicate key": lambda doc: '{"config": {}, "config": {}, ' + json.dumps(doc)[1:],
    "duplicate num_standby_replicas": lambda doc: _splice(doc, "config", '{"num_standby_replicas": 1, "num_standby_replicas": 2}'),
    "NaN": lambda doc: _splice(doc, "config", '{"acceptable_recovery_lag": NaN}'),
    "Infinity": lambda doc: _splice(doc, "config", '{"max_warmup_replicas": Infinity}'),
    "invalid UTF-8": lambda doc: _splice(doc, "note", '"caf\udce9"'),  # Latin-1 'é': the byte 0xe9
    "lone surrogate": lambda doc: _splice(doc, "note", '"\\ud800"'),
    "empty document": lambda doc: " \n",
    "UTF-16": lambda doc: json.dumps(doc).encode("utf-16"),
}


def _splice(doc: dict, key: str, text: str) -> str:
    """``doc`` as JSON with the value of ``key`` replaced by ``text`` (key first)."""
    rest = {k: v for k, v in doc.items() if k != key}
    return '{"%s": %s, %s' % (key, text, json.dumps(rest)[1:])


def _bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")


@pytest.mark.parametrize("case", sorted(HOSTILE_JSON))
def test_the_issues_cases_are_one_line_and_exit_2_from_every_command(tmp_path, case):
    data = _bytes(HOSTILE_JSON[case](SETTLED))
    answer = _bytes(HOSTILE_JSON[case](ANSWERS["ha-settled"]))
    trace = _bytes(HOSTILE_JSON[case](TRACES["kip429-leader-crash-before-scaling"]))
    record = {"input": SETTLED, "output": ANSWERS["ha-settled"]}  # a record of the corpus contract
    files = {"in.json": data, "out.json": answer, "trace.json": trace, "corpus.jsonl": _bytes(HOSTILE_JSON[case](record)) + b"\n"}
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    (tmp_path / "ok-in.json").write_text(json.dumps(SETTLED))
    (tmp_path / "ok-out.json").write_text(json.dumps(ANSWERS["ha-settled"]))
    commands = [
        ("assign", "--assignor", "ha", "in.json"),
        ("optimal", "in.json"),
        ("oracle", "in.json", "ok-out.json"),
        ("oracle", "ok-in.json", "out.json"),
        ("oracle", "--corpus", "corpus.jsonl"),
        ("show", "trace.json"),
        ("replay", "trace.json"),
    ]
    for command in commands:
        args = [str(tmp_path / a) if a.endswith((".json", ".jsonl")) else a for a in command]
        code, out, err = run(*args)
        assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, (case, command, code, err[:300])
        assert out == "", (case, command, out[:200])


@pytest.mark.parametrize(
    "text, says",
    [
        ("[check]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested deeper than 64 levels"),
        ("[suite]\nname = 1" + "0" * 5000 + "\n", "is out of range"),
        ("[suite]\nname = 'a'\nname = 'b'\n", "Cannot overwrite a value"),
        ("[suite]\nname = nan\n", "nan is not a number"),
        ("[suite]\nname = 'x\xff'\n", "not UTF-8 text: byte 0xff at offset 17"),
    ],
)
def test_hostile_suite_and_scenario_files_are_one_line_and_exit_2(tmp_path, text, says):
    path = tmp_path / "f.toml"
    path.write_bytes(text.encode("utf-8", "surrogateescape") if "\xff" not in text else text.encode("latin-1"))
    for args in (("verify", str(path), "--engine", "local"), ("check", "--scenario", str(path))):
        code, out, err = run(*args)
        assert code == 2 and err.count("\n") == 1 and says in err, (args, err)


def test_a_bom_is_read_everywhere(tmp_path):
    bom = b"\xef\xbb\xbf"
    (tmp_path / "in.json").write_bytes(bom + json.dumps(SETTLED).encode())
    (tmp_path / "out.json").write_bytes(bom + json.dumps(ANSWERS["ha-settled"]).encode())
    (tmp_path / "s.toml").write_bytes(bom + b"instances = 2\ninitial = 1\nevents = 1\n")
    assert run("oracle", str(tmp_path / "in.json"), str(tmp_path / "out.json"))[0] == 0
    assert run("check", "--scenario", str(tmp_path / "s.toml"), "--assignor", "sticky", "--max-states", "50")[0] in (0, 1)


def test_an_exec_assignor_answering_hostile_json_is_a_finding(tmp_path):
    program = ROOT / "tests" / "assignors" / "hostile.py"
    (tmp_path / "in.json").write_text(json.dumps(SETTLED))
    for mode, says in (("deep", "nested deeper"), ("huge-int", "digits"), ("nan", "NaN"), ("dup-key", "duplicate key")):
        code, out, err = run("assign", "--assignor", f"exec:python3 {program} {mode}", str(tmp_path / "in.json"))
        assert code == 1 and "answered malformed output" in err and says in err, (mode, code, err[:300])


def test_doctests_of_the_reading_module():
    assert doctest.testmod(reading).failed == 0


def test_the_fuzzer_makes_what_it_says():
    """The mutation helpers themselves: duplicate keys survive writing, deep nesting is deep."""
    assert json.loads('{"a": 1, "a": 2}') == {"a": 2}  # what JSON alone would do
    from fuzzing import dump_json

    assert dump_json(Pairs([("a", 1), ("a", 2)])) == '{"a": 1, "a": 2}'


def test_the_size_limits_name_the_file_and_read_no_further(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "MAX_JSON_BYTES", 1000)
    monkeypatch.setattr(reading, "MAX_TOML_BYTES", 100)
    big = tmp_path / "big.json"
    big.write_text(json.dumps(SETTLED) + " " * 5000)
    code, _, err = run("oracle", str(big), str(big))
    assert code == 2 and "over the limit of 1,000 bytes for one JSON document" in err
    corpus = tmp_path / "big.jsonl"
    corpus.write_text("\n" + json.dumps({"input": SETTLED, "output": ANSWERS["ha-settled"], "note": "x" * 2000}) + "\n")
    code, _, err = run("oracle", "--corpus", str(corpus))
    assert code == 2 and "line 2: longer than the limit of 1,000 bytes for one record" in err
    scenario = tmp_path / "s.toml"
    scenario.write_text("instances = 2\n" + "# comment\n" * 20)
    code, _, err = run("check", "--scenario", str(scenario))
    assert code == 2 and "over the limit of 100 bytes for a TOML file" in err


@pytest.mark.parametrize("skip", ["json", "toml"])
def test_the_nesting_place_is_named_where_blanking_the_strings_names_it(skip):
    """reading._check_depth finds the place in the text with its strings cut out and names it in
    the file by the lengths cut before it: the offset blanking every string gives, brackets in
    strings, escapes, unterminated strings and comments included."""
    import random

    pattern = reading._JSON_STRING if skip == "json" else reading._TOML_SKIP
    pieces = ['[', ']', '{', '}', '"a[b"', '"x"', '"{{{"', '"\\\\"', '"\\"["', ',', '1', ' ', '"open [', '#c[\n', "'t['", '"""m[\n]"""']
    rng = random.Random(7)
    found = 0
    for _ in range(2000):
        bias = rng.random()
        text = "".join(rng.choice("[{") if rng.random() < bias / 2 else rng.choice(pieces) for _ in range(rng.choice([60, 300])))
        cut = reading._depth_problem(pattern.sub("", text), reading.MAX_DEPTH)
        blanked = reading._depth_problem(reading._blank(text, pattern), reading.MAX_DEPTH)
        assert (None if cut is None else reading._offset_before_cut(text, pattern, cut)) == blanked, text
        found += blanked is not None
    assert found > 100  # deep documents were among them
