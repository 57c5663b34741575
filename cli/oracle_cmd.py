"""``rebalproof oracle INPUT.json OUTPUT.json``: judge one assignment against the rules.

The golden oracle of docs/DESIGN.md: any implementation's answer to one rebalance, checked property
by property (``one-active``, ``no-colocation``, ``warmup-bound``, ``standby-count``,
``caught-up-active``, ``fixpoint``, ``stable``, ``balanced``) under one rule set. A property
the rule set does not promise is shown as ``not promised``, never dropped.

Exit 0 when every promised property holds, 1 when one is violated (each violation named on its
own line, with its tasks and instances), 2 when INPUT.json is not valid JSON, not in the
contract's shape or has no member (as for ``assign``), or a file cannot be read as JSON at all (one line, no traceback). OUTPUT.json
is the implementation's answer: valid JSON that is no assignment for INPUT.json (another value
than an object, unknown fields, a member or task id the input does not name, an input member
left out) is a *finding* (#10 item 2), exit 1, reported as the violated ``assignor-answers``
with the message corpus mode gives such a record (:func:`rebalproof.oracle.judge`).

``--json`` prints one object instead of the table: ``{"rules", "ok", "violations": [names],
"verdicts": [...]}`` (:meth:`rebalproof.oracle.OracleReport.to_json`).

``--corpus FILE.jsonl`` judges every ``{"input": ..., "output": ...}`` line of a JSON Lines file
(or its ``.jsonl.gz``, or a directory of ``*.json`` records) instead of one pair
(:func:`rebalproof.corpus.check_corpus`): a table of counts per property with the first and
worst violating lines, exit 1 when any line violates a property, 2 when a line is malformed
(named by its number) or the corpus holds no record (unless ``--allow-empty``); extra keys in
a record are ignored and counted in the title; ``--json`` prints
:meth:`rebalproof.corpus.CorpusReport.to_json`.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from rebalproof.cli.assign_cmd import read_assign_input
from rebalproof.cli.render import print_table, print_verdicts, summary_line, verdict_details
from rebalproof.corpus import check_corpus
from rebalproof.errors import InputError
from rebalproof.model.codec import read_json
from rebalproof.oracle import OracleReport
from rebalproof.oracle import judge as judge_answer
from rebalproof.properties import RULE_SETS

__all__ = ["command", "judge", "summary"]


def judge(input_path: Path, output_path: Path, *, rules: str) -> OracleReport:
    """The oracle on one pair of files (:func:`rebalproof.oracle.judge`).

    :class:`InputError` when INPUT.json is not a valid input or a file is not JSON at all (the
    reader's checks, as for a corpus line); an answer that is JSON but no assignment for the
    input is a finding in the report, as in corpus mode.
    """
    view = read_assign_input(input_path)  # at least one member, as `assign` reads it
    return judge_answer(view, read_json(output_path, what="output"), rules=rules)


def summary(report: OracleReport) -> str:
    """One line: ok / violated, with how many properties hold, are violated, are not promised."""
    return summary_line(report.verdicts)


@click.command("oracle")
@click.argument("input_path", metavar="INPUT.json", type=click.Path(path_type=Path), required=False)
@click.argument("output_path", metavar="OUTPUT.json", type=click.Path(path_type=Path), required=False)
@click.option("--rules", type=click.Choice(RULE_SETS), default="ha", show_default=True,
              help="whose promises to judge by: ha (KIP-441), learner (KIP-429), sticky or eager")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object instead of the table")
@click.option("--corpus", "corpus_path", type=click.Path(path_type=Path), default=None, metavar="FILE.jsonl",
              help='judge every {"input": ..., "output": ...} line of a JSON Lines file instead of one pair')
@click.option("--allow-empty", "allow_empty", is_flag=True,
              help="with --corpus: accept a corpus without records (exit 0, nothing judged) instead of exit 2")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              help="with --corpus: judge in this process, or in parallel on Spark")
@click.option("--master", default=None, metavar="URL", help="with --engine spark: the Spark master  [default: local[*]]")
@click.option("--partitions", type=int, default=None, metavar="N", help="with --engine spark: partitions of the corpus")
@click.option("--worst-dir", "worst_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="with --engine spark: save the worst violating records of each property here")
def command(input_path: Path | None, output_path: Path | None, rules: str, as_json: bool, corpus_path: Path | None,
            allow_empty: bool, engine: str, master: str | None, partitions: int | None, worst_dir: Path | None) -> int:
    """Check the assignment in OUTPUT.json for the rebalance in INPUT.json.

    Exit 0 when every promised property holds, 1 on a violation or an answer that is no
    assignment for the input (a finding), 2 on an input that is not valid or a file that is
    not JSON.
    """
    if engine == "local" and (master or partitions or worst_dir):
        raise InputError("--master, --partitions and --worst-dir go with --engine spark (and --corpus FILE.jsonl)")
    if corpus_path is not None:
        if input_path is not None or output_path is not None:
            raise InputError("give either INPUT.json OUTPUT.json or --corpus FILE.jsonl, not both")
        return _corpus(corpus_path, rules=rules, as_json=as_json, engine=engine, master=master,
                       partitions=partitions, worst_dir=worst_dir, allow_empty=allow_empty)
    if engine != "local" or allow_empty:
        raise InputError("--engine spark, its options and --allow-empty go with --corpus FILE.jsonl")
    if input_path is None or output_path is None:
        raise InputError("give INPUT.json and OUTPUT.json (or --corpus FILE.jsonl)")
    report = judge(input_path, output_path, rules=rules)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        print_verdicts(report.verdicts, title=f"{output_path} judged by the {rules} rules")
        for verdict in report.violations:
            click.echo(f"violated: {verdict.property}: {verdict_details(verdict)}")
        click.echo(summary(report))
    return 0 if report.ok else 1


def _corpus(path: Path, *, rules: str, as_json: bool, engine: str = "local", master: str | None = None,
            partitions: int | None = None, worst_dir: Path | None = None, allow_empty: bool = False) -> int:
    """``--corpus``: every line judged, counts per property, first and worst violating lines."""
    if engine == "spark":
        from rebalproof.pipeline.corpus import check_corpus_spark

        report = check_corpus_spark(str(path), rules, master=master, partitions=partitions, worst_dir=worst_dir,
                                    allow_empty=allow_empty)
    else:
        report = check_corpus(path, rules=rules, allow_empty=allow_empty)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        print_table(
            ["property", "holds", "violated", "inconclusive", "not promised", "first", "worst"],
            report.rows(),
            title=report.header(),
        )
        for line in report.lines_text():
            click.echo(line)
    return 0 if report.ok else 1
