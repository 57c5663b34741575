"""The fewest stateless moves an answer's load allows: the exact measure behind ``stable``.

KIP-441 "Assignment Algorithm", 6: "The algorithm should produce stable assignments. E.g., it
should try not to shuffle stateless tasks randomly among nodes." Stateless tasks have no state
to restore and no lag, so which of a subtopology's stateless tasks a member runs changes
nothing but stickiness; *how many* it runs is its load.

**The load kept** is, per member and per subtopology, the number of stateless actives the
answer gives it. Every balance figure of :func:`~rebalproof.model.balance.measure_balance`
(instance balance by capacity, subtopology spread, all copies) counts tasks per member and
per subtopology only, so any answer with the same stateful copies and the same stateless
load is exactly as balanced, and equal under every other property (stateless tasks have no
lag, standbys or warmups). Exchanges across subtopologies are not compared here: they change
the subtopology spread.

**The minimum** is a bipartite b-matching, solved per subtopology by augmenting paths: each
owned stateless task may stay on one of its current owners, each member ``m`` has as many
slots as stateless actives of that subtopology the answer gives it. The answer's own kept
tasks are a matching; augmenting it to a maximum one (an augmenting path never unmatches a
task) keeps every task the answer kept and adds exactly the tasks it moved without need.
With one owner per task this is the closed form ``sum_m min(slots_m, owned_m)``.

Which tasks count:

- a stateless task whose answer has exactly one active, on a group member (no active, or
  several, is ``one-active``'s business and is left out of both sides);
- it is *owned* when some current owner may keep it: a group member, not leaving (the
  caller decides; :func:`~rebalproof.properties.common.as_if_staying` gives the other
  reading), that the answer does not give the task in another role (that would co-locate).
  Tasks whose owner is gone or leaving are free: they fill slots but are never "moved".

Which needless moves are named is a reporting choice (augmenting paths in id order); their
number is not.

Examples
--------
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="1_0", stateful=False), Task(id="1_1", stateful=False)),
...     members=(Member(id="I1", active=("1_0",)), Member(id="I2", active=("1_1",))))
>>> swap = stateless_moves(view, Assignment.build({"I1": {"active": ["1_1"]}, "I2": {"active": ["1_0"]}}))
>>> swap.moved, swap.needed, [(m.task, m.owner, m.holder) for m in swap.needless]
(2, 0, [('1_0', 'I1', 'I2'), ('1_1', 'I2', 'I1')])
"""

from __future__ import annotations

from dataclasses import dataclass

from rebalproof.model.assignment import Assignment
from rebalproof.model.names import id_key, sorted_ids, subtopology_of
from rebalproof.model.view import RebalanceInput

__all__ = ["Move", "StatelessMoves", "stateless_moves"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Move:
    """Stateless ``task`` went from its current ``owner`` to ``holder`` in the answer."""

    task: str
    owner: str
    holder: str


@dataclass(frozen=True, kw_only=True, slots=True)
class StatelessMoves:
    """How many owned stateless tasks the answer moved, and how few its load needs.

    Attributes
    ----------
    owned : int
        Stateless tasks (with one active in the answer, on a group member) that a current
        owner could keep.
    moved : int
        Of those, the ones the answer gives to a member that is not a current owner.
    needed : int
        The fewest moves of any answer with the same stateful copies and the same number of
        stateless actives per member and subtopology (``needed <= moved``).
    needless : tuple of Move
        ``moved - needed`` moves that such an answer avoids, in task order.
    """

    owned: int
    moved: int
    needed: int
    needless: tuple[Move, ...]


def _single_holder(view: RebalanceInput, assignment: Assignment, task_id: str) -> str | None:
    holders = set(assignment.actives_of(task_id))
    if len(holders) != 1:
        return None
    (holder,) = holders
    return holder if view.has_member(holder) else None


def _keepers(view: RebalanceInput, assignment: Assignment, task_id: str) -> tuple[str, ...]:
    """Current owners that may keep ``task_id``: staying, and not given it in another role."""
    out = []
    for member in view.owners(task_id):
        if view.member(member).leaving:
            continue
        given = assignment.of(member)
        if task_id in given.standby or task_id in given.warmup:
            continue
        out.append(member)
    return sorted_ids(out)


def _augment(task: str, keepers: dict, slots: dict, match: dict, seen: set) -> bool:
    """Kuhn's augmenting path from ``task`` over member slots; ``match`` maps member -> its kept tasks."""
    for member in keepers[task]:
        if member in seen or slots.get(member, 0) == 0:
            continue
        seen.add(member)
        if len(match[member]) < slots[member]:
            match[member].append(task)
            return True
        for other in sorted(match[member], key=id_key):
            if _augment(other, keepers, slots, match, seen):
                match[member].remove(other)
                match[member].append(task)
                return True
    return False


def stateless_moves(view: RebalanceInput, assignment: Assignment) -> StatelessMoves:
    """Owned stateless tasks moved by ``assignment``, the fewest its load needs, and the needless moves (see module doc)."""
    by_sub: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {}
    for task_id in view.stateless_task_ids:
        holder = _single_holder(view, assignment, task_id)
        if holder is not None:
            by_sub.setdefault(subtopology_of(task_id), []).append((task_id, holder, _keepers(view, assignment, task_id)))
    owned = moved = needed = 0
    needless: list[Move] = []
    for sub in sorted_ids(by_sub):
        rows = by_sub[sub]
        slots: dict[str, int] = {}
        for _, holder, _ in rows:
            slots[holder] = slots.get(holder, 0) + 1
        keepers = {task: ks for task, _, ks in rows if ks}
        match: dict[str, list[str]] = {m: [] for m in view.member_ids}
        for task, holder, ks in rows:
            if holder in ks:
                match[holder].append(task)
        kept = {task for task, holder, ks in rows if holder in ks}
        for task, _, _ in rows:
            if task in keepers and task not in kept:
                _augment(task, keepers, slots, match, set())
        kept_at = {task: member for member, tasks in match.items() for task in tasks}
        for task, holder, ks in rows:
            if not ks:
                continue
            owned += 1
            if holder in ks:
                continue
            moved += 1
            if task in kept_at:
                needless.append(Move(task=task, owner=kept_at[task], holder=holder))
            else:
                needed += 1
    needless.sort(key=lambda m: id_key(m.task))
    return StatelessMoves(owned=owned, moved=moved, needed=needed, needless=tuple(needless))
