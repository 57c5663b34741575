"""Lag readings: which concrete lags the leader's view reports for the model's lag classes.

The group model keeps a lag *class* per (member, task): caught-up, behind or none
(:mod:`rebalproof.model.group_state`). The leader's view reports numbers. The *canonical* reading
reports a caught-up copy as lag 0 and a behind one as ``acceptable_recovery_lag + 1``. But a
caught-up copy may report any lag from 0 to the limit, seed 002 "Computing the most-caught-up
instances":

    Rank has a floor of acceptable_recovery_lag . That is, all instances that have a lag under
    acceptable_recovery_lag are considered to have a lag of 0.

and its pseudocode, ``else if (instance[task].lag <= acceptable_recovery_lag: // then the rank is
0, because any instance within acceptable_recovery_lag is considered caught up``. A lag *at* the
limit is caught up: the pseudocode says ``<=``, the config's definition says the lag "is
acceptable for immediate assignment", and "Must be at least 0" only makes sense so (with ``<``
a limit of 0 would make nothing ever caught up).

An assignor that reads the limit as exclusive, or ranks caught-up copies by their raw lag, answers
the canonical view as a correct one does: the model never shows it a lag within the limit but
above 0. With *boundary lags* (``Bounds.boundary_lags``) each rebalance may also show the leader
one of these readings, the environment's choice, as a rebalance action tagged with the reading:

``owners-at-limit``
    the caught-up copies of each task's reported owner (its active before the join) at exactly
    ``acceptable_recovery_lag``, every other caught-up copy at 0: the copy to keep looks worst;
``hosts-at-limit``
    every caught-up copy a member hosts (active, standby, warmup) at the limit, caught-up state
    it no longer hosts at 0: the copies held look worse than state left on disk.

Behind copies stay at ``acceptable_recovery_lag + 1`` (the tightest "behind") in those two.
The model's state keeps classes only, so a reading changes nothing but the numbers the assignor
and the per-rebalance properties read; the properties read caught-up lags through the floor, so
where an assignor answers such a reading as it answers the canonical view, the verdicts are the
same and the model adds no successor (see :meth:`GroupModel.actions
<rebalproof.model.group_model.GroupModel.actions>`).

Behind copies are ranked too: "If there is no such instance, then it assigns the active task to
the instance that is closest to catching up" and "Lower is more caught up" (seed 002). With every
behind copy at one number, an assignor that gives a task to the member *furthest* behind, or
picks among behind members by name, answers as a correct one does (red team 8). Two readings
spread the behind copies apart, by a measure names cannot change (so a renaming of the members
renames the reading's numbers with them), in both directions:

``behind-fewer-closer``
    a behind copy at ``acceptable_recovery_lag + 1 + n``, ``n`` the copies its member holds
    (active, standby, warmup): on a less loaded member it is closer to catching up;
``behind-more-closer``
    at ``acceptable_recovery_lag + 1 + (N - n)``, ``N`` the most copies any member holds.

They are offered only where they change a rank: some task has behind copies on two members at
different numbers. The properties read behind lags as ranks, so an answer to such a reading is
judged on its own view even when the canonical view got it too (it adds an edge to the same
successor, no state).
"""

from __future__ import annotations

from rebalproof.model.group_state import CAUGHT_UP

__all__ = ["READINGS", "BEHIND_READINGS", "CANONICAL", "reported_lags", "member_lags", "spreads_behind_ranks", "changes_anything", "describe"]

#: The canonical reading (caught-up 0, behind limit + 1): an action without a reading.
CANONICAL = None
#: The other readings, in the order the model offers them.
BEHIND_READINGS = ("behind-fewer-closer", "behind-more-closer")
READINGS = ("owners-at-limit", "hosts-at-limit") + BEHIND_READINGS

_WORDS = {
    "owners-at-limit": "owners' caught-up copies at acceptable_recovery_lag, other caught-up copies at 0",
    "hosts-at-limit": "hosted caught-up copies at acceptable_recovery_lag, unhosted caught-up state at 0",
    "behind-fewer-closer": "behind copies at acceptable_recovery_lag + 1 + the copies their member holds (fewer is closer)",
    "behind-more-closer": "behind copies at acceptable_recovery_lag + 1 + how many fewer copies their member holds than the fullest (more is closer)",
}


def describe(reading: str | None) -> str:
    """One line saying what ``reading`` reports."""
    if reading is None:
        return "caught-up copies at 0, behind copies at acceptable_recovery_lag + 1"
    return _WORDS[reading]


def _at_limit(reading: str | None, task: str, active, standby, warmup) -> bool:
    if reading == "owners-at-limit":
        return task in active
    if reading == "hosts-at-limit":
        return task in active or task in standby or task in warmup
    return False


def reported_lags(reading: str | None, lags, active, standby, warmup, limit: int, offset: int = 0) -> tuple[tuple[str, int], ...]:
    """The ``(task, lag)`` pairs a member with lag classes ``lags`` reports under ``reading``
    (``active`` is what it reports as its actives, ``standby``/``warmup`` what it hosts; its
    behind copies ``offset`` beyond ``limit + 1``: :func:`behind_offsets`)."""
    behind = limit + 1 + offset
    out = []
    for t, c in lags:
        if c == CAUGHT_UP:
            out.append((t, limit if _at_limit(reading, t, active, standby, warmup) else 0))
        else:
            out.append((t, behind))
    return tuple(out)


def behind_offsets(reading: str | None, members) -> tuple[int, ...]:
    """How far beyond ``acceptable_recovery_lag + 1`` each member (a view key's member parts
    ``(id, leaving, active, standby, warmup, lags)``) reports its behind copies under ``reading``."""
    if reading not in BEHIND_READINGS:
        return (0,) * len(members)
    loads = [len(m[2]) + len(m[3]) + len(m[4]) for m in members]
    if reading == "behind-fewer-closer":
        return tuple(loads)
    top = max(loads, default=0)
    return tuple(top - n for n in loads)


def member_lags(reading: str | None, members, limit: int) -> tuple[tuple[tuple[str, int], ...], ...]:
    """:func:`reported_lags` of every member of a view key's ``members`` under ``reading``."""
    offsets = behind_offsets(reading, members)
    return tuple(reported_lags(reading, m[5], m[2], m[3], m[4], limit, o) for m, o in zip(members, offsets))


def spreads_behind_ranks(reading: str, members) -> bool:
    """Whether ``reading`` (one of :data:`BEHIND_READINGS`) tells two behind copies of a task apart."""
    offsets = behind_offsets(reading, members)
    seen: dict[str, int] = {}
    for m, o in zip(members, offsets):
        for t, c in m[5]:
            if c != CAUGHT_UP:
                if seen.setdefault(t, o) != o:
                    return True
    return False


def changes_anything(reading: str, members, limit: int) -> bool:
    """True when ``reading`` reports some lag of ``members`` (a view key's member parts
    ``(id, leaving, active, standby, warmup, lags)``) otherwise than the canonical reading: with
    a limit of 0 or no caught-up copy it reports the same numbers."""
    if limit == 0:
        return False
    for _, _, active, standby, warmup, lags in members:
        for t, c in lags:
            if c == CAUGHT_UP and _at_limit(reading, t, active, standby, warmup):
                return True
    return False
