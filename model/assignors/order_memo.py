"""Answers of an id-order-blind assignor memoised by the view with its member ids renamed by rank.

An assignor that uses member ids only to order them (ties broken by natural id, as ``ha`` does:
"Ties are broken by natural id") gives, on a view whose ids are renamed keeping their order,
the answer renamed alike. The group model asks such an assignor about many views that differ
only so (``{I1, I2, I4}`` after ``I3`` left, ``{I1, I2, I3}`` before ``I4`` joined): with
:class:`OrderMemo` each *shape* (member ids replaced by ``I1 .. In`` in natural order) is
computed once and every view of that shape gets the answer renamed back. ``check --partitions
3`` (cooperative + ``ha``) asks 17,041 views of 10,435 shapes.

Only for an assignor of this package whose code compares ids and nothing else (``ha``); an
implementation under test (``py:``, ``exec:``) is always asked about the view itself.
``tests/test_fast_core.py`` checks the premise: on every view of several explorations the
memoised answer is the direct one. Ids whose plain string order and natural order disagree
(``I2``/``I10``) are never renamed (no renaming keeps both orders).

Examples
--------
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> calls = []
>>> def first_gets_all(view):
...     calls.append(view.member_ids)
...     from rebalproof.model.assignment import Assignment
...     return Assignment.build({view.member_ids[0]: {"active": list(view.task_ids)}})
>>> memo = OrderMemo(first_gets_all)
>>> tasks = (Task(id="0_0"),)
>>> memo(RebalanceInput(tasks=tasks, members=(Member(id="I2"), Member(id="I4")))).of("I2").active
('0_0',)
>>> memo(RebalanceInput(tasks=tasks, members=(Member(id="I1"), Member(id="I3")))).of("I1").active
('0_0',)
>>> calls
[('I1', 'I2')]
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from rebalproof.model.assignment import Assignment
from rebalproof.model.names import id_key
from rebalproof.model.view import RebalanceInput

__all__ = ["OrderMemo"]


class OrderMemo:
    """``assign`` with its answers memoised by shape (see the module docstring); picklable, the
    memo dropped (a Spark worker starts with none). At most ``limit`` shapes are kept, then the
    memo starts afresh."""

    def __init__(self, assign: Callable[[RebalanceInput], Assignment], *, limit: int = 1 << 16):
        self.assign = assign
        self.limit = limit
        self._memo: dict = {}
        #: views answered from the memo / by the assignor
        self.hits = 0
        self.misses = 0

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_memo"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __call__(self, view: RebalanceInput) -> Assignment:
        ids = {m.id for m in view.members}
        if view.previous_members:
            ids.update(view.previous_members)
        natural = sorted(ids, key=id_key)
        if natural != sorted(ids):
            return self.assign(view)
        width = len(str(len(natural)))
        canon = {m: f"I{i + 1:0{width}d}" for i, m in enumerate(natural)}
        key = (
            view.config,
            view.tasks,
            tuple((canon[m.id], m.capacity, m.leaving, m.active, m.standby, m.warmup, m.lags) for m in view.members),
            None if view.previous_members is None else tuple(canon[m] for m in view.previous_members),
        )
        answer = self._memo.get(key)
        if answer is None:
            self.misses += 1
            shaped = RebalanceInput(
                config=view.config,
                tasks=view.tasks,
                members=tuple(replace(m, id=canon[m.id]) for m in view.members),
                previous_members=key[3],
            )
            answer = self.assign(shaped)
            if not isinstance(answer, Assignment):
                return answer  # not an answer to rename: the chooser reports it as it is
            if len(self._memo) >= self.limit:
                self._memo.clear()
            self._memo[key] = answer
        else:
            self.hits += 1
        back = {c: m for m, c in canon.items()}
        if any(c not in back for c, _ in answer.members):
            return self.assign(view)  # it named a member the view does not have: ask about the view itself
        return Assignment(members=tuple((back[c], x) for c, x in answer.members), probing_rebalance=answer.probing_rebalance)
