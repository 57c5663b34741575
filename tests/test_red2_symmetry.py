"""Red team round 2: is ``--symmetry auto`` sound? A name-dependent bug it reduces away.

``tests/assignors/independent_traps.py`` holds the independent planner with one bug each
(every standby dropped, so ``standby-count`` is violated) that fires only in views whose names
say so. Most were caught by the sampling (``--symmetry auto`` then explores in full and agrees
with ``off``). One was not: ``i1_runs_0_1_i2_backs_0_0`` fires when I1 runs 0_1
and I2 backs up 0_0. At the default bounds and ``--events 3`` ``--symmetry off`` asks the
assignor 3 views with that naming and is violated; ``--symmetry auto`` (seed 0) sampled 12
views, found the answers equivariant, and its reduced exploration reached only renamed twins
of those views, so it reported every promised property holding: a missed violation (seeds 1-3
of ``--symmetry-seed`` happened to sample it). Settled: after a reduced run every view it
reached is asked under every renaming the reduction merges by.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rebalproof.cli.main import main
from rebalproof.oracle import judge

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.assignors import independent_traps  # noqa: E402

TRAP = "py:tests.assignors.independent_traps:i1_runs_0_1_i2_backs_0_0"


def _violated(capsys, *argv):
    code = main(["check", *argv, "--json", "--quiet"])
    report = json.loads(capsys.readouterr().out)
    return code, {p["property"] for p in report["properties"] if p["status"] == "violated"}


# A view the trap fires on (the first of the three ``--symmetry off`` asks at the defaults).
TRAP_VIEW = {
    "config": {"num_standby_replicas": 1, "acceptable_recovery_lag": 10000, "max_warmup_replicas": 2},
    "tasks": [{"id": "0_0"}, {"id": "0_1"}, {"id": "1_0"}, {"id": "1_1"}],
    "members": [
        {"id": "I1", "active": ["0_0", "0_1", "1_0"], "standby": ["1_1"],
         "lags": {"0_0": 0, "0_1": 0, "1_0": 0, "1_1": 0}},
        {"id": "I2", "active": ["1_1"], "standby": ["0_0", "0_1", "1_0"],
         "lags": {"0_0": 0, "0_1": 0, "1_0": 0, "1_1": 0}},
    ],
    "previous_members": ["I1", "I2"],
}


def test_the_trap_drops_the_standbys_only_under_its_names():
    assert [v.property for v in judge(TRAP_VIEW, independent_traps.i1_runs_0_1_i2_backs_0_0(TRAP_VIEW)).violations] \
        == ["standby-count"]
    swapped = json.loads(json.dumps(TRAP_VIEW).replace("I1", "Ix").replace("I2", "I1").replace("Ix", "I2"))
    assert judge(swapped, independent_traps.i1_runs_0_1_i2_backs_0_0(swapped)).ok


def test_without_symmetry_the_trap_is_caught(capsys):
    code, violated = _violated(capsys, "--assignor", TRAP, "--symmetry", "off")
    assert code == 1 and "standby-count" in violated


def test_symmetry_auto_reports_what_symmetry_off_reports(capsys):
    """Reported as a missed violation (auto sampled 12 views, reduced, and its reduced run never
    asked the trap's naming) and settled: after the reduced run, every view it reached is asked
    under every renaming the reduction merges by (model/group_symmetry.verify_reached)."""
    off = _violated(capsys, "--assignor", TRAP, "--symmetry", "off")
    auto = _violated(capsys, "--assignor", TRAP, "--symmetry", "auto")
    assert auto == off


@pytest.mark.parametrize("trap", ["without_i1", "without_i2"])
def test_sampling_catches_a_member_missing_by_name(capsys, trap):
    """A bug keyed on which member is gone shows in the first BFS levels: auto explores in full."""
    spec = f"py:tests.assignors.independent_traps:{trap}"
    assert _violated(capsys, "--assignor", spec, "--symmetry", "auto") == _violated(capsys, "--assignor", spec,
                                                                                    "--symmetry", "off")


CANONICAL = "py:tests.assignors.independent_canonical:assign"


def test_an_assignor_equivariant_by_construction_is_judged_as_without_reduction(capsys):
    """The planner asked on a canonical renaming of each view: equivariant, but checking every
    reached view under every renaming would ask more than the reduction saves (2,404 calls
    against 542 without reduction at the defaults), so auto stops at its cap and explores in
    full (the coordinator's choice after this report); it agrees with off."""
    code = main(["check", "--assignor", CANONICAL, "--json", "--quiet"])
    report = json.loads(capsys.readouterr().out)
    assert report["symmetry_check"]["reduced"] is False and report["symmetry_check"]["observed"] == "inconclusive"
    assert "explored again without reduction" in report["symmetry_check"]["message"]
    # the steps while the run goes on stop at the cap as the check at its end does: 1,236 calls (6,389 when they did not)
    assert "on the 1168 renamed views checked" in report["symmetry_check"]["message"] and report["symmetry_check"]["calls"] < 1500
    auto = (code, {p["property"] for p in report["properties"] if p["status"] == "violated"})
    assert auto == _violated(capsys, "--assignor", CANONICAL, "--symmetry", "off") == (0, set())


def test_a_view_left_unchecked_when_the_time_ran_out_is_checked_at_the_next_step():
    """``ReachedCheck`` in steps (``check`` runs one each time the reduced run's views double): a
    step the time limit cut short keeps its unchecked views for the next step, so a later step
    never calls the reduction sound over views nobody checked; here the next step finds the trap."""
    from rebalproof.model.codec import decode_assignment, decode_input, encode_input
    from rebalproof.model.group_symmetry import AutoSymmetry, ReachedCheck
    from rebalproof.properties.verdict import Status

    class Clock:  # spent at the first step, free at the second
        over = True

        def spent(self):
            return "time limit 1s" if self.over else None

    def trap(v):
        return decode_assignment(independent_traps.i1_runs_0_1_i2_backs_0_0(encode_input(v)), v)

    view = decode_input(TRAP_VIEW)
    check = ReachedCheck(AutoSymmetry(reduce=True, status=Status.HOLDS, message="sampled"), trap)
    budget = Clock()
    first = check.add([(view, ("I1", "I2"))], budget=budget)
    assert first.reduce and first.status is Status.INCONCLUSIVE and first.views == 0
    budget.over = False
    second = check.add([], budget=budget)
    assert not second.reduce and second.status is Status.VIOLATED and second.views == 1
