"""``rebalproof replay TRACE``: re-run a trace against its protocol and assignor, then show it.

Replay (:mod:`rebalproof.traces.replay`) rebuilds the group model from the trace (protocol,
assignor, bounds, tasks, instance pool) and checks each step: **exactly** (the model with the
trace's assignor reaches the recorded state, view and answer) or, for a rebalance where the
assignor answers differently, **by the rules** (:func:`rebalproof.solver.oracle.conforms`: the
trace's answer keeps every hard rule of the assignor's rule set, and with ``--balance
achievable`` is balanced when it can be: the implementation's free choice), continuing from the
trace's answer.
The first step where they disagree is named with its action and what differs.

The report says which steps were checked exactly and which by the rules, then the trace's
claim (a counterexample's property re-checked at its step, a lasso's cycle closing), then the
trace in the seeds' text form (``--quiet`` leaves that out; ``--form`` as for ``show``).

``--assignor SPEC`` replays the trace against another assignor (yours: ``py:`` / ``exec:``),
judging differing answers by ``--rules``. ``--json`` prints the report as one object.

Exit 0 when the trace conforms, 1 at the first disagreement (or a claim replay refutes), 2 when
the file is not a trace or an option is wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from rebalproof.properties import RULE_SETS
from rebalproof.traces.replay import ReplayReport, load_trace, replay, resolve_trace_assignor

__all__ = ["command", "report_lines", "report_json", "ranges"]


def ranges(indices) -> str:
    """``[1, 3, 4, 5, 7]`` -> ``"1, 3-5, 7"``."""
    out, run = [], []
    for i in indices:
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [i]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ", ".join(out)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def report_lines(report: ReplayReport, *, name: str, verbose: bool = False) -> list[str]:
    """The replay report as plain lines (deterministic)."""
    h = report.trace.header
    what = f"scenario \"{h.get('title', '')}\"" if report.trace.kind == "scenario" else f"counterexample to {h.get('property')}"
    against = h["assignor"] if report.assignor is None else f"{report.assignor} (the trace's: {h['assignor']})"
    out = [f"replay {name} ({what}): protocol {h['protocol']}, assignor {against}"]
    start = report.steps[0]
    out.append(f"  step 0: {start.detail}")
    for s in report.steps[1:]:
        if s.how == "rules" or (verbose and s.how == "exact"):
            label = "by the rules" if s.how == "rules" else "exact"
            out.append(f"  step {s.index} ({s.label}): {label}" + (f": {s.detail}" if s.detail else ""))
    total = len(report.trace.steps) - 1
    exact, rules = report.indices("exact"), report.indices("rules")
    fail = report.failure
    if fail is not None:
        out.append(f"DIFFERS at step {fail.index} ({fail.label}): {fail.detail}")
        out += [f"  {d}" for d in fail.differences]
        done = fail.index - 1
        out.append(
            f"replay stopped at step {fail.index} of {total}; steps before it conform "
            f"({len(exact)} exact{', ' + str(len(rules)) + ' by the ' + str(report.rules) + ' rules' if rules else ''})"
            if done >= 1 else f"replay stopped at step {fail.index} of {total}"
        )
        return out
    summary = [f"{_plural(len(exact), 'step')} checked exactly ({ranges(exact)})" if exact else "no step checked exactly"]
    if rules:
        summary.append(f"{_plural(len(rules), 'rebalance')} checked by the {report.rules} rules ({ranges(rules)}): the trace's answer is the implementation's free choice")
    else:
        summary.append("none needed the rules")
    if report.claim is not None:
        out.append(f"claim {report.claim.status}: {report.claim.message}")
    verdict = "conforms" if report.ok else "DIFFERS"
    out.append(f"{verdict}: {_plural(total, 'step')}; " + "; ".join(summary))
    return out


def report_json(report: ReplayReport) -> dict:
    """The report as one JSON object."""
    return {
        "ok": report.ok,
        "assignor": report.assignor or report.trace.header["assignor"],
        "trace_assignor": report.trace.header["assignor"],
        "rules": report.rules,
        "steps": [
            {"index": s.index, "action": None if s.action is None else s.action.to_json(), "how": s.how,
             "detail": s.detail, "differences": list(s.differences)}
            for s in report.steps
        ],
        "exact": list(report.indices("exact")),
        "by_rules": list(report.indices("rules")),
        "failure": None if report.failure is None else report.failure.index,
        "claim": None if report.claim is None else {"status": report.claim.status, "message": report.claim.message},
    }


@click.command("replay")
@click.argument("trace_path", metavar="TRACE", type=click.Path(path_type=Path))
@click.option("--assignor", "assignor_spec", default=None, metavar="SPEC",
              help="replay against this assignor instead of the trace's (built-in, py:module:function or exec:COMMAND)")
@click.option("--rules", type=click.Choice(RULE_SETS), default=None,
              help="rule set that judges an answer differing from the assignor's (default: the assignor's own)")
@click.option("--balance", type=click.Choice(("hard", "achievable")), default="hard", show_default=True,
              help="hard: a differing answer need only keep the hard rules; achievable: it must also be balanced when a balanced answer exists")
@click.option("--form", type=click.Choice(("auto", "text", "table")), default="auto", show_default=True,
              help="how to show the trace after the report (as for rebalproof show)")
@click.option("--quiet", is_flag=True, help="print the report only, not the trace")
@click.option("--verbose", is_flag=True, help="list every step, not only those checked by the rules")
@click.option("--json", "as_json", is_flag=True, help="print the report as one JSON object")
def command(trace_path: Path, assignor_spec: str | None, rules: str | None, balance: str, form: str, quiet: bool, verbose: bool,
            as_json: bool) -> int:
    """Re-run TRACE against its protocol and assignor and show it in the seeds' text form.

    Exit 0 when every step conforms (exactly, or by the rules where the assignor may choose),
    1 at the first step that differs, 2 when TRACE is not a trace or an option is wrong.
    """
    trace = load_trace(trace_path)
    close = None
    assignor = None
    if assignor_spec is not None:
        assignor, found_rules, close = resolve_trace_assignor(assignor_spec)
        rules = rules or found_rules
    try:
        report = replay(trace, assignor=assignor, rules=rules, balance=balance, assignor_name=assignor_spec)
    finally:
        if close is not None:
            close()
    if as_json:
        click.echo(json.dumps(report_json(report), indent=2))
        return 0 if report.ok else 1
    for line in report_lines(report, name=str(trace_path), verbose=verbose):
        click.echo(line)
    if not quiet:
        from rebalproof.cli.show_cmd import render

        click.echo("")
        click.echo(render(trace, form=form), nl=False)
    return 0 if report.ok else 1
