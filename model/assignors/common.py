"""Shared placement helpers of the built-in assignors: capacity quotas, sticky placement, standbys.

Small pure functions, each deterministic (ties broken by natural id, :func:`~rebalproof.model.names.id_key`)
and never mutating what it is given:

- :func:`capacity_quotas` splits a number of tasks over members by capacity so that
  :func:`~rebalproof.model.balance.within_one` holds (the D'Hondt / Jefferson rule: every slot
  goes to the member whose next task costs least per thread), reproducing a current layout
  exactly when that layout is already balanced;
- :func:`place_within_quotas` gives each task a member within those quotas, trying tiers of
  preferred members (current owner, caught-up holder, ...) before falling back to room;
- :func:`place_standbys` adds standby copies of stateful tasks on members that hold no copy
  yet, preferring current standby holders and members with the most caught-up state
  (KIP-441 rank, :func:`~rebalproof.model.ranking.rank`), then the least loaded;
- :func:`per_thread` and :func:`thread_weights` compare loads per stream thread exactly.

Examples
--------
>>> capacity_quotas(5, {"S1": 1, "S2": 1, "S3": 1, "S4": 1}, current={"S1": 2, "S2": 2, "S3": 1})
{'S1': 2, 'S2': 1, 'S3': 1, 'S4': 1}
>>> quotas = {"S1": 1, "S2": 1}
>>> place_within_quotas(["T1", "T2"], quotas, [lambda t: ("S1",)])
{'T1': 'S1', 'T2': 'S2'}
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Collection, Iterable, Mapping, Sequence

from rebalproof.model.names import sorted_ids
from rebalproof.model.ranking import rank
from rebalproof.model.view import RebalanceInput

__all__ = ["per_thread", "thread_weights", "capacity_quotas", "place_within_quotas", "place_standbys"]


def per_thread(count: int, capacity: int) -> Fraction:
    """Load per stream thread, exact: ``count / capacity`` as a :class:`~fractions.Fraction`."""
    return Fraction(count, capacity)


def thread_weights(capacities: Mapping[str, int]) -> dict[str, int]:
    """Integer weights ``w`` with ``count * w[m]`` proportional to ``count / capacity[m]``.

    Comparing loads per thread through these weights is exact and much cheaper than with
    fractions: ``w[m] = lcm(all capacities) // capacity[m]``.

    >>> thread_weights({"I1": 1, "I2": 2, "I3": 3})
    {'I1': 6, 'I2': 3, 'I3': 2}
    """
    scale = math.lcm(*capacities.values()) if capacities else 1
    return {m: scale // c for m, c in capacities.items()}


def capacity_quotas(
    total: int,
    capacities: Mapping[str, int],
    *,
    current: Mapping[str, int] | None = None,
    start: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """Split ``total`` tasks over the members of ``capacities`` so that the load is within one.

    Parameters
    ----------
    total : int
        How many tasks to share out.
    capacities : mapping of str to int
        Member id to its capacity (stream threads, at least 1). Only these members get slots.
    current : mapping of str to int, optional
        How many of these tasks each member holds now. Among equally cheap slots, members still
        below their current count come first, so a layout that is already balanced is
        returned unchanged (stickiness; KIP-441 requirement 5).
    start : mapping of str to int, optional
        Tasks each member already has from elsewhere (for example stateful ones when sharing
        out stateless ones). They count towards the load but are not part of the answer.

    Returns
    -------
    dict of str to int
        Member id to its number of slots (``start`` not included), in id order; the values
        sum to ``total`` (0 when there are no members).

    Notes
    -----
    Each slot goes to the member minimising ``(held + 1) / capacity`` (D'Hondt). The result
    satisfies ``held_i / c_i <= (held_j + 1) / c_j`` for every pair, which is
    :func:`~rebalproof.model.balance.within_one`, whenever ``start`` allows it.

    Examples
    --------
    >>> capacity_quotas(3, {"I1": 1, "I2": 2})
    {'I1': 1, 'I2': 2}
    >>> capacity_quotas(2, {"I1": 1, "I2": 1}, start={"I1": 3})
    {'I1': 0, 'I2': 2}
    """
    members = sorted_ids(capacities)
    current = current or {}
    start = start or {}
    weight = thread_weights(capacities)
    given = {m: 0 for m in members}
    if not members:
        return given
    for _ in range(total):
        # members are in id order and min() keeps the first of equals: ties go to the lowest id
        best = min(
            members,
            key=lambda m: ((start.get(m, 0) + given[m] + 1) * weight[m], given[m] >= current.get(m, 0)),
        )
        given[best] += 1
    return given


def place_within_quotas(
    task_ids: Iterable[str],
    quotas: Mapping[str, int],
    tiers: Sequence[Callable[[str], Iterable[str]]],
    *,
    fallback: Callable[[str, str], object] | None = None,
) -> dict[str, str]:
    """Give every task one member, never more tasks to a member than its quota.

    Parameters
    ----------
    task_ids : iterable of str
        The tasks, placed in the order given (pass them sorted by id).
    quotas : mapping of str to int
        Member id to how many of these tasks it may take; only these members are used.
    tiers : sequence of callables
        ``tier(task)`` names preferred members, best first. Each tier is one pass over the
        tasks still unplaced: a task goes to the first member it names that has room left.
        Members not in ``quotas`` are skipped.
    fallback : callable, optional
        ``fallback(task, member)`` -> sort key among members with room for the tasks no tier
        placed (smaller first); by default the member with the most room left, ties by id.

    Returns
    -------
    dict of str to str
        Task id to member id, in task order. A task is left out only when the quotas sum to
        fewer slots than there are tasks.

    Examples
    --------
    >>> place_within_quotas(["T1", "T2", "T3"], {"A": 1, "B": 2}, [lambda t: ("A",)])
    {'T1': 'A', 'T2': 'B', 'T3': 'B'}
    """
    order = list(task_ids)
    members = sorted_ids(quotas)
    room = {m: quotas[m] for m in members}
    placed: dict[str, str] = {}
    for tier in tiers:
        for task in order:
            if task in placed:
                continue
            for member in tier(task):
                if room.get(member, 0) > 0:
                    placed[task] = member
                    room[member] -= 1
                    break
    for task in order:
        if task in placed:
            continue
        open_members = [m for m in members if room[m] > 0]  # id order: min() keeps the lowest id of equals
        if not open_members:
            continue
        if fallback is None:
            member = min(open_members, key=lambda m: -room[m])
        else:
            member = min(open_members, key=lambda m: fallback(task, m))
        placed[task] = member
        room[member] -= 1
    return {t: placed[t] for t in order if t in placed}


def place_standbys(
    view: RebalanceInput,
    holding: Mapping[str, Collection[str]],
    *,
    count: int,
    members: Iterable[str],
    last_resort: Collection[str] = (),
) -> dict[str, tuple[str, ...]]:
    """Standby copies for every stateful task, on members holding no copy of it yet.

    Parameters
    ----------
    view : RebalanceInput
        The leader's view (for current standbys, lags and capacities).
    holding : mapping of str to collection of str
        Member id to the tasks it already holds in this answer (actives, warmups): those
        members are not candidates for that task, and the copies count as their load.
    count : int
        Standbys wanted per stateful task (``num_standby_replicas``); each task gets
        ``min(count, candidates)``.
    members : iterable of str
        The members that may hold standbys.
    last_resort : collection of str, optional
        Members used only when no other candidate is left (for example leaving ones).

    Returns
    -------
    dict of str to tuple of str
        Member id to its standby task ids (sorted), for every member of ``members``.

    Notes
    -----
    Tasks are taken in id order; for each, candidates are ordered by: not a last resort,
    a current standby holder (a ``warmup`` going in is one too: labels do not count, Kafka's
    warmups are standbys), KIP-441 rank on the task (so a previous owner that just
    handed the task over, lag 0, comes early: seed 001 "Assign standby tasks ... to
    previous active task owners"), copies per thread so far, id. Stateless tasks get none.
    """
    members = sorted_ids(members)
    last = frozenset(last_resort)
    weight = thread_weights({m: view.member(m).capacity for m in members})
    load = {m: len(holding.get(m, ())) for m in members}
    out: dict[str, list[str]] = {m: [] for m in members}
    for task in view.stateful_task_ids:
        candidates = [m for m in members if task not in holding.get(m, ())]
        # candidates are in id order and the sort is stable: ties keep the lowest id first
        chosen = sorted(
            candidates,
            key=lambda m: (
                m in last,
                task not in view.member(m).standby and task not in view.member(m).warmup,
                rank(view, m, task),
                load[m] * weight[m],
            ),
        )[: max(0, count)]
        for m in chosen:
            out[m].append(task)
            load[m] += 1
    return {m: tuple(out[m]) for m in members}
