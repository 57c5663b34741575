"""The batch oracle at scale: a corpus judged by Spark, summarised by property.

:func:`check_corpus_spark` gives exactly the :class:`~rebalproof.corpus.CorpusReport` of
:func:`rebalproof.corpus.check_corpus` on the same corpus — counts per property, the first and
the worst violating line of each, the ignored keys — judging each record with the same pure
:func:`~rebalproof.corpus.check_entry` in Spark tasks (``partitions`` of them), and merges the
per-partition :class:`~rebalproof.corpus.CorpusTally` values in partition order (the merge keeps
the smaller line number among equals, so the result does not depend on the split).

Reading: a **local** corpus (a path or ``file:`` URI: a JSON Lines file, its ``.jsonl.gz`` or a
directory of ``*.json`` records) is read on the driver by the local engine's own reader
(:func:`rebalproof.corpus_source.entries`), so both engines see the same records, labels and
reading problems (invalid UTF-8, over-long lines, a truncated gzip), and only the judging is
spread. A corpus at a URI only Spark reads (``hdfs://``, ``s3a://``, ...) is split by Hadoop as
JSON Lines (``.gz`` decompressed by its suffix); Hadoop decodes text itself, replacing bytes
that are not UTF-8, so that check is the local reader's only.

A malformed line is an :class:`~rebalproof.errors.InputError` naming the *first* malformed
line, as the local reader reports it. With ``worst_dir``, the record of each violated
property's worst line is saved as ``<property>--line<N>.json`` (``{"input", "output", "name"}``),
ready for ``rebalproof oracle INPUT OUTPUT`` or ``rebalproof assign``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from rebalproof.corpus import CorpusReport, CorpusTally, record_label, check_entry, require_records
from rebalproof.corpus_source import Entry, entries, is_local
from rebalproof.errors import InputError
from rebalproof.model.codec import write_json_atomic
from rebalproof.pipeline.hadoopfs import HadoopDir, qualify
from rebalproof.reading import parse_json

__all__ = ["check_corpus_spark", "worst_lines"]


def _judge_partition(rules: str, rows):
    """Spark task: one tally for the partition, and its first malformed line (if any)."""
    tally = CorpusTally(rules=rules)
    error = None
    for entry in rows:
        try:
            tally = tally.add(check_entry(entry, rules=rules))
        except InputError as exc:
            if error is None or entry.number < error[0]:
                error = (entry.number, str(exc))
    yield tally, error


_BOM = "\ufeff"


def _hadoop_entry(row) -> Entry | None:
    """A line Hadoop read (text, index) as an :class:`Entry`; None for a blank line."""
    text, index = row
    if index == 0:
        text = text.removeprefix(_BOM)
    if not text.strip():
        return None
    return Entry(number=index + 1, where=f"line {index + 1}", data=text.encode("utf-8", "surrogatepass"))


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
    allow_empty: bool = False,
) -> CorpusReport:
    """Judge every record of the corpus at ``path`` on Spark; the report ``check_corpus`` gives.

    Parameters
    ----------
    path : str
        A JSON Lines file, one ``{"input": ..., "output": ...}`` record per line (a local path or
        any URI Spark reads); locally also its ``.jsonl.gz`` or a directory of ``*.json`` records.
    rules : str
        The rule set to judge by.
    master, partitions : keyword-only
        The Spark master (default ``local[*]``) and how many splits to read the file in
        (default: Spark's parallelism, at least 2).
    worst_dir : keyword-only
        Save each violated property's worst record there.
    spark : keyword-only
        A session to use instead of :func:`~rebalproof.pipeline.session.spark_session`.
    allow_empty : keyword-only
        Accept a corpus without records (otherwise an :class:`InputError`, as locally).
    """
    from rebalproof.pipeline.session import spark_session

    CorpusTally(rules=rules)  # an unknown rule set is an InputError before Spark starts
    local = list(entries(path)) if is_local(path) else None  # a missing local corpus: InputError before Spark starts
    spark = spark or spark_session(master=master)
    context = spark.sparkContext
    partitions = partitions or max(2, int(context.defaultParallelism))
    if local is not None:
        records = context.parallelize(local, max(1, min(partitions, len(local))))
    else:
        uri = qualify(str(path))
        if not _exists(spark, uri):
            raise InputError(f"corpus '{path}' does not exist; check the path")
        lines = context.textFile(uri, minPartitions=partitions).zipWithIndex()
        records = lines.map(_hadoop_entry).filter(lambda entry: entry is not None)
    results = records.mapPartitions(partial(_judge_partition, rules)).collect()
    errors = [error for _, error in results if error is not None]
    if errors:
        line_no, message = min(errors)
        raise InputError(f"corpus '{path}' {message}")
    tally = CorpusTally(rules=rules)
    for part, _ in results:
        tally = tally.merge(part)
    report = require_records(tally.report(source=str(path)), allow_empty=allow_empty)
    if worst_dir is not None and report.violations:
        wanted = worst_lines(report)
        numbers = set(wanted.values())
        found = {e.number: e for e in records.filter(lambda entry: entry.number in numbers).collect()}
        for prop, line_no in sorted(wanted.items()):
            entry = found[line_no]
            obj = parse_json(entry.data, where=entry.where, offset=entry.offset)
            record = {"input": obj["input"], "output": obj["output"]}
            label = record_label(obj, entry.label)
            if label is not None:
                record["name"] = label
            try:
                write_json_atomic(Path(worst_dir) / f"{prop}--line{line_no}.json", record)
            except OSError as exc:
                raise InputError(f"cannot save the worst examples in '{worst_dir}': {exc.strerror or exc}") from None
    return report
