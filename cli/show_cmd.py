"""``rebalproof show TRACE``: a trace in the seeds' own form, or as a self-contained HTML page.

Two text forms, both deterministic plain text:

``text`` (default for every assignor but ``ha``)
    seed 001's scenario blocks: "#Second Rebalance", "Member S1~S5 join with following status:",
    one ``S1(assigned: [..], revoked: [..], learning: [..])`` line per member, "S1 performs task
    assignments:" (:mod:`rebalproof.traces.render_text`);
``table`` (default for ``ha``)
    seed 002's example tables: instances x active / standby / warmup per round
    (:mod:`rebalproof.traces.render_table`).

``--steps`` appends the trace's step numbers to each line; ``--notes`` adds the trace's
``// ...`` notes (how a golden trace reads its seed: where the seed's text lost its layout or
contradicts itself, which choices were free). They are left out by default: they are about
reading the seed, not about the run. ``--no-comments`` (the default now) is still accepted. ``--html OUT.html`` writes
the viewer page instead (:mod:`rebalproof.traces.render_html`): a card per step, what changed
highlighted, the failing step and a lasso's cycle marked, arrow keys / j k to move.

Showing a trace judges nothing: exit 0, or 2 when the file is not a trace. ``rebalproof replay``
re-runs it.
"""

from __future__ import annotations

from pathlib import Path

import click

from rebalproof.model.codec import write_text_atomic
from rebalproof.traces.format import Trace
from rebalproof.traces.render_html import render_html
from rebalproof.traces.render_table import render_table
from rebalproof.traces.render_text import render_text
from rebalproof.traces.replay import load_trace

__all__ = ["command", "FORMS", "render", "default_form"]

FORMS = ("auto", "text", "table")


def default_form(trace: Trace) -> str:
    """``table`` for KIP-441 traces (assignor ``ha``), ``text`` otherwise."""
    return "table" if trace.header.get("assignor", "").split(":", 1)[0] == "ha" else "text"


def render(trace: Trace, *, form: str = "auto", steps: bool = False, comments: bool = True) -> str:
    """The trace in ``form`` (``auto`` picks :func:`default_form`)."""
    chosen = default_form(trace) if form == "auto" else form
    fn = render_table if chosen == "table" else render_text
    return fn(trace, steps=steps, comments=comments)


@click.command("show")
@click.argument("trace_path", metavar="TRACE", type=click.Path(path_type=Path))
@click.option("--form", type=click.Choice(FORMS), default="auto", show_default=True,
              help="text: seed 001's scenario blocks; table: seed 002's tables (auto: table for the ha assignor)")
@click.option("--steps", is_flag=True, help="append the trace's step numbers to each line")
@click.option("--notes", is_flag=True, help="add the trace's // notes on how it reads its seed (left out by default)")
@click.option("--no-comments", "no_comments", is_flag=True, help="leave out the trace's // notes (the default)")
@click.option("--html", "html_path", type=click.Path(path_type=Path), default=None, metavar="OUT.html",
              help="write a self-contained HTML viewer of the trace instead of printing it")
def command(trace_path: Path, form: str, steps: bool, notes: bool, no_comments: bool, html_path: Path | None) -> int:
    """Show TRACE (a rebalproof-trace/1 JSON file) in the seeds' own form.

    Exit 0, or 2 when TRACE is not a readable trace.
    """
    trace = load_trace(trace_path)
    if html_path is not None:
        write_text_atomic(html_path, render_html(trace))
        where = ""
        if trace.kind in ("safety", "lasso"):
            where = f"; {trace.property_name} fails at step {trace.header['fail_step']}"
        click.echo(f"wrote {html_path} ({len(trace.steps)} steps{where}); open it in a browser, move with the arrow keys or j / k")
        return 0
    click.echo(render(trace, form=form, steps=steps, comments=notes and not no_comments), nl=False)
    return 0
