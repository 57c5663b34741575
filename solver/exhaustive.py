"""Tiny inputs: every layout of the actives, enumerated; the least by the objectives, proven by exhaustion.

Below a few thousand layouts, building flow networks and Z3 solvers costs more than looking at
every layout. The reduction is the one :mod:`rebalproof.solver.placement` proves: every
objective is a function of where the actives go (``restore`` is a constant plus one per cold
active of a task with a caught-up member left over, ``warmups`` is 0 at the optimum), so the
lexicographic optimum over the actives' hosts (:attr:`rebalproof.solver.rules.Facts.active_hosts`)
is the optimum. The proof of each value is the enumeration itself: all ``count`` layouts were
scored and none is lexicographically better.

Examples
--------
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> from rebalproof.solver.rules import Facts
>>> view = RebalanceInput(tasks=(Task(id="0_0"), Task(id="0_1")), members=(Member(id="I1", active=("0_0", "0_1")), Member(id="I2")))
>>> facts = Facts(view, "sticky")
>>> host, key, count = least_layout(view, facts, penalty={"0_0": frozenset(), "0_1": frozenset()})
>>> key, count
((0, 0, 1, 0), 4)
"""

from __future__ import annotations

import itertools

from rebalproof.model.names import subtopology_of
from rebalproof.solver.objectives import imbalance

__all__ = ["LIMIT", "layouts", "least_layout"]

LIMIT = 4096
"""The most layouts enumerated; above it the flow engine is faster."""


def layouts(facts) -> int:
    """How many layouts of the actives the rules allow (the product of each task's host count)."""
    count = 1
    for hosts in facts.active_hosts.values():
        count *= len(hosts)
        if count > LIMIT:
            return count
    return count


def least_layout(view, facts, *, penalty: dict):
    """The lexicographically least ``(imbalance, spread, moves, cold actives)`` over every layout.

    ``penalty``: task -> the hosts where its active adds 1 to ``restore``. Returns
    ``(host, key, count)``: task -> member, its key and how many layouts were scored.
    """
    tasks = list(view.task_ids)
    staying = list(facts.staying)
    caps = {m: view.member(m).capacity for m in staying}
    equal = len(set(caps.values())) <= 1
    index = {m: i for i, m in enumerate(staying)}
    subs = sorted({subtopology_of(t) for t in tasks})
    sub_of = [subs.index(subtopology_of(t)) for t in tasks]
    owner = [facts.owner.get(t) for t in tasks]
    options = [facts.active_hosts[t] for t in tasks]

    def spread_of(counts):
        if len(counts) < 2:
            return 0
        if equal:
            return max(counts) - min(counts)
        return imbalance(dict(zip(staying, counts)), caps)

    best, best_key, count = None, None, 0
    for combo in itertools.product(*options):
        count += 1
        total = [0] * len(staying)
        per_sub = [[0] * len(staying) for _ in subs]
        moves = cold = 0
        for i, m in enumerate(combo):
            j = index.get(m)
            if j is not None:
                total[j] += 1
                per_sub[sub_of[i]][j] += 1
            if owner[i] is not None and owner[i] != m:
                moves += 1
            if m in penalty[tasks[i]]:
                cold += 1
        key = (spread_of(total), sum(spread_of(c) for c in per_sub), moves, cold)
        if best_key is None or key < best_key:
            best, best_key = combo, key
    return dict(zip(tasks, best)), best_key, count
