"""``eager``: the stop-the-world protocol's assignor; at the leader it decides exactly as ``sticky``.

Seed 001 "Stop-The-World Effect": when a rebalance starts every worker (1) joins the group
with all its tasks revoked, (2) waits for the assignment, (3) replays the assigned tasks'
state and (4) runs once the replay is done. Everything that makes the protocol *eager*
happens on the members — revoking all, restoring before running — and lives in the group
model's member-side ``eager`` protocol, not here. What the leader computes from the joins is
the baseline sticky assignment, so this assignor *is* :func:`rebalproof.model.assignors.sticky.assign`
under its own name: its decisions equal sticky's for every input, which the tests check.

Because eager members revoke everything before joining, the leader of a real eager group sees
no current actives, only the state members still have on disk (``lags``); ``sticky`` then keeps
tasks with caught-up holders. Which view the leader gets is the group model's business.
"""

from __future__ import annotations

from typing import Callable

from rebalproof.model.assignment import Assignment
from rebalproof.model.assignors import AssignorInfo, register
from rebalproof.model.assignors import sticky
from rebalproof.model.view import RebalanceInput

__all__ = ["assign", "make", "INFO"]


def assign(view: RebalanceInput) -> Assignment:
    """Sticky's assignment of ``view`` (see :mod:`rebalproof.model.assignors.sticky`)."""
    return sticky.assign(view)


def make() -> Callable[[RebalanceInput], Assignment]:
    """The ``eager`` assignor (it takes no options)."""
    return assign


INFO = register(
    AssignorInfo(
        name="eager",
        summary="stop-the-world baseline: members revoke everything, the leader decides as sticky",
        seed="001 Stop-The-World Effect",
        make=make,
        rules="eager",
        equivariant=False,
        options={},
    )
)
