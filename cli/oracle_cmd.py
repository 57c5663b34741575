"""``rebalproof oracle INPUT.json OUTPUT.json``: judge one assignment against the rules.

The golden oracle of DESIGN.md: any implementation's answer to one rebalance, checked property
by property (``one-active``, ``no-colocation``, ``warmup-bound``, ``standby-count``,
``caught-up-active``, ``fixpoint``, ``stable``, ``balanced``) under one rule set. A property
the rule set does not promise is shown as ``not promised``, never dropped.

Exit 0 when every promised property holds, 1 when one is violated (each violation named on its
own line, with its tasks and instances), 2 when a file is not valid JSON, not in the
contract's shape, or the answer names ids the input does not (one line, no traceback).

``--json`` prints one object ``{"rules": ..., "verdicts": [...], "ok": ...}`` instead of the table.
(Batch checking of a ``--corpus FILE.jsonl`` will sit next to the single pair: see
:func:`judge`, which is what one line of a corpus would run.)
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from rebalproof.cli.assign_cmd import RULE_SETS
from rebalproof.cli.render import print_verdicts, verdict_details
from rebalproof.model.codec import decode_assignment, decode_input, read_json
from rebalproof.properties.verdict import Status, Verdict

__all__ = ["command", "judge", "summary"]


def judge(input_obj, output_obj, *, rules: str) -> tuple[Verdict, ...]:
    """Verdicts on one (input, answer) pair of JSON objects; :class:`InputError` when either is not valid."""
    from rebalproof.properties.assignment import check_assignment

    view = decode_input(input_obj)
    assignment = decode_assignment(output_obj, view)
    return tuple(check_assignment(view, assignment, rules=rules))


def summary(verdicts) -> str:
    """One line: ok / violated, with how many properties hold, are violated, are not promised."""
    counts = {s: sum(1 for v in verdicts if v.status is s) for s in Status}
    told = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
    violated = [v.property for v in verdicts if v.violated]
    if violated:
        return f"violated: {', '.join(violated)} ({told})"
    return f"ok: every promised property holds ({told})"


@click.command("oracle")
@click.argument("input_path", metavar="INPUT.json", type=click.Path(path_type=Path))
@click.argument("output_path", metavar="OUTPUT.json", type=click.Path(path_type=Path))
@click.option("--rules", type=click.Choice(RULE_SETS), default="ha", show_default=True,
              help="whose promises to judge by: ha (KIP-441), learner (KIP-429), sticky or eager")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object instead of the table")
def command(input_path: Path, output_path: Path, rules: str, as_json: bool) -> int:
    """Check the assignment in OUTPUT.json for the rebalance in INPUT.json."""
    verdicts = judge(read_json(input_path, what="input"), read_json(output_path, what="output"), rules=rules)
    ok = not any(v.violated for v in verdicts)
    if as_json:
        click.echo(json.dumps({"rules": rules, "verdicts": [v.to_json() for v in verdicts], "ok": ok}, indent=2))
    else:
        print_verdicts(verdicts, title=f"{output_path} judged by the {rules} rules")
        for verdict in verdicts:
            if verdict.violated:
                click.echo(f"violated: {verdict.property}: {verdict_details(verdict)}")
        click.echo(summary(verdicts))
    return 0 if ok else 1
