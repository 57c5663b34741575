"""The batch oracle at scale: a JSON Lines corpus judged by Spark, summarised by property.

:func:`check_corpus_spark` gives exactly the :class:`~rebalproof.corpus.CorpusReport` of
:func:`rebalproof.corpus.check_corpus` on the same file — counts per property, the first and
the worst violating line of each — but reads the file with Spark (a local path, ``hdfs://``,
``s3a://``, ... split into ``partitions``), judges each line with the same pure
:func:`~rebalproof.corpus.check_line` in the tasks, and merges the per-partition
:class:`~rebalproof.corpus.CorpusTally` values in partition order (the merge keeps the smaller
line number among equals, so the result does not depend on the split).

A malformed line is an :class:`~rebalproof.errors.InputError` naming the *first* malformed
line, as the local reader reports it. With ``worst_dir``, the record of each violated
property's worst line is saved as ``<property>--line<N>.json`` (``{"input", "output", "name"}``),
ready for ``rebalproof oracle INPUT OUTPUT`` or ``rebalproof assign``.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

from rebalproof.corpus import CorpusReport, CorpusTally, check_line
from rebalproof.errors import InputError
from rebalproof.model.codec import write_json_atomic
from rebalproof.pipeline.hadoopfs import HadoopDir, qualify

__all__ = ["check_corpus_spark", "worst_lines"]


def _judge_partition(rules: str, rows):
    """Spark task: one tally for the partition, and its first malformed line (if any)."""
    tally = CorpusTally(rules=rules)
    error = None
    for text, index in rows:
        line_no = index + 1
        if not text.strip():
            continue
        try:
            tally = tally.add(check_line(text, rules=rules, line_no=line_no))
        except InputError as exc:
            if error is None or line_no < error[0]:
                error = (line_no, str(exc))
    yield tally, error


def worst_lines(report: CorpusReport) -> dict[str, int]:
    """The worst violating line of each violated property."""
    return {s.property: s.worst.line for s in report.violations}


def _exists(spark, uri: str) -> bool:
    parent, _, name = uri.rstrip("/").rpartition("/")
    return HadoopDir(spark, parent).exists(name)


def check_corpus_spark(
    path: str,
    rules: str = "ha",
    *,
    master: str | None = None,
    partitions: int | None = None,
    worst_dir: str | Path | None = None,
    spark=None,
) -> CorpusReport:
    """Judge every record of the corpus at ``path`` on Spark; the report ``check_corpus`` gives.

    Parameters
    ----------
    path : str
        A JSON Lines file, one ``{"input": ..., "output": ...}`` record per line; a local path or
        any URI Spark reads.
    rules : str
        The rule set to judge by.
    master, partitions : keyword-only
        The Spark master (default ``local[*]``) and how many splits to read the file in
        (default: Spark's parallelism, at least 2).
    worst_dir : keyword-only
        Save each violated property's worst record there.
    spark : keyword-only
        A session to use instead of :func:`~rebalproof.pipeline.session.spark_session`.
    """
    from rebalproof.pipeline.session import spark_session

    CorpusTally(rules=rules)  # an unknown rule set is an InputError before Spark starts
    spark = spark or spark_session(master=master)
    context = spark.sparkContext
    uri = qualify(str(path))
    if not _exists(spark, uri):
        raise InputError(f"corpus '{path}' does not exist; check the path")
    partitions = partitions or max(2, int(context.defaultParallelism))
    lines = context.textFile(uri, minPartitions=partitions).zipWithIndex()
    results = lines.mapPartitions(partial(_judge_partition, rules)).collect()
    errors = [error for _, error in results if error is not None]
    if errors:
        line_no, message = min(errors)
        raise InputError(f"corpus '{path}' {message}")
    tally = CorpusTally(rules=rules)
    for part, _ in results:
        tally = tally.merge(part)
    report = tally.report(source=str(path))
    if worst_dir is not None and report.violations:
        wanted = worst_lines(report)
        numbers = set(wanted.values())
        texts = dict(lines.filter(lambda row: row[1] + 1 in numbers).map(lambda row: (row[1] + 1, row[0])).collect())
        for prop, line_no in sorted(wanted.items()):
            record = json.loads(texts[line_no])
            try:
                write_json_atomic(Path(worst_dir) / f"{prop}--line{line_no}.json", record)
            except OSError as exc:
                raise InputError(f"cannot save the worst examples in '{worst_dir}': {exc.strerror or exc}") from None
    return report
