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
    assert sorted(p.name for p in worst.iterdir()) == ["fixpoint--line4.json", "stable--line3.json"]


def test_spark_options_need_the_corpus(capsys):
    assert main(["oracle", "a.json", "b.json", "--engine", "spark"]) == 2
    assert "go with --corpus" in capsys.readouterr().err
