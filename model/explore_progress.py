"""A progress display for long explorations: rich, on stderr, only when asked or on a terminal.

The explorer calls ``progress(states, depth, queued, seconds)`` a few times a second; this
turns it into one live line (distinct states, BFS depth, queue, states/s). Nothing is printed
when stderr is not a terminal, unless forced (``--progress``: then a plain line every 2 s),
so CI logs stay clean.
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
        self._plain = self.enabled and not sys.stderr.isatty()  # forced into a log: a line every 2 s
        self._last = 0.0

    def __enter__(self) -> "ProgressDisplay":
        if self.enabled and not self._plain:
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
        rate = states / seconds if seconds > 0 else 0.0
        text = f"{states:,} distinct states, depth {depth}, {queued:,} queued, {rate:,.0f} states/s, {seconds:.1f}s"
        if self._plain:
            if seconds - self._last >= 2.0:
                self._last = seconds
                sys.stderr.write(f"{self.label}: {text}\n")
                sys.stderr.flush()
            return
        if self._live is not None:
            self._live.update(f"[bold]{self.label}[/]: {text}")
