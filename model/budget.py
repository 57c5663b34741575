"""How long a whole command may run, and whether it was asked to stop (honest limits).

A :class:`Budget` is made when a command starts. The explorer asks it before each expansion
and the liveness analysis between steps; once it is spent (the time limit passed, or SIGINT /
SIGTERM arrived) exploration stops with what it found, and the graph checks not yet done
become *inconclusive* with the reason -- never *holds*. The clock is injected so that tests
need no sleeping.

The exploration stops at :data:`EXPLORE_SHARE` of the time limit so that the analysis of the
graph it found has the rest; an analysis that still overruns stops at the limit itself.

Examples
--------
>>> now = [0.0]
>>> budget = Budget(seconds=10, clock=lambda: now[0])
>>> budget.spent(), budget.explore_spent()
(None, None)
>>> now[0] = 8.5
>>> budget.spent(), budget.explore_spent()
(None, 'time limit 10s')
>>> budget.interrupt("SIGINT")
>>> budget.spent()
'interrupted by SIGINT'
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

__all__ = ["Budget", "BudgetSpent", "EXPLORE_SHARE"]

#: Share of ``--time-limit`` the exploration may use; the rest is kept for the analysis.
EXPLORE_SHARE = 0.8


class BudgetSpent(Exception):
    """Raised inside an analysis step when the budget is spent; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(kw_only=True)
class Budget:
    """A command's time limit (seconds, None: none) and interrupt flag.

    Not frozen on purpose: a signal handler records the interrupt in it while the command runs.
    """

    seconds: float | None = None
    clock: Callable[[], float] = time.monotonic
    started: float | None = None
    interrupted: str | None = None  # the signal's name, once one arrived

    def __post_init__(self) -> None:
        if self.started is None:
            self.started = self.clock()

    def interrupt(self, signal_name: str) -> None:
        """Record that the command was asked to stop (the first signal counts)."""
        if self.interrupted is None:
            self.interrupted = signal_name

    def elapsed(self) -> float:
        return self.clock() - self.started

    def _over(self, share: float) -> str | None:
        if self.interrupted is not None:
            return f"interrupted by {self.interrupted}"
        if self.seconds is not None and self.elapsed() >= self.seconds * share:
            return f"time limit {self.seconds:g}s"
        return None

    def spent(self) -> str | None:
        """Why the command must stop now (interrupted, or past the limit); None while it may go on."""
        return self._over(1.0)

    def explore_spent(self) -> str | None:
        """Why exploration must stop now: interrupted, or past :data:`EXPLORE_SHARE` of the limit."""
        return self._over(EXPLORE_SHARE)

    def check(self) -> None:
        """Raise :class:`BudgetSpent` if the command must stop."""
        reason = self.spent()
        if reason is not None:
            raise BudgetSpent(reason)
