"""Red team round 2: name-dependent traps for ``--symmetry auto``.

Each trap is the independent planner (:func:`tests.assignors.independent_ha.assign`, which
``--symmetry auto`` samples as equivariant at the default bounds) with one bug that fires
only in views whose *names* say so: a particular member missing, a particular task on a
particular member. The bug is always the same visible one, every standby dropped (seed 002,
``num_standbys``: standbys are required), so ``standby-count`` is violated wherever it fires.
A trap that renaming would move elsewhere is exactly what symmetry reduction may skip: if
``check`` (auto) explores only a renamed twin of the bad view, it reports fewer violations
than ``--symmetry off``.
"""

from __future__ import annotations

from tests.assignors.independent_ha import assign as planner

__all__ = ["without_i1", "without_i2", "i1_runs_0_1_i2_backs_0_0"]


def _drop_standbys(answer):
    for roles in answer["assignment"].values():
        roles["standby"] = []
    return answer


def _ids(raw):
    return {m["id"] for m in raw["members"]}


def _roles(raw, mid):
    for m in raw["members"]:
        if m["id"] == mid:
            return m
    return {}


def without_i1(raw):
    """Drops the standbys when I1 is gone and two members remain."""
    answer = planner(raw)
    return _drop_standbys(answer) if "I1" not in _ids(raw) and len(raw["members"]) == 2 else answer


def without_i2(raw):
    """Drops the standbys when I2 is gone and two members remain."""
    answer = planner(raw)
    return _drop_standbys(answer) if "I2" not in _ids(raw) and len(raw["members"]) == 2 else answer


def i1_runs_0_1_i2_backs_0_0(raw):
    """Drops the standbys when I1 reports 0_1 active and I2 reports a standby of 0_0.

    Found by logging every view the assignor is asked at the default bounds with ``--symmetry
    auto`` and ``off`` (sampling calls included): the off run asks 3 views with both, the auto
    run none (its reduced exploration reaches only renamed twins, none of which its samples
    rename into this naming).
    """
    answer = planner(raw)
    hit = "0_1" in (_roles(raw, "I1").get("active") or []) and "0_0" in (_roles(raw, "I2").get("standby") or [])
    return _drop_standbys(answer) if hit else answer
