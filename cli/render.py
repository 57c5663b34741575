"""Console rendering shared by the commands: verdict tables, matrices, findings.

Semantics never live here (STYLE.md 1): these functions take verdicts and counts and only lay
them out. On a terminal the tables are drawn with :mod:`rich` (colours by status); anywhere
else (a pipe, a file, CI logs, tests) they are plain aligned text with no escape codes and no
wrapping, so the output is the same from run to run and greps cleanly.

Examples
--------
>>> import io
>>> out = io.StringIO()
>>> print_table(["property", "status"], [["one-active", "holds"], ["stable", "not promised"]], file=out)
>>> print(out.getvalue(), end="")
property    status
----------  ------------
one-active  holds
stable      not promised
"""

from __future__ import annotations

import json
import sys
from typing import Iterable, Sequence, TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from rebalproof.properties.verdict import Status, Verdict

__all__ = [
    "STATUS_STYLE",
    "make_console",
    "print_table",
    "verdict_details",
    "print_verdicts",
    "print_finding",
    "format_assignment",
    "summary_line",
]

STATUS_STYLE = {
    Status.HOLDS.value: "green",
    Status.VIOLATED.value: "bold red",
    Status.INCONCLUSIVE.value: "yellow",
    Status.NOT_PROMISED.value: "dim",
}


def make_console(file: TextIO | None = None, *, stderr: bool = False) -> Console:
    """A console on ``file`` (default stdout, or stderr): rich on a terminal, plain otherwise."""
    return Console(file=file, stderr=stderr and file is None, highlight=False, soft_wrap=False)


def _styled(cell: str) -> Text:
    for status, style in STATUS_STYLE.items():
        if cell == status or cell.startswith(status + " "):
            return Text(cell, style=style)
    return Text(cell)


def print_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    title: str | None = None,
    file: TextIO | None = None,
    stderr: bool = False,
) -> None:
    """Print rows under column headers: a rich table on a terminal, plain aligned text elsewhere."""
    rows = [[str(c) for c in row] for row in rows]
    console = make_console(file, stderr=stderr)
    if console.is_terminal:
        table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
        for i, name in enumerate(columns):
            table.add_column(name, overflow="fold", no_wrap=i < len(columns) - 1)
        for row in rows:
            table.add_row(*(_styled(c) for c in row))
        console.print(table)
        return
    out = file if file is not None else (sys.stderr if stderr else sys.stdout)
    widths = [max([len(name)] + [len(r[i]) for r in rows]) for i, name in enumerate(columns)]
    lines = []
    if title:
        lines.append(title)
    for cells in ([*columns], ["-" * w for w in widths], *rows):
        padded = [c.ljust(w) for c, w in zip(cells[:-1], widths)] + [cells[-1]]
        lines.append("  ".join(padded).rstrip())
    out.write("\n".join(lines) + "\n")
    out.flush()


def verdict_details(verdict: Verdict) -> str:
    """One line for a verdict: its message, and the tasks and members it names when the message does not."""
    parts = [verdict.message] if verdict.message else []
    for label, ids in (("tasks", verdict.tasks), ("members", verdict.members)):
        missing = [i for i in ids if i not in verdict.message]
        if missing:
            shown = ", ".join(missing[:10]) + (f", ... ({len(missing)} in all)" if len(missing) > 10 else "")
            parts.append(f"{label}: {shown}")
    return "; ".join(parts)


def print_verdicts(verdicts: Sequence[Verdict], *, title: str | None = None, file: TextIO | None = None, stderr: bool = False) -> None:
    """The verdict table: property, status, details."""
    print_table(
        ["property", "status", "details"],
        [[v.property, v.status.value, verdict_details(v)] for v in verdicts],
        title=title,
        file=file,
        stderr=stderr,
    )


def summary_line(verdicts: Sequence[Verdict]) -> str:
    """One line: ok / violated, with how many properties hold, are violated, are not promised.

    "Every promised property holds" only when none is inconclusive (an incomplete exploration,
    a time limit, an interrupt, a witness that never happens within the bounds): then the line
    says how many are undecided, and names the witnesses that never happen.

    >>> summary_line([Verdict(property="one-active", status=Status.HOLDS)])
    'ok: every promised property holds (1 holds)'
    >>> summary_line([Verdict(property="one-active", status=Status.HOLDS), Verdict(property="converges", status=Status.INCONCLUSIVE)])
    'ok: nothing violated, but 1 of the promised properties is undecided (1 holds, 1 inconclusive)'
    >>> summary_line([Verdict(property="task-moves", status=Status.INCONCLUSIVE, measure={"examples": 0})])
    'ok: nothing violated, but 1 of the promised properties is undecided (1 inconclusive): task-moves never happens within the bounds (widen them)'
    """
    counts = {s: sum(1 for v in verdicts if v.status is s) for s in Status}
    told = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
    violated = [v.property for v in verdicts if v.violated]
    if violated:
        return f"violated: {', '.join(violated)} ({told})"
    undecided = counts[Status.INCONCLUSIVE]
    if undecided:
        line = f"ok: nothing violated, but {undecided} of the promised properties {'is' if undecided == 1 else 'are'} undecided ({told})"
        unseen = [v.property for v in verdicts if v.status is Status.INCONCLUSIVE and (v.measure or {}).get("examples") == 0]
        if unseen:
            line += f": {', '.join(unseen)} never {'happens' if len(unseen) == 1 else 'happen'} within the bounds (widen them)"
        return line
    return f"ok: every promised property holds ({told})"


def print_finding(error, *, saved: str | None = None, file: TextIO | None = None) -> None:
    """A finding about an assignor: one line saying what happened, then the input that caused it."""
    out = file if file is not None else sys.stderr
    out.write(f"finding: {error}\n")
    if error.input_json is not None:  # one line: exactly what an exec: assignor was sent
        out.write(json.dumps(error.input_json, separators=(",", ":")) + "\n")
    if saved:
        out.write(f"saved: {saved}\n")
    out.flush()


def format_assignment(obj: dict) -> str:
    """An Assignment's JSON with one member per line: valid JSON, readable, diffable.

    >>> print(format_assignment({"assignment": {"I1": {"active": ["0_0"], "standby": [], "warmup": []}}, "probing_rebalance": False}))
    {
      "assignment": {
        "I1": {"active": ["0_0"], "standby": [], "warmup": []}
      },
      "probing_rebalance": false
    }
    """
    members = [f"    {json.dumps(m)}: {json.dumps(roles)}" for m, roles in obj["assignment"].items()]
    body = ",\n".join(members)
    inner = f"{{\n{body}\n  }}" if members else "{}"
    return f'{{\n  "assignment": {inner},\n  "probing_rebalance": {json.dumps(obj.get("probing_rebalance", False))}\n}}'
