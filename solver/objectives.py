"""The lexicographic objectives of an assignment, defined once and evaluated in plain Python.

In order of priority (the first is minimised first, each next one among the optima of those
before it):

``imbalance``
    Instance balance of the actives by capacity, over the staying (non-leaving) members, as
    :mod:`rebalproof.model.balance` counts them: with ``n_m`` actives and ``c_m`` threads,
    ``max over i, j of ceil(n_i * c_j / c_i) - n_j`` (at least 0) -- how many tasks member
    ``j`` lacks against the busiest member's load scaled to ``j``'s threads. ``imbalance <= 1``
    exactly when :func:`~rebalproof.model.balance.within_one` holds; with equal capacities it is
    ``max - min``. Equivalently the least ``K`` with some level ``lam`` such that
    ``lam * c_m - K <= n_m <= lam * c_m`` for every member (take ``lam`` the top load).
``spread``
    Subtopology spread: the sum over subtopologies of the same measure applied to that
    subtopology's actives (KIP-441 "data parallel workload balance"). Every term ``<= 1``
    exactly when the subtopology half of :func:`~rebalproof.model.balance.is_balanced` holds.
``moves``
    Actives moved: tasks whose active is on another member than its previous owner, counted
    only when that owner is still a staying member (a task whose owner left, is leaving or
    never existed may go anywhere for free).
``restore``
    Restore cost: copies of stateful tasks (active, standby or warmup) on a member that is not
    caught up on the task (lag above ``acceptable_recovery_lag``, or no local state) -- each has
    to replay its changelog before it is of use (KIP-441 "replay time").
``warmups``
    Warmups used: copies of stateful tasks beyond the active and the required standbys,
    ``max(0, copies - 1 - min(num_standby_replicas, staying - 1))`` summed over the tasks.

Standby placement beyond ``restore`` (which members hold the standbys) is not an objective:
KIP-441 balances actives. Optimal answers spread standbys over the least loaded members as a
documented tie-break, without a claim of optimality.

Examples
--------
>>> imbalance({"I1": 3, "I2": 1}, {"I1": 1, "I2": 1})
2
>>> imbalance({"I1": 4, "I2": 2}, {"I1": 2, "I2": 1})
0
>>> imbalance({"I1": 1, "I2": 0}, {"I1": 1, "I2": 2})
2
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from rebalproof.model.assignment import Assignment
from rebalproof.model.names import subtopology_of
from rebalproof.model.ranking import is_caught_up
from rebalproof.model.view import RebalanceInput

__all__ = ["OBJECTIVES", "DEFINITIONS", "Values", "imbalance", "evaluate"]

OBJECTIVES = ("imbalance", "spread", "moves", "restore", "warmups")
"""Objective names, most important first."""

DEFINITIONS = {
    "imbalance": "instance balance of the actives by capacity: max over staying i, j of ceil(n_i*c_j/c_i) - n_j (max - min with equal capacities; <= 1 iff within one)",
    "spread": "sum over subtopologies of the same measure on that subtopology's actives",
    "moves": "actives not on their previous owner, counted when that owner is a staying member",
    "restore": "stateful copies (any role) on a member not caught up on the task",
    "warmups": "stateful copies beyond the active and the required standbys",
}


def imbalance(counts: dict[str, int], capacities: dict[str, int]) -> int:
    """``max over i, j of ceil(n_i * c_j / c_i) - n_j``, at least 0 (0 for fewer than two members)."""
    if not counts:
        return 0
    top = max(Fraction(counts[m], capacities[m]) for m in counts)
    return max(0, max(math.ceil(top * capacities[m]) - counts[m] for m in counts))


@dataclass(frozen=True)
class Values:
    """Objective values of one assignment, in :data:`OBJECTIVES` order."""

    imbalance: int
    spread: int
    moves: int
    restore: int
    warmups: int

    def as_tuple(self) -> tuple[int, ...]:
        return tuple(getattr(self, n) for n in OBJECTIVES)

    def as_dict(self) -> dict[str, int]:
        return {n: getattr(self, n) for n in OBJECTIVES}


def evaluate(view: RebalanceInput, assignment: Assignment, facts) -> Values:
    """The objective values of ``assignment`` (``facts``: :class:`rebalproof.solver.rules.Facts`)."""
    caps = {m: view.member(m).capacity for m in facts.staying}
    counts = {m: 0 for m in facts.staying}
    per_sub: dict[str, dict[str, int]] = {}
    for t in view.task_ids:
        per_sub.setdefault(subtopology_of(t), {m: 0 for m in facts.staying})
    copies: dict[str, set] = {t: set() for t in view.task_ids}
    moves = restore = 0
    for m, a in assignment.members:
        if not view.has_member(m):
            continue
        for t in dict.fromkeys(a.active):  # a task listed twice is one copy, as balance counts it
            if not view.has_task(t):
                continue
            if m in counts:
                counts[m] += 1
                per_sub[subtopology_of(t)][m] += 1
        for t in a.copies:
            if view.has_task(t):
                copies[t].add(m)
    for t, owner in facts.owner.items():
        if owner not in assignment.actives_of(t):
            moves += 1
    warmups = 0
    for t in view.stateful_task_ids:
        restore += sum(1 for m in copies[t] if not is_caught_up(view, m, t))
        warmups += max(0, len(copies[t]) - 1 - facts.required)
    return Values(
        imbalance=imbalance(counts, caps),
        spread=sum(imbalance(c, caps) for c in per_sub.values()),
        moves=moves,
        restore=restore,
        warmups=warmups,
    )
