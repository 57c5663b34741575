"""The batch oracle: per-line results, the tally, malformed lines, and ``rebalproof oracle --corpus``."""

import doctest
import json
import pickle

import pytest

from rebalproof import corpus
from rebalproof.cli.main import main
from rebalproof.corpus import CorpusTally, check_corpus, check_line
from rebalproof.errors import InputError
from rebalproof.model.codec import read_json
from rebalproof.oracle import check

from conftest import ROOT

SETTLED = read_json(ROOT / "examples" / "inputs" / "settled.json")
KEEP = {"assignment": {m["id"]: {"active": m["active"], "standby": m["standby"]} for m in SETTLED["members"]}}
HOARD = {"assignment": {"I1": {"active": [t["id"] for t in SETTLED["tasks"]]}, "I2": {}, "I3": {}}}
TWICE = {"assignment": {"I1": {"active": ["0_0", "1_0"], "standby": ["0_1"]}, "I2": {"active": ["0_0", "0_1", "1_1"]},
                        "I3": {"active": ["0_2", "1_2"], "standby": ["0_0"]}}}


def record(output, **extra):
    return json.dumps({"input": SETTLED, "output": output, **extra})


def write(tmp_path, *lines):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_doctests():
    assert doctest.testmod(corpus).failed == 0


def test_a_line_is_judged_exactly_as_the_oracle_judges_the_pair():
    result = check_line(record(HOARD), line_no=4)
    report = check(SETTLED, HOARD)
    assert result.statuses == tuple((v.property, v.status.value) for v in report.verdicts)
    assert result.violated == tuple(v.property for v in report.violations)
    assert {p for p, _ in result.examples} == set(result.violated)
    assert all(e.line == 4 for _, e in result.examples)
    assert pickle.loads(pickle.dumps(result)) == result  # shippable to Spark workers


def test_the_report_counts_per_property_with_first_and_worst(tmp_path):
    path = write(tmp_path, record(KEEP), record(TWICE, name="twice"), "", record(HOARD, name="hoard"), record(KEEP))
    report = check_corpus(path)
    assert (report.lines, report.ok_lines, report.ok) == (4, 2, False)
    one_active = report.summary("one-active")
    assert (one_active.holds, one_active.violated) == (3, 1) and one_active.first.line == 2
    fixpoint = report.summary("fixpoint")
    assert fixpoint.violated == 2 and fixpoint.first.line == 2 and fixpoint.first.name == "twice"
    assert fixpoint.worst.line == 4  # hoarding changes more tasks and instances
    assert fixpoint.worst.weight > fixpoint.first.weight
    assert [s.property for s in report.violations] == [p for p in ("one-active", "no-colocation", "warmup-bound", "standby-count",
                                                                   "caught-up-active", "fixpoint", "stable", "balanced")
                                                       if report.summary(p).violated]
    for s in report.properties:
        assert s.holds + s.violated + s.inconclusive + s.not_promised == report.lines
    assert json.loads(json.dumps(report.to_json()))["violations"] == [s.property for s in report.violations]
    assert report.lines_text()[-1] == f"violated: {', '.join(s.property for s in report.violations)} (2 of 4 lines violate a property)"


def test_tallies_merge_in_any_order_to_the_same_report(tmp_path):
    lines = [record(KEEP), record(TWICE), record(HOARD), record(TWICE), record(KEEP)]
    results = [check_line(text, line_no=i) for i, text in enumerate(lines, start=1)]
    whole = CorpusTally(rules="ha")
    for r in results:
        whole = whole.add(r)
    left, right = CorpusTally(rules="ha"), CorpusTally(rules="ha")
    for r in results[3:]:
        right = right.add(r)
    for r in results[:3]:
        left = left.add(r)
    assert right.merge(left) == whole == left.merge(right)
    with pytest.raises(InputError, match="cannot merge"):
        whole.merge(CorpusTally(rules="sticky"))


@pytest.mark.parametrize("lines", [(), ("",), ("", "  ", "\t")])
def test_an_empty_corpus_is_an_error_unless_allowed(tmp_path, lines):
    path = write(tmp_path, *lines)
    with pytest.raises(InputError, match="holds no records .*--allow-empty"):
        check_corpus(path)
    report = check_corpus(path, allow_empty=True)
    assert report.ok and report.lines == 0 and "nothing was judged" in report.lines_text()[-1]


@pytest.mark.parametrize(
    "line, says",
    [
        ("{oops", "line 2: not valid JSON"),
        ("[1, 2]", "line 2: must be a JSON object"),
        (json.dumps({"input": SETTLED}), 'line 2: missing "output"'),
        (json.dumps({"input": SETTLED, "output": KEEP, "name": 3}), 'line 2: "name" must be a string'),
        (json.dumps({"input": SETTLED, "output": KEEP, "id": [1]}), 'line 2: "id" must be a string or a whole number'),
        ('{"input": {}, "input": {}, "output": {}}', "line 2: duplicate key 'input' at the top level"),
    ],
)
def test_a_malformed_line_is_an_input_error_naming_the_line(tmp_path, line, says):
    path = write(tmp_path, record(KEEP), line)
    with pytest.raises(InputError, match=f"corpus '.*' {says}"):
        check_corpus(path)


def test_missing_file_and_bad_rules(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        check_corpus(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="unknown rule set"):
        check_corpus(write(tmp_path, record(KEEP)), rules="nope")


def test_cli_corpus(capsys, tmp_path):
    path = write(tmp_path, record(KEEP), record(HOARD, name="hoard"))
    assert main(["oracle", "--corpus", str(path)]) == 1
    out = capsys.readouterr().out
    assert "violated: fixpoint on 1 of 2 lines; first line 2 (hoard):" in out
    assert main(["oracle", "--corpus", str(path), "--json", "--rules", "learner"]) == 1
    obj = json.loads(capsys.readouterr().out)
    assert obj["rules"] == "learner" and obj["lines"] == 2 and "fixpoint" not in obj["violations"]
    assert main(["oracle", "--corpus", str(write(tmp_path, record(KEEP)))]) == 0
    assert "ok: every promised property holds on all 1 lines" in capsys.readouterr().out


def test_cli_corpus_usage_errors(capsys, tmp_path):
    path = write(tmp_path, record(KEEP), "{")
    assert main(["oracle", "--corpus", str(path)]) == 2
    assert "line 2: not valid JSON" in capsys.readouterr().err
    assert main(["oracle", "--corpus", str(path), "a.json", "b.json"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["oracle", "a.json"]) == 2
    assert "give INPUT.json and OUTPUT.json" in capsys.readouterr().err


def test_cli_empty_corpus_is_exit_2_unless_allowed(capsys, tmp_path):
    path = write(tmp_path, "", "")
    assert main(["oracle", "--corpus", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds no records" in err and "--allow-empty" in err
    assert main(["oracle", "--corpus", str(path), "--allow-empty"]) == 0
    assert "holds no records (nothing was judged)" in capsys.readouterr().out
    assert main(["oracle", "a.json", "b.json", "--allow-empty"]) == 2
    assert "go with --corpus" in capsys.readouterr().err


@pytest.mark.parametrize(
    "output, says",
    [
        ({"assignment": {"I9": {}}}, "unknown member 'I9'"),
        ({"assignment": {m: r for m, r in list(KEEP["assignment"].items())[:-1]}}, "is missing; every input member appears"),
        ({"assignment": {**KEEP["assignment"], "I1": {"active": ["9_9"]}}}, "unknown task '9_9'"),
        ({"assignment": {m: {"actives": r["active"]} for m, r in KEEP["assignment"].items()}}, "unknown field 'actives'"),
        (5, "must be a JSON object"),
    ],
)
def test_a_malformed_answer_is_a_finding_not_a_usage_error(tmp_path, capsys, output, says):
    """The answer is the recorded assignor's: no assignment for its input is a finding (exit 1)."""
    path = write(tmp_path, record(KEEP), record(output))
    report = check_corpus(path)
    assert not report.ok and report.lines == 2 and report.ok_lines == 1 and report.malformed == 1
    assert report.first_malformed.line == 2 and says in report.first_malformed.message
    assert report.to_json()["malformed_answers"] == 1
    assert main(["oracle", "--corpus", str(path)]) == 1
    out = capsys.readouterr().out
    assert "finding: 1 of 2 lines answer no assignment for their input; first line 2" in out and says in out


def test_the_malformed_count_merges_like_the_rest():
    lines = [record(KEEP), record({"assignment": {"I9": {}}}), record({"assignment": {"I8": {}}})]
    one = CorpusTally(rules="ha")
    for i, line in enumerate(lines, start=1):
        one = one.add(check_line(line, line_no=i))
    parts = [CorpusTally(rules="ha").add(check_line(line, line_no=i)) for i, line in enumerate(lines, start=1)]
    merged = parts[2].merge(parts[0]).merge(parts[1])
    assert (merged.malformed, merged.first_malformed.line) == (one.malformed, one.first_malformed.line) == (2, 2)


def test_the_last_line_says_when_a_property_is_undecided(capsys, tmp_path):
    """"every promised property holds" was printed with inconclusive verdicts: here ``balanced``
    cannot be decided (not balanced, no probing rebalance, and max_warmup_replicas 0: no warmup
    can move state toward balance), so the line says what is undecided instead."""
    view = {"config": {"num_standby_replicas": 0, "max_warmup_replicas": 0},
            "tasks": [{"id": "0_0"}, {"id": "0_1"}],
            "members": [{"id": "I1", "active": ["0_0", "0_1"], "lags": {"0_0": 0, "0_1": 0}}, {"id": "I2"}]}
    piled = {"assignment": {"I1": {"active": ["0_0", "0_1"]}, "I2": {}}}
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"input": view, "output": piled}) + "\n", encoding="utf-8")
    assert main(["oracle", "--corpus", str(path)]) == 0
    out = capsys.readouterr().out
    assert "every promised property holds" not in out
    assert out.rstrip().splitlines()[-1] == "ok: nothing violated on 1 line, but undecided on some: balanced", out
