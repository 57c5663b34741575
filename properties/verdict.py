"""Three-valued verdicts (plus "not promised"), shared by every property and engine.

A verdict is never silently weakened: a property a protocol does not promise is reported as
``NOT_PROMISED``; a check that could not finish is ``INCONCLUSIVE`` with the bound or reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

__all__ = ["Status", "Verdict"]


class Status(str, Enum):
    HOLDS = "holds"
    VIOLATED = "violated"
    INCONCLUSIVE = "inconclusive"
    NOT_PROMISED = "not promised"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The outcome of one property on one subject (an assignment, a state, a run)."""

    property: str
    status: Status
    message: str = ""
    tasks: tuple[str, ...] = ()
    members: tuple[str, ...] = ()
    measure: dict = field(default_factory=dict)  # figures reported alongside (e.g. balance)

    @property
    def holds(self) -> bool:
        return self.status is Status.HOLDS

    @property
    def violated(self) -> bool:
        return self.status is Status.VIOLATED

    def to_json(self) -> dict:
        out = {"property": self.property, "status": self.status.value, "message": self.message}
        if self.tasks:
            out["tasks"] = list(self.tasks)
        if self.members:
            out["members"] = list(self.members)
        if self.measure:
            out["measure"] = dict(self.measure)
        return out
