"""A progress display for long explorations: rich, on stderr, only when asked or on a terminal.

The explorer calls ``progress(states, depth, queued, seconds)`` a few times a second; this
turns it into one live line (distinct states, BFS depth, queue, states/s). Nothing is printed
when stderr is not a terminal, unless forced (``--progress``), so CI logs stay clean.
"""

from __future__ import annotations

import sys

__all__ = ["ProgressDisplay"]


class ProgressDisplay:
    """Context manager; call the instance as the explorer's ``progress`` hook."""

    def __init__(self, *, force: bool = False, label: str = "exploring"):
        self.enabled = force or sys.stderr.isatty()
        self.label = label
        self._live = None
        self._console = None

    def __enter__(self) -> "ProgressDisplay":
        if self.enabled:
            from rich.console import Console
            from rich.live import Live

            self._console = Console(stderr=True, force_terminal=None)
            self._live = Live("", console=self._console, refresh_per_second=4, transient=True)
            self._live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)
            self._live = None

    def __call__(self, states: int, depth: int, queued: int, seconds: float) -> None:
        if self._live is None:
            return
        rate = states / seconds if seconds > 0 else 0.0
        self._live.update(
            f"[bold]{self.label}[/]: {states:,} distinct states, depth {depth}, {queued:,} queued, "
            f"{rate:,.0f} states/s, {seconds:.1f}s"
        )
