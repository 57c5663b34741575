"""``rebalproof oracle INPUT.json OUTPUT.json``: judge one assignment against the rules.

The golden oracle of DESIGN.md: any implementation's answer to one rebalance, checked property
by property (``one-active``, ``no-colocation``, ``warmup-bound``, ``standby-count``,
``caught-up-active``, ``fixpoint``, ``stable``, ``balanced``) under one rule set. A property
the rule set does not promise is shown as ``not promised``, never dropped.

Exit 0 when every promised property holds, 1 when one is violated (each violation named on its
own line, with its tasks and instances), 2 when a file is not valid JSON, not in the
contract's shape, or the answer names ids the input does not (one line, no traceback).

``--json`` prints one object instead of the table: ``{"rules", "ok", "violations": [names],
"verdicts": [...]}`` (:meth:`rebalproof.oracle.OracleReport.to_json`). Batch checking of a
``--corpus FILE.jsonl`` will sit next to the single pair (see :func:`judge`).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from rebalproof.cli.render import print_verdicts, verdict_details
from rebalproof.model.codec import read_json
from rebalproof.oracle import OracleReport, check
from rebalproof.properties import RULE_SETS, Status

__all__ = ["command", "judge", "summary"]


def judge(input_path: Path, output_path: Path, *, rules: str) -> OracleReport:
    """The oracle on one pair of files; :class:`InputError` when either is not valid.

    One line of a future ``--corpus`` would run :func:`rebalproof.oracle.check` the same way.
    """
    return check(read_json(input_path, what="input"), read_json(output_path, what="output"), rules=rules)


def summary(report: OracleReport) -> str:
    """One line: ok / violated, with how many properties hold, are violated, are not promised."""
    counts = {s: sum(1 for v in report.verdicts if v.status is s) for s in Status}
    told = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
    if report.violations:
        return f"violated: {', '.join(v.property for v in report.violations)} ({told})"
    return f"ok: every promised property holds ({told})"


@click.command("oracle")
@click.argument("input_path", metavar="INPUT.json", type=click.Path(path_type=Path))
@click.argument("output_path", metavar="OUTPUT.json", type=click.Path(path_type=Path))
@click.option("--rules", type=click.Choice(RULE_SETS), default="ha", show_default=True,
              help="whose promises to judge by: ha (KIP-441), learner (KIP-429), sticky or eager")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object instead of the table")
def command(input_path: Path, output_path: Path, rules: str, as_json: bool) -> int:
    """Check the assignment in OUTPUT.json for the rebalance in INPUT.json.

    Exit 0 when every promised property holds, 1 on a violation, 2 on a file that is not
    valid JSON, not in the contract's shape, or names ids the input does not.
    """
    report = judge(input_path, output_path, rules=rules)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        print_verdicts(report.verdicts, title=f"{output_path} judged by the {rules} rules")
        for verdict in report.violations:
            click.echo(f"violated: {verdict.property}: {verdict_details(verdict)}")
        click.echo(summary(report))
    return 0 if report.ok else 1
