"""The tolerant corpus reader (issue #12.2): metadata keys, labels, gzip, directories, BOM, blank lines."""

import gzip
import json

import pytest

from rebalproof.cli.main import main
from rebalproof.corpus import check_corpus
from rebalproof.errors import InputError
from rebalproof.model.codec import read_json

from conftest import ROOT

ROTATING = ROOT / "examples" / "corpus" / "rotating.jsonl"


def _records():
    return [json.loads(line) for line in ROTATING.read_text().splitlines() if line.strip()]


def _with_metadata(records):
    """What production tooling writes: a timestamp, a group id, a scenario name, an id."""
    out = []
    for i, record in enumerate(records):
        meta = {"recorded_at": f"2026-11-24T10:0{i}:00Z", "group": "billing", "scenario": record["name"], "id": 100 + i}
        out.append({**meta, **record})
    return out


def _lines(records):
    return "".join(json.dumps(r) + "\n" for r in records)


def _table(capsys, *args):
    code = main(["oracle", "--corpus", *map(str, args)])
    out = capsys.readouterr().out.splitlines()
    return code, out[0], out[1:]


def test_extra_keys_and_gzip_give_the_plain_files_table(tmp_path, capsys):
    extra = tmp_path / "extra.jsonl"
    extra.write_text(_lines(_with_metadata(_records())))
    zipped = tmp_path / "extra.jsonl.gz"
    zipped.write_bytes(gzip.compress(extra.read_bytes(), mtime=0))
    code, head, plain = _table(capsys, ROTATING)
    assert code == 1 and head == f"{ROTATING}: 6 lines judged by the ha rules"
    for path in (extra, zipped):
        code, head, table = _table(capsys, path)
        assert code == 1 and table == plain
        assert head == f"{path}: 6 lines judged by the ha rules; extra keys ignored: group (6 lines), recorded_at (6 lines), scenario (6 lines)"
    assert main(["oracle", "--corpus", str(zipped), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["ignored_keys"] == {"group": 6, "recorded_at": 6, "scenario": 6}


def test_name_or_id_labels_a_line(tmp_path):
    records = _records()
    for r in records:
        del r["name"]
    records[2]["id"] = 7031
    records[3]["id"] = "rebalance-b"
    path = tmp_path / "ids.jsonl"
    path.write_text(_lines(records))
    fixpoint = check_corpus(path).summary("fixpoint")
    assert (fixpoint.first.line, fixpoint.first.name) == (3, "7031")
    assert (fixpoint.worst.line, fixpoint.worst.name) == (4, "rebalance-b")
    records[2]["name"] = "named"  # name wins over id
    path.write_text(_lines(records))
    assert check_corpus(path).summary("fixpoint").first.name == "named"


def test_a_directory_of_records_is_read_in_natural_order(tmp_path, capsys):
    records = _records()
    folder = tmp_path / "records"
    folder.mkdir()
    for i, record in enumerate(records, start=1):
        del record["name"]
        (folder / f"r{i * 5}.json").write_text(json.dumps(record, indent=2))  # r5, r10, ...: natural order is not text order
    (folder / "README.txt").write_text("not a record")
    (folder / ".r0.json").write_text("{editor swap file")
    report = check_corpus(folder)
    assert report.lines == 6
    fixpoint = report.summary("fixpoint")
    assert (fixpoint.first.line, fixpoint.first.name) == (3, "r15.json")
    assert _counts(report) == _counts(check_corpus(ROTATING))
    (folder / "r100.json").write_text('{"input": {}}')
    with pytest.raises(InputError, match=r"file 'r100.json': missing \"output\""):
        check_corpus(folder)


def test_bom_crlf_and_blank_lines_are_read(tmp_path):
    text = "\n\n".join(json.dumps(r) for r in _records())
    path = tmp_path / "windows.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode() + b"\r\n\r\n")
    report, plain = check_corpus(path), check_corpus(ROTATING)
    assert _counts(report) == _counts(plain)
    fixpoint, plain_fixpoint = report.summary("fixpoint"), plain.summary("fixpoint")
    assert fixpoint.first.line == 2 * plain_fixpoint.first.line - 1  # numbered as lines of the file, blank ones included
    assert fixpoint.first.name == plain_fixpoint.first.name


def _counts(report):
    return [row[:5] for row in report.rows()]


@pytest.mark.parametrize(
    "data, says",
    [
        (b'\n[1]\n', "line 2: must be a JSON object .*, got a list"),
        (b'\n\n"record"\n', "line 3: must be a JSON object"),
        (b'\n{"input": 1, "output": "\xff"}\n', r"line 2: not UTF-8 text: byte 0xff at offset 25 "),  # offset in the file
        (b"\n" + b"[" * 100_000 + b"\n", "line 2: nested deeper than 64 levels"),
        (b"\xef\xbb\xbf\n\xef\xbb\xbf{}\n", "line 2: not valid JSON"),  # a BOM is only read at the start
    ],
)
def test_a_line_that_is_not_a_record_is_an_error_naming_it(tmp_path, data, says):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(data)
    with pytest.raises(InputError, match=says):
        check_corpus(path)


def test_a_corrupt_or_truncated_gzip_is_an_error(tmp_path):
    whole = gzip.compress(ROTATING.read_bytes(), mtime=0)
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InputError, match=r"line \d+: the gzip file cannot be read on from here"):
        check_corpus(path)
    path.write_bytes(whole[:10] + bytes(b ^ 0x55 for b in whole[10:40]) + whole[40:])
    with pytest.raises(InputError, match="line 1: the gzip file cannot be read"):
        check_corpus(path)


def test_the_records_of_the_worst_lines_are_still_plain_records():
    record = read_json(ROOT / "examples" / "inputs" / "settled.json")
    assert record["members"]  # the examples stay readable by the strict reader
