"""``rebalproof assign --assignor SPEC INPUT.json``: run one assignor on one rebalance.

Prints the assignment JSON on stdout (canonical: ids sorted, every role written out), so that
``rebalproof assign ... > out.json`` gives a file ``rebalproof oracle`` reads. With ``--check``
(the default) the per-assignment properties are judged too, by the assignor's own rule set (a
built-in's) or by ``--rules`` (``ha`` for an external assignor unless told), and their table
goes to stderr; exit 1 on a violation.

An assignor that crashes, hangs past ``--timeout``, or answers something that is not an
Assignment for the input is a *finding* (docs/DESIGN.md "External assignors and the exec protocol"): one line on stderr
saying what happened, then the input that caused it; ``--finding-dir DIR`` also saves it as
``DIR/finding-<kind>-<digest>.json``; exit 1. Never a traceback, never a hang.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import click

from rebalproof.model.assignors.spec import resolve
from rebalproof.model.codec import decode_input, dumps_canonical, encode_assignment, read_json, write_json_atomic
from rebalproof.properties import RULE_SETS, check_assignment
from rebalproof.cli.render import format_assignment, print_finding, print_verdicts, summary_line, verdict_details
from rebalproof.errors import AssignorError, InputError

__all__ = ["command", "DEFAULT_EXTERNAL_RULES", "save_finding", "finding_json", "check_timeout"]

#: Rules for an external assignor when none is given: Kafka's own since KIP-441.
DEFAULT_EXTERNAL_RULES = "ha"


def check_timeout(timeout: float) -> float:
    if not timeout > 0:
        raise InputError(f"--timeout must be more than 0 seconds, got {timeout:g}")
    return timeout


def finding_json(error: AssignorError) -> dict:
    """A finding as a JSON object: what happened, to which assignor, on which input."""
    return {"finding": error.kind, "assignor": error.assignor, "message": str(error), "input": error.input_json}


def save_finding(error: AssignorError, directory: str | Path) -> Path:
    """Write the finding atomically to ``directory/finding-<kind>-<digest of the input>.json``."""
    digest = hashlib.sha256(dumps_canonical([error.assignor, error.input_json]).encode()).hexdigest()[:12]
    path = Path(directory) / f"finding-{error.kind}-{digest}.json"
    try:
        write_json_atomic(path, finding_json(error))
    except OSError as exc:
        raise InputError(f"cannot write the finding to '{path}': {exc.strerror or exc}; check --finding-dir") from None
    return path


def read_assign_input(input_path: Path):
    """The leader's view `assign` runs on: a readable input with at least one member.

    An input with no members is the user's mistake, not the assignor's (no answer can keep
    one-active), so it is an input error (exit 2) rather than a finding.
    """
    view = decode_input(read_json(input_path, what="input"))
    if not view.members:
        raise InputError(f"input '{input_path}' has no members: a rebalance assigns tasks to the group's members; "
                         "list at least one in \"members\"")
    return view


@click.command("assign")
@click.option("--assignor", "spec", required=True, metavar="SPEC",
              help="built-in name (ha, learner:version=1, ...), py:package.module:function or exec:COMMAND")
@click.argument("input_path", metavar="INPUT.json", type=click.Path(path_type=Path))
@click.option("--timeout", type=float, default=10.0, show_default=True, metavar="S",
              help="seconds an exec: assignor may take to answer")
@click.option("--check/--no-check", default=True, show_default=True,
              help="also judge the per-assignment properties (table on stderr, exit 1 on a violation)")
@click.option("--rules", type=click.Choice(RULE_SETS), default=None,
              help="rule set to judge by [default: the built-in's own; ha for py: and exec:]")
@click.option("--finding-dir", type=click.Path(file_okay=False, path_type=Path), default=None, metavar="DIR",
              help="save a finding about the assignor (with its input) in DIR")
def command(spec: str, input_path: Path, timeout: float, check: bool, rules: str | None, finding_dir: Path | None) -> int:
    """Run one assignor on INPUT.json and print its assignment.

    Exit 0 when the answer keeps every promised property (or --no-check), 1 on a violation or
    a finding (the assignor crashed, timed out or answered no valid assignment), 2 on bad usage.
    """
    view = read_assign_input(input_path)
    with resolve(spec, timeout=check_timeout(timeout)) as assignor:
        try:
            assignment = assignor(view)
        except AssignorError as error:
            saved = save_finding(error, finding_dir) if finding_dir is not None else None
            print_finding(error, saved=str(saved) if saved else None)
            return 1
        rules = rules or assignor.rules or DEFAULT_EXTERNAL_RULES
    click.echo(format_assignment(encode_assignment(assignment)))
    if not check:
        return 0
    verdicts = check_assignment(view, assignment, rules=rules)
    print_verdicts(verdicts, title=f"{spec} judged by the {rules} rules", stderr=True)
    violated = [v for v in verdicts if v.violated]
    for verdict in violated:
        click.echo(f"violated: {verdict.property}: {verdict_details(verdict)}", err=True)
    click.echo(summary_line(verdicts), err=True)
    return 1 if violated else 0
