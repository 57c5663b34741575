"""``rebalproof oracle --corpus FILE --engine spark`` gives the local engine's report, worst examples saved."""

import json

from rebalproof.cli.main import main

CORPUS = "examples/corpus/rotating.jsonl"


def test_spark_corpus_report_equals_the_local_one(tmp_path, capsys, monkeypatch):
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)
    assert main(["oracle", "--corpus", CORPUS, "--json"]) == 1
    local = json.loads(capsys.readouterr().out)
    worst = tmp_path / "worst"
    assert main(["oracle", "--corpus", CORPUS, "--json", "--engine", "spark", "--master", "local[2]", "--worst-dir", str(worst)]) == 1
    spark = json.loads(capsys.readouterr().out)
    assert spark == local
    saved = sorted(p.name for p in worst.iterdir())
    assert saved == sorted(f"{s['property']}--line{s['worst']['line']}.json" for s in local["properties"] if s["violated"])
    assert saved and "fixpoint--line4.json" in saved


def test_spark_options_need_the_corpus(capsys):
    assert main(["oracle", "a.json", "b.json", "--engine", "spark"]) == 2
    assert "go with --corpus" in capsys.readouterr().err


def test_spark_reads_the_corpus_as_the_local_reader_does(tmp_path, capsys):
    """Extra keys, a gzip, a directory of records, a BOM and blank lines: the same report on both engines."""
    import gzip

    from tests.conftest import ROOT

    records = [json.loads(line) for line in (ROOT / CORPUS).read_text().splitlines() if line.strip()]
    extra = [{"recorded_at": f"t{i}", "group": "g", **r} for i, r in enumerate(records)]
    plain = tmp_path / "extra.jsonl"
    plain.write_bytes(b"\xef\xbb\xbf" + "\n\n".join(json.dumps(r) for r in extra).encode() + b"\n")
    zipped = tmp_path / "extra.jsonl.gz"
    zipped.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    folder = tmp_path / "records"
    folder.mkdir()
    for i, r in enumerate(extra, start=1):
        (folder / f"r{i * 5}.json").write_text(json.dumps(r, indent=1))
    for path in (plain, zipped, folder):
        assert main(["oracle", "--corpus", str(path), "--json"]) == 1
        local = json.loads(capsys.readouterr().out)
        assert local["ignored_keys"] == {"group": 6, "recorded_at": 6}
        assert main(["oracle", "--corpus", str(path), "--json", "--engine", "spark", "--master", "local[2]"]) == 1
        assert json.loads(capsys.readouterr().out) == local


def test_spark_rejects_what_the_local_reader_rejects(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n \n")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'\n\n{"input": {}, "output": "\xff"}\n' + b"[" * 10_000 + b"\n")
    for path, says in ((empty, "holds no records"), (bad, "line 3: not UTF-8 text: byte 0xff at offset 27")):
        for engine in ("local", "spark"):
            assert main(["oracle", "--corpus", str(path), "--engine", engine]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and says in err
    assert main(["oracle", "--corpus", str(empty), "--engine", "spark", "--allow-empty"]) == 0
