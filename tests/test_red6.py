"""Red team 6 (2026-11-29): independent assignors written from the seeds against ``check``.

Its share-balancing KIP-441 assignor (``tests/assignors/red6_quota.py``: each instance holds its
share of each subtopology's tasks and of all tasks by threads, rounded down or up) was faulted
by ``fixpoint`` for moving a task off a 2-thread member holding both tasks of a subtopology
beside two idle 1-thread members: a layout balanced per thread of load, but neither by shares
nor by the KIP's sentences read literally, which ``balanced`` accepts as readings too. The
premise now asks for every reading (docs/DESIGN.md, ``fixpoint``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rebalproof.model.assignors.spec import resolve
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_protocol import protocol
from rebalproof.properties.run_check import check_model

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SPEC = "py:tests.assignors.red6_quota:assign"


@pytest.mark.parametrize(
    "bounds",
    [
        Bounds(subtopologies=2, partitions=1, capacities=(2, 1, 1)),  # the false alarm
        Bounds(subtopologies=1, partitions=2, capacities=(2, 1, 1)),  # the false alarm
        Bounds(),
        Bounds(capacities=(1, 2), stateless=2),
    ],
)
def test_red_team_6s_share_balancing_assignor_keeps_every_promise(bounds):
    with resolve(SPEC) as assignor:
        result = check_model(protocol=protocol("cooperative"), assignor=assignor, bounds=bounds, rules="ha", symmetry="auto", por=True)
    bad = {r.property.name: r.verdict.message for r in result.results if r.verdict.status.name == "VIOLATED"}
    assert not bad, bad
    holds = {r.property.name for r in result.results if r.verdict.status.name == "HOLDS"}
    assert {"fixpoint", "stable", "balanced", "converges"} <= holds, holds
