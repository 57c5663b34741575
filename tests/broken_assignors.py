"""Deliberately wrong assignors, each breaking exactly one per-rebalance property (``ha`` rules).

:func:`reference` is a plain assignor that keeps every promise of the ``ha`` rule set by
construction; each broken assignor takes its answer and adds one defect. A broken assignor
returns None when the input gives its defect no room (no stateless task to move, no standby
to drop, ...), so tests ``assume`` it. :data:`BROKEN` maps each to the one property it breaks.

The defects are written from the definitions in docs/DESIGN.md, not from the property code, so a
test that runs them checks the properties against an independent reading.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

from rebalproof.model.assignment import ROLES, Assignment
from rebalproof.model.balance import READINGS, counts_by_reading, is_balanced, measure_balance
from rebalproof.model.names import id_key, subtopology_of
from rebalproof.model.ranking import is_caught_up, rank
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.stability import extras_only, fixpoint_premise, load_changes, premise_holds

__all__ = ["reference", "BROKEN"]


# -- the correct baseline ----------------------------------------------------------------------
def _roles(assignment: Assignment) -> dict[str, dict[str, list[str]]]:
    return {m: {r: list(getattr(a, r)) for r in ROLES} for m, a in assignment.members}


def _answer(view: RebalanceInput, holds: dict, probing: bool | None = None) -> Assignment:
    """An Assignment of ``holds``; probing asked for exactly when the actives are not balanced."""
    out = Assignment.build(holds)
    if probing is None:
        probing = not is_balanced(view, out)
    return Assignment.build(holds, probing_rebalance=probing)


def _current(view: RebalanceInput) -> dict:
    return {m.id: {"active": list(m.active), "standby": list(m.standby), "warmup": list(m.warmup)} for m in view.members}


def reference(view: RebalanceInput) -> Assignment:
    """Keeps every ``ha`` promise: the settled layout as is (a fixpoint candidate, or valid, caught
    up and balanced by some reading); else caught-up actives, owned stateless tasks kept, exactly
    the required standbys, no warmups, probing while unbalanced. Copies beyond the need (a settled
    layout's only fault) are dropped, every active kept (the owners are caught up)."""
    if premise_holds(view) and not extras_only(fixpoint_premise(view)):
        return _answer(view, _current(view), probing=False)
    staying = [m.id for m in view.members if not m.leaving] or list(view.member_ids)
    holds = {m: {"active": [], "standby": [], "warmup": []} for m in view.member_ids}
    load = {m: 0 for m in view.member_ids}

    def least_loaded(candidates):
        return min(candidates, key=lambda m: (m not in staying, Fraction(load[m] + 1, view.member(m).capacity), id_key(m)))

    for task in view.stateful_task_ids:
        ranks = {m: rank(view, m, task) for m in view.member_ids}
        best = [m for m in view.member_ids if ranks[m] == min(ranks.values())]
        owners = [m for m in view.owners(task) if m in best and m in staying]
        chosen = owners[0] if owners else least_loaded(best)
        holds[chosen]["active"].append(task)
        load[chosen] += 1
    for task in view.stateless_task_ids:
        owners = [m for m in view.owners(task) if m in staying]
        chosen = owners[0] if owners else least_loaded(staying)
        holds[chosen]["active"].append(task)
        load[chosen] += 1
    want = max(0, min(view.config.num_standby_replicas, len([m for m in view.members if not m.leaving]) - 1))
    for task in view.stateful_task_ids:
        others = [m for m in staying if task not in holds[m]["active"]]
        for m in sorted(others, key=lambda m: (rank(view, m, task), id_key(m)))[:want]:
            holds[m]["standby"].append(task)
    return _answer(view, holds)


# -- the broken ones ---------------------------------------------------------------------------
def _unsettled(view: RebalanceInput) -> dict | None:
    """The reference answer's roles, when ``fixpoint`` cannot be violated on the input (else None:
    a fixpoint candidate, or a layout balanced by some reading only, which may not be re-dealt)."""
    if premise_holds(view):
        return None
    return _roles(reference(view))


def _holds_any(holds: dict, member: str, task: str) -> bool:
    return any(task in holds[member][r] for r in ROLES)


def _extra(view: RebalanceInput, holds: dict) -> int:
    """Copies of stateful tasks beyond the active and min(num_standby_replicas, members - 1), by docs/DESIGN.md."""
    allowed = max(0, min(view.config.num_standby_replicas, len(view.members) - 1))
    return sum(max(0, sum(_holds_any(holds, m, t) for m in holds) - 1 - allowed) for t in view.stateful_task_ids)


def _best_rank(view: RebalanceInput, task: str, members) -> int | None:
    return min((rank(view, m, task) for m in members), default=None)


def duplicate_active(view: RebalanceInput) -> Assignment | None:
    """Gives one task a second active on another member (stateless first; a stateful one only
    on a most-caught-up member and within the warmup budget)."""
    holds = _unsettled(view)
    if holds is None:
        return None
    for task in view.stateless_task_ids + view.stateful_task_ids:
        stateful = view.task(task).stateful
        if stateful and _extra(view, holds) + 1 > view.config.max_warmup_replicas:
            continue
        best = _best_rank(view, task, view.member_ids)
        for m in view.member_ids:
            if _holds_any(holds, m, task) or (stateful and rank(view, m, task) != best):
                continue
            holds[m]["active"].append(task)
            return _answer(view, holds)
    return None


def colocated_standby(view: RebalanceInput) -> Assignment | None:
    """Adds a standby of a task on the member that has it active."""
    holds = _unsettled(view)
    if holds is None or not view.tasks:
        return None
    task = view.task_ids[0]
    holder = next(m for m in holds if task in holds[m]["active"])
    holds[holder]["standby"].append(task)
    return _answer(view, holds, probing=reference(view).probing_rebalance)


def too_many_warmups(view: RebalanceInput) -> Assignment | None:
    """Warms up copies until there is one more extra copy than max_warmup_replicas allows."""
    holds = _unsettled(view)
    if holds is None:
        return None
    free = [(t, m) for t in view.stateful_task_ids for m in view.member_ids if not _holds_any(holds, m, t)]
    for task, member in free:
        if _extra(view, holds) > view.config.max_warmup_replicas:
            break
        holds[member]["warmup"].append(task)
    if _extra(view, holds) <= view.config.max_warmup_replicas:
        return None
    return _answer(view, holds, probing=True)


def missing_standby(view: RebalanceInput) -> Assignment | None:
    """Drops one standby of the first stateful task that has one: the least caught up of them (so
    the standbys left are still the next-most-caught-up: only the count is wrong)."""
    holds = _unsettled(view)
    if holds is None:
        return None
    for task in view.stateful_task_ids:
        holders = [m for m in view.member_ids if task in holds[m]["standby"]]
        if holders:
            worst = max(holders, key=lambda m: (rank(view, m, task), view.member_ids.index(m)))
            holds[worst]["standby"].remove(task)
            return _answer(view, holds)
    return None


def lagging_active(view: RebalanceInput) -> Assignment | None:
    """Moves a stateful active to a member that is behind while a more caught-up one exists."""
    holds = _unsettled(view)
    if holds is None:
        return None
    staying = [m.id for m in view.members if not m.leaving]
    for task in view.stateful_task_ids:
        best, best_staying = _best_rank(view, task, view.member_ids), _best_rank(view, task, staying)
        holder = next(m for m in holds if task in holds[m]["active"])
        for m in view.member_ids:
            r = rank(view, m, task)
            if _holds_any(holds, m, task) or r == best or (m in staying and r == best_staying):
                continue
            holds[holder]["active"].remove(task)
            holds[m]["active"].append(task)
            # the holder keeps the task's standby in place of the least caught-up one, so the only
            # defect is the active: no new standby is left on a member less caught up than it
            standbys = sorted((x for x in holds if task in holds[x]["standby"]), key=lambda x: (rank(view, x, task), id_key(x)))
            if standbys:
                holds[standbys[-1]]["standby"].remove(task)
                holds[holder]["standby"].append(task)
            return _answer(view, holds)
    return None


def reshuffle(view: RebalanceInput) -> Assignment | None:
    """Changes a valid, balanced, caught-up current assignment: swaps an active with a caught-up
    standby (None when there is none: a probing rebalance alone is no change, KIP-441 "can stop")."""
    if fixpoint_premise(view):
        return None
    holds = _current(view)
    for task in view.stateful_task_ids:
        holder = next(m for m in holds if task in holds[m]["active"])
        for m in view.member_ids:
            if task in holds[m]["standby"] and is_caught_up(view, m, task):
                holds[holder]["active"].remove(task)
                holds[holder]["standby"].append(task)
                holds[m]["standby"].remove(task)
                holds[m]["active"].append(task)
                return _answer(view, holds)
    return None


def _as_balanced(view: RebalanceInput, kept: Assignment, moved: Assignment, task: str, owner: str, to: str) -> bool:
    """Keeping is at least as balanced as moving, on the actives, the task's subtopology and all
    copies, overall and between the two members involved, by every reading of "within one" with
    capacities (a move one reading calls needless another may need)."""
    k, m = measure_balance(view, kept), measure_balance(view, moved)
    sub = subtopology_of(task)
    caps = {x: view.member(x).capacity for x in (owner, to)}

    def pair(count):
        return all(reading({x: count(kept.of(x)) for x in (owner, to)}, caps) for reading in READINGS)

    k_by, m_by = counts_by_reading(view, kept, sub), counts_by_reading(view, moved, sub)
    return (
        pair(lambda a: len(a.active))
        and pair(lambda a: sum(1 for t in a.active if subtopology_of(t) == sub))
        and pair(lambda a: len(a.copies))
        and all(kept_ok or not moved_ok for k_r, m_r in zip(k_by, m_by) for kept_ok, moved_ok in zip(k_r, m_r))
        and (k.subtopology_within_one or not m.subtopology_within_one)
        and k.active_spread <= m.active_spread
        and dict(k.subtopology_spread)[sub] <= dict(m.subtopology_spread)[sub]
        and k.copies_spread <= m.copies_spread
    )


def needless_stateless_move(view: RebalanceInput) -> Assignment | None:
    """Moves a stateless task away from its staying owner where keeping it was as balanced, in a
    rebalance that changes nothing else (the ha rules excuse a stateless task packed afresh when
    the load changes: :func:`rebalproof.properties.stability.load_changes`)."""
    holds = _unsettled(view)
    if holds is None or load_changes(view, Assignment.build(holds)):
        return None
    kept = Assignment.build(holds)
    staying = [m.id for m in view.members if not m.leaving]
    for task in view.stateless_task_ids:
        owner = next((m for m in view.owners(task) if m in staying and task in holds[m]["active"]), None)
        if owner is None:
            continue
        for m in staying:
            if m == owner or _holds_any(holds, m, task):
                continue
            trial = {x: {r: list(v) for r, v in roles.items()} for x, roles in holds.items()}
            trial[owner]["active"].remove(task)
            trial[m]["active"].append(task)
            if _as_balanced(view, kept, Assignment.build(trial), task, owner, m):
                return _answer(view, trial)
    return None


def drops_task(view: RebalanceInput) -> Assignment | None:
    """Leaves the first task without an active copy."""
    holds = _unsettled(view)
    if holds is None or not view.tasks:
        return None
    task = view.task_ids[0]
    for m in holds:
        if task in holds[m]["active"]:
            holds[m]["active"].remove(task)
    return _answer(view, holds)


BROKEN: dict[str, tuple[Callable[[RebalanceInput], Assignment | None], str]] = {
    "duplicate_active": (duplicate_active, "one-active"),
    "colocated_standby": (colocated_standby, "no-colocation"),
    "too_many_warmups": (too_many_warmups, "warmup-bound"),
    "missing_standby": (missing_standby, "standby-count"),
    "lagging_active": (lagging_active, "caught-up-active"),
    "reshuffle": (reshuffle, "fixpoint"),
    "needless_stateless_move": (needless_stateless_move, "stable"),
    "drops_task": (drops_task, "one-active"),
}
"""Broken assignor name -> (assignor, the one property it breaks under the ``ha`` rules)."""
