"""Two small state spaces for testing and measuring the exploration engines.

They live in the package, not in ``tests/``, because Spark's workers import them by name.

- :class:`Counters` — a few counters modulo ``m`` with increment, doubling and neighbour swaps:
  ``m ** width`` states (18**4 = 104,976 by default), wide levels and many equal-depth parents,
  so the discovery-order tie-break decides which of several shortest traces is reported.
- :class:`Chain` — one state per level: measures the fixed cost of a BFS level.

Examples
--------
>>> Counters(width=2, modulus=3).expand((0, 1))
(('inc 0', (1, 1)), ('double 0', (0, 1)), ('inc 1', (0, 2)), ('double 1', (0, 2)), ('swap 0', (1, 0)))
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

__all__ = ["Counters", "Chain", "fingerprint_of"]


def fingerprint_of(value) -> int:
    """An unsigned 64-bit fingerprint of ``repr(value)`` (stable across processes)."""
    return int.from_bytes(hashlib.blake2b(repr(value).encode(), digest_size=8).digest(), "little")


@dataclass(frozen=True, kw_only=True)
class Counters:
    """``width`` counters modulo ``modulus``, all starting at 0.

    Actions, in this order: for each counter ``inc i`` (+1) and ``double i`` (x2); then for each
    neighbour pair ``swap i`` (exchange counters i and i+1). Invariants:
    ``sum-not-target`` (the counters never add up to ``target``) and ``not-all-equal``
    (they are never all equal and non-zero).
    """

    width: int = 4
    modulus: int = 18
    target: int = 40

    @property
    def invariant_names(self) -> tuple[str, ...]:
        return ("not-all-equal", "sum-not-target")

    def init_states(self) -> tuple:
        return ((0,) * self.width,)

    def expand(self, state: tuple) -> tuple:
        out = []
        m = self.modulus
        for i, value in enumerate(state):
            out.append((f"inc {i}", state[:i] + ((value + 1) % m,) + state[i + 1 :]))
            out.append((f"double {i}", state[:i] + ((value * 2) % m,) + state[i + 1 :]))
        for i in range(self.width - 1):
            out.append((f"swap {i}", state[:i] + (state[i + 1], state[i]) + state[i + 2 :]))
        return tuple(out)

    def fingerprint(self, state: tuple) -> int:
        return fingerprint_of(state)

    def violations(self, state: tuple) -> tuple[str, ...]:
        found = []
        if state[0] != 0 and all(v == state[0] for v in state):
            found.append("not-all-equal")
        if sum(state) == self.target:
            found.append("sum-not-target")
        return tuple(found)


@dataclass(frozen=True, kw_only=True)
class Chain:
    """States ``0 .. length``, action ``step`` from ``i`` to ``i+1``; ``below-end`` fails at ``length``."""

    length: int = 50

    @property
    def invariant_names(self) -> tuple[str, ...]:
        return ("below-end",)

    def init_states(self) -> tuple:
        return (0,)

    def expand(self, state: int) -> tuple:
        return (("step", state + 1),) if state < self.length else ()

    def fingerprint(self, state: int) -> int:
        return fingerprint_of(state)

    def violations(self, state: int) -> tuple[str, ...]:
        return ("below-end",) if state >= self.length else ()
