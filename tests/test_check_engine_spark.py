"""``rebalproof check --engine spark``: the same counts and verdicts as the local engine; checkpoints resume."""

import json

from rebalproof.cli.main import main

BOUNDS = ["--protocol", "learner", "--assignor", "learner-naive", "--instances", "3", "--initial", "2",
          "--subtopologies", "1", "--partitions", "2", "--standbys", "0", "--events", "1"]


def _report(capsys, *extra):
    code = main(["check", *BOUNDS, "--json", *extra])
    report = json.loads(capsys.readouterr().out)
    verdicts = {p["property"]: p["status"] for p in report["properties"]}
    stats = report["statistics"]
    return code, verdicts, (stats["distinct_states"], stats["edges"], stats["depth"]), report


def test_spark_engine_equals_local_on_a_failing_model(capsys):
    local = _report(capsys)
    spark = _report(capsys, "--engine", "spark", "--master", "local[2]", "--spark-partitions", "3")
    assert local[0] == spark[0] == 1
    assert local[1] == spark[1] and local[1]["no-shuffle-cycle"] == "violated"
    assert local[2] == spark[2]


def test_checkpointed_run_resumes_to_the_same_result(capsys, tmp_path):
    ck = tmp_path / "ck"
    # local[2] as the other test here, so the process's session is reused (another master restarts
    # it); every 5 levels still saves several checkpoints (every 2 wrote twice as many Parquet tables)
    first = _report(capsys, "--engine", "spark", "--master", "local[2]", "--checkpoint-dir", str(ck), "--checkpoint-every", "5")
    assert len([p for p in ck.iterdir() if p.name.startswith("states-")]) >= 2
    resumed = _report(capsys, "--engine", "spark", "--master", "local[2]", "--resume", str(ck))
    assert first[:3] == resumed[:3]


def test_spark_options_need_the_spark_engine(capsys):
    assert main(["check", *BOUNDS, "--master", "local[1]"]) == 2
    assert "go with --engine spark" in capsys.readouterr().err
    assert main(["check", *BOUNDS, "--engine", "spark", "--resume", "/nonexistent/ck"]) == 2
    assert "not a checkpoint directory" in capsys.readouterr().err
