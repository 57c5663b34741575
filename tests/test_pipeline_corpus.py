"""The batch oracle on Spark gives the local batch oracle's report, whatever the split."""

import json

import pytest

from rebalproof.corpus import check_corpus
from rebalproof.errors import InputError
from rebalproof.model.assignors import builtin
from rebalproof.model.codec import encode_assignment, encode_input
from rebalproof.pipeline.corpus import check_corpus_spark
from rebalproof.pipeline.rebalances import generated_inputs
from rebalproof.pipeline.session import spark_session


@pytest.fixture(scope="session")
def spark():
    return spark_session(master="local[2]")


def _rotate(answer: dict) -> dict:
    """Every member takes the next member's actives: breaks fixpoint and stable, keeps one-active."""
    members = sorted(answer["assignment"])
    rotated = {m: dict(answer["assignment"][m]) for m in members}
    for here, there in zip(members, members[1:] + members[:1]):
        rotated[here]["active"] = list(answer["assignment"][there]["active"])
    return {"assignment": rotated, "probing_rebalance": False}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """600 records: sticky's answers, a rotated answer every third line, and blank lines."""
    sticky = builtin("sticky").make()
    lines = []
    for i, (label, view) in enumerate(generated_inputs(600, seed=7)):
        answer = encode_assignment(sticky(view))
        if i % 3 == 0:
            answer = _rotate(answer)
        lines.append(json.dumps({"input": encode_input(view), "output": answer, "name": label}))
        if i % 50 == 0:
            lines.append("")
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("partitions", [1, 5])
def test_spark_report_equals_the_local_report(spark, corpus, partitions):
    local = check_corpus(corpus, rules="sticky")
    assert not local.ok and local.violations  # the corpus has something to find
    assert check_corpus_spark(str(corpus), "sticky", partitions=partitions, spark=spark) == local


def test_worst_examples_are_saved(spark, corpus, tmp_path):
    report = check_corpus_spark(str(corpus), "sticky", worst_dir=tmp_path, spark=spark)
    saved = sorted(p.name for p in tmp_path.iterdir())
    assert saved == sorted(f"{s.property}--line{s.worst.line}.json" for s in report.violations)
    record = json.loads((tmp_path / saved[0]).read_text())
    assert set(record) == {"input", "output", "name"}


def test_first_malformed_line_is_reported(spark, corpus, tmp_path):
    lines = corpus.read_text().splitlines()
    lines[400] = "{not json"
    lines[30] = '{"input": {}, "colour": 1}'
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as local:
        check_corpus(bad, rules="sticky")
    with pytest.raises(InputError) as distributed:
        check_corpus_spark(str(bad), "sticky", partitions=4, spark=spark)
    assert str(distributed.value) == str(local.value)
    assert "line 31:" in str(distributed.value)


def test_missing_file_and_unknown_rules(spark, tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        check_corpus_spark(str(tmp_path / "none.jsonl"), "ha", spark=spark)
    with pytest.raises(InputError, match="rule"):
        check_corpus_spark(str(tmp_path / "none.jsonl"), "fast", spark=spark)
