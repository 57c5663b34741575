"""``caught-up-active``: a stateful active goes to a most-caught-up instance (KIP-441 requirement 1).

KIP-441 "Assignment Algorithm", 1: "The assignment algorithm is required to assign active
stateful tasks to the most-caught-up-instances"; ranks as in "Computing the most-caught-up
instances" (:mod:`rebalproof.model.ranking`: lag floored at ``acceptable_recovery_lag``, no
local state ranks last).

Abstraction choice: KIP-441 knows no leaving members (KIP-429 v2 does). An active on member
``m`` is accepted when ``m`` has the best rank of the whole group, *or* ``m`` is not leaving
and has the best rank among the non-leaving members: an assignor may pass over a leaving
member that is shutting down, or treat it as an ordinary one. Tasks with no active, or an
active on a non-member, are ``one-active``'s business and are skipped here.

Examples
--------
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_0"),),
...                       members=(Member(id="I1", lags={"0_0": 50000}), Member(id="I2", lags={"0_0": 0})))
>>> caught_up_active(view, Assignment.build({"I1": {"active": ["0_0"]}, "I2": {}})).message
'task 0_0 is active on I1 (rank 50000), but I2 is more caught up (rank 0)'
"""

from __future__ import annotations

from rebalproof.model.assignment import Assignment
from rebalproof.model.names import sorted_ids
from rebalproof.model.ranking import NO_STATE, rank
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.common import plural, staying_members, words
from rebalproof.properties.verdict import Status, Verdict

__all__ = ["caught_up_active", "acceptable_active_holders", "rank_text"]


def rank_text(value: int) -> str:
    """A rank as a message says it: ``rank 0``, ``rank 50000``, ``no local state``."""
    return "no local state" if value == NO_STATE else f"rank {value}"


def acceptable_active_holders(view: RebalanceInput, task_id: str) -> tuple[str, ...]:
    """The members an active of stateful ``task_id`` may go to, in id order (see module doc)."""
    ranks = {m: rank(view, m, task_id) for m in view.member_ids}
    if not ranks:
        return ()
    best = min(ranks.values())
    staying = staying_members(view)
    best_staying = min((ranks[m] for m in staying), default=None)
    ok = {m for m, r in ranks.items() if r == best}
    ok |= {m for m in staying if ranks[m] == best_staying}
    return sorted_ids(ok)


def caught_up_active(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """Each stateful active copy is on a most-caught-up instance (see module doc for leaving members)."""
    problems: list[str] = []
    tasks: list[str] = []
    members: list[str] = []
    checked = 0
    for task_id in view.stateful_task_ids:
        holders = [m for m in sorted_ids(set(assignment.actives_of(task_id))) if view.has_member(m)]
        if not holders:
            continue
        ok = acceptable_active_holders(view, task_id)
        for member in holders:
            checked += 1
            if member in ok:
                continue
            mine = rank(view, member, task_id)
            better = [m for m in ok if rank(view, m, task_id) < mine]
            best_rank = min(rank(view, m, task_id) for m in better)
            problems.append(
                f"task {task_id} is active on {member} ({rank_text(mine)}), "
                f"but {words(better)} {'is' if len(better) == 1 else 'are'} more caught up ({rank_text(best_rank)})"
            )
            tasks.append(task_id)
            members.extend([member, *better])
    if problems:
        return Verdict(
            property="caught-up-active",
            status=Status.VIOLATED,
            message="; ".join(problems),
            tasks=sorted_ids(set(tasks)),
            members=sorted_ids(set(members)),
            measure={"checked": checked},
        )
    return Verdict(
        property="caught-up-active",
        status=Status.HOLDS,
        message=f"{plural(checked, 'stateful active')} on a most-caught-up instance",
        measure={"checked": checked},
    )
