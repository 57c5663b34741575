"""Lag ranking as KIP-441 defines it ("Computing the most-caught-up instances").

The rank of an instance on a stateful task is its lag, floored at ``acceptable_recovery_lag``
(any lag within it ranks 0), and an instance with no local state ranks last: KIP-441 uses
"the total number of offsets in that task's changelog ... or max long as a proxy"; we use
max long, :data:`NO_STATE`. Stateless tasks have no rank (every instance is equal).
"""

from __future__ import annotations

from rebalproof.model.names import id_key
from rebalproof.model.view import RebalanceInput

__all__ = ["NO_STATE", "lag_of", "rank", "ranked_candidates", "most_caught_up", "is_caught_up"]

NO_STATE = 2**63 - 1


def lag_of(view: RebalanceInput, member_id: str, task_id: str) -> int:
    """The member's lag on the task; an active copy with no report counts as 0, no state as :data:`NO_STATE`."""
    member = view.member(member_id)
    lag = member.lag(task_id)
    if lag is not None:
        return lag
    if task_id in member.active:
        return 0
    return NO_STATE


def rank(view: RebalanceInput, member_id: str, task_id: str) -> int:
    """KIP-441 rank: 0 when caught up (lag <= acceptable_recovery_lag), else the lag."""
    lag = lag_of(view, member_id, task_id)
    return 0 if lag <= view.config.acceptable_recovery_lag else lag


def is_caught_up(view: RebalanceInput, member_id: str, task_id: str) -> bool:
    """True when the member could take the task over as active now."""
    return lag_of(view, member_id, task_id) <= view.config.acceptable_recovery_lag


def ranked_candidates(view: RebalanceInput, task_id: str, members=None) -> tuple[tuple[int, str], ...]:
    """(rank, member) for every member (or those given), best first, ties by id."""
    if members is None:  # over every member: kept with the view (a pure function of it)
        key = ("ranked", task_id)
        found = view._derived.get(key)
        if found is None:
            found = view._derived[key] = _ranked(view, task_id, view.member_ids)
        return found
    return _ranked(view, task_id, members)


def _ranked(view: RebalanceInput, task_id: str, members) -> tuple[tuple[int, str], ...]:
    return tuple(sorted(((rank(view, m, task_id), m) for m in members), key=lambda p: (p[0], id_key(p[1]))))


def most_caught_up(view: RebalanceInput, task_id: str, members=None) -> tuple[str, ...]:
    """The members with the minimum rank on the task (all of them when the task is stateless)."""
    if members is None:
        key = ("best", task_id)
        found = view._derived.get(key)
        if found is None:
            found = view._derived[key] = _best(view, task_id, None)
        return found
    return _best(view, task_id, members)


def _best(view: RebalanceInput, task_id: str, members) -> tuple[str, ...]:
    ranked = ranked_candidates(view, task_id, members)
    if not ranked:
        return ()
    if not view.task(task_id).stateful:
        return tuple(m for _, m in ranked)
    best = ranked[0][0]
    return tuple(m for r, m in ranked if r == best)
