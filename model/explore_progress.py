"""A progress display for long explorations, on stderr: live on a terminal, plain lines in logs.

The explorer calls ``progress(states, depth, queued, seconds)`` a few times a second; this
turns it into one live line on a terminal (rich), and, when stderr is not a terminal (CI,
``> log 2>&1``), into a plain line every :data:`LOG_EVERY` seconds as TLC does -- distinct
states, states/s, BFS depth, queue, resident memory -- so a long run is never silent while its
memory grows (a run shorter than that prints nothing). ``--progress`` makes those lines come
every 2 s; ``--quiet`` silences them. :meth:`ProgressDisplay.note` says what phase comes next
(the analysis after the exploration).

Examples
--------
>>> import io
>>> log = io.StringIO()
>>> display = ProgressDisplay(label="check", stream=log, tty=False, rss=lambda: 50 * 2**20)
>>> for second in (1.0, 9.9, 10.0, 15.0, 20.5):
...     display(int(second * 1000), 3, 7, second)
>>> print(log.getvalue(), end="")
check: 10,000 distinct states, 1,000 states/s, depth 3, 7 queued, RSS 50 MiB, 10s
check: 20,500 distinct states, 1,000 states/s, depth 3, 7 queued, RSS 50 MiB, 20s
>>> display.note("checking the properties of the graph")
>>> print(log.getvalue().splitlines()[-1])
check: checking the properties of the graph
"""

from __future__ import annotations

import sys
from typing import Callable

from rebalproof.model.explorer import current_rss

__all__ = ["ProgressDisplay", "LOG_EVERY"]

#: Seconds between two progress lines when stderr is not a terminal.
LOG_EVERY = 10.0


class ProgressDisplay:
    """Context manager; call the instance as the explorer's ``progress`` hook.

    Parameters
    ----------
    force : bool
        ``--progress``: plain lines every 2 s instead of every :data:`LOG_EVERY` s in a log.
    quiet : bool
        ``--quiet``: nothing at all.
    label : str
        What each line starts with.
    stream, tty, rss : optional
        Where to write (stderr), whether it is a terminal (asked of the stream), and how to read
        the resident memory (:func:`~rebalproof.model.explorer.current_rss`); for tests.
    """

    def __init__(self, *, force: bool = False, quiet: bool = False, label: str = "exploring", stream=None,
                 tty: bool | None = None, rss: Callable[[], int] = current_rss):
        self.stream = stream if stream is not None else sys.stderr
        tty = self.stream.isatty() if tty is None else tty
        self.enabled = not quiet
        self.label = label
        self._live = None
        self._plain = self.enabled and not tty
        self._every = 2.0 if force else LOG_EVERY
        self._last = 0.0
        self._rss = rss

    def __enter__(self) -> "ProgressDisplay":
        if self.enabled and not self._plain:
            from rich.console import Console
            from rich.live import Live

            console = Console(file=self.stream, force_terminal=None)
            self._live = Live("", console=console, refresh_per_second=4, transient=True)
            self._live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)
            self._live = None

    def __call__(self, states: int, depth: int, queued: int, seconds: float) -> None:
        if not self.enabled:
            return
        rate = states / seconds if seconds > 0 else 0.0
        if self._plain:
            if seconds - self._last >= self._every:
                self._last = seconds
                self._write(
                    f"{states:,} distinct states, {rate:,.0f} states/s, depth {depth}, {queued:,} queued, "
                    f"RSS {self._rss() / 2**20:,.0f} MiB, {seconds:.0f}s"
                )
            return
        if self._live is not None:
            text = f"{states:,} distinct states, depth {depth}, {queued:,} queued, {rate:,.0f} states/s, {seconds:.1f}s"
            self._live.update(f"[bold]{self.label}[/]: {text}")

    def note(self, text: str) -> None:
        """Say what happens next: the live line on a terminal; in a log a plain line, once a
        progress line was written (a short run stays silent)."""
        if not self.enabled:
            return
        if self._plain:
            if self._last > 0:
                self._write(text)
        elif self._live is not None:
            self._live.update(f"[bold]{self.label}[/]: {text}")

    def _write(self, text: str) -> None:
        self.stream.write(f"{self.label}: {text}\n")
        self.stream.flush()
