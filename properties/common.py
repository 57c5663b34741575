"""Small shared pieces of the per-assignment properties: who counts, how many standbys, words.

Abstraction choices stated once, here, and used by every property in this package:

- **The group** is the input's members (leaving ones included: a leaving member, KIP-429 v2,
  is still in the group until it is cut off). Copies an answer gives to a member the input
  does not name count nowhere except as a ``one-active`` violation (the oracle rejects such
  answers before any property runs: :func:`rebalproof.model.codec.check_ids`).
- **Copies of a task** are counted per member: a member listing a task twice holds *one*
  copy of it for ``warmup-bound`` and ``standby-count``; listing it twice is
  ``no-colocation``'s business alone.
- **Required standbys** of a stateful task are ``min(num_standby_replicas, n - 1)`` with ``n``
  the *non-leaving* members: what every assignor can give without relying on a member that is
  shutting down (:func:`required_standbys`). The allowance of ``warmup-bound`` is the larger
  ``min(num_standby_replicas, members - 1)`` over *all* members (:func:`standby_allowance`),
  so an assignor that treats a leaving member as an ordinary one is not charged for it.
  Without leaving members the two are equal.
- **Labels**: a copy beyond the active is a standby or an extra copy **by count**, whatever the
  answer (or the input) calls it: of a task's replicas (copies in the ``standby`` or ``warmup``
  role on members not holding it as active), the first ``min(num_standby_replicas, members - 1)``
  are its standbys and the rest are extra (:func:`split_replicas`). Kafka does not label
  warmups at all: KIP-441 (seed 002, "Iterative Balancing Assignments") moves a task by
  assigning "'extra' standby replicas to the destination instances", and Kafka's assignor
  reports them as standbys. Which replicas are the standbys matters only for naming (every
  check counts): the most caught up ones by KIP-441 rank, ties by id, since requirement 2
  puts standbys on "the next-most-caught-up instances" and a warmup goes to "an instance that
  has neither the active nor any standby replicas" (``max_warmup_replicas``), i.e. one further
  behind. Under the ``learner`` rules the same holds: KIP-429's learner "shares the same
  semantics as standby task" and every learner-promised check counts copies.
- **Leaving members** (KIP-429 v2's ``isLeaving``) are unknown to KIP-441 and to the baseline:
  an assignor may treat a leaving member as shutting down or as an ordinary member. Every
  property accepts either reading (here the counts above; in ``caught-up-active``, ``balanced``
  and ``stable`` the answer is judged under both and the better verdict stands, the message
  saying when leaving members were counted as ordinary ones — :func:`as_if_staying`).

Examples
--------
>>> words(["I1"]), words(["I1", "I2"]), words(["I1", "I2", "I3"])
('I1', 'I1 and I2', 'I1, I2 and I3')
>>> times(2), times(3)
('twice', '3 times')
>>> plural(1, "extra copy"), plural(2, "extra copy"), plural(0, "standby")
('1 extra copy', '2 extra copies', '0 standbys')
"""

from __future__ import annotations

from dataclasses import replace

from rebalproof.model.assignment import ROLES, Assignment
from rebalproof.model.names import id_key, sorted_ids
from rebalproof.model.ranking import is_caught_up, rank
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.verdict import Status, Verdict

__all__ = [
    "words",
    "times",
    "plural",
    "current_assignment",
    "holders_in_group",
    "required_standbys",
    "standby_allowance",
    "replica_holders",
    "split_replicas",
    "extra_copies",
    "staying_members",
    "as_if_staying",
    "problems_verdict",
]


def words(items) -> str:
    """``a``, ``a and b``, ``a, b and c``: a list as a sentence says it."""
    items = list(items)
    if not items:
        return "none"
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} and {items[-1]}"


def times(n: int) -> str:
    """``once``, ``twice``, ``3 times``."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


_PLURALS = {"copy": "copies", "extra copy": "extra copies", "standby or learner": "standbys or learners"}


def plural(n: int, noun: str) -> str:
    """``1 copy``, ``2 copies``, ``0 standbys``."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {_PLURALS.get(noun, noun + 's')}"


def current_assignment(view: RebalanceInput) -> Assignment:
    """What the members held going into the rebalance, as an :class:`Assignment` (no probing)."""
    return Assignment.build({m.id: {r: list(getattr(m, r)) for r in ROLES} for m in view.members})


def as_if_staying(view: RebalanceInput) -> RebalanceInput | None:
    """The view with every leaving member counted as an ordinary one; None when nobody is leaving."""
    if not any(m.leaving for m in view.members):
        return None
    return view.replace(members=tuple(replace(m, leaving=False) for m in view.members))


def shown_as_owner(view: RebalanceInput, member_id: str, task: str) -> bool:
    """The leader's view shows ``member_id`` as owning ``task``: reported active, or revoked at the join
    with caught-up state kept (in no role): KIP-429's owners revoke a task being learned at each join."""
    m = view.member(member_id)
    return task in m.active or (task not in m.copies and is_caught_up(view, member_id, task))


def treated_as_leaving(view: RebalanceInput) -> frozenset[str]:
    """The members marked leaving, or none when every member is: none is then "without intention
    of leaving" (KIP-429), and someone must run the tasks."""
    leaving = frozenset(m.id for m in view.members if m.leaving)
    return frozenset() if len(leaving) == len(view.members) else leaving


def staying_members(view: RebalanceInput) -> tuple[str, ...]:
    """The non-leaving members, in id order."""
    return tuple(m.id for m in view.members if not m.leaving)


def holders_in_group(view: RebalanceInput, assignment: Assignment, task_id: str, role: str | None = None) -> tuple[str, ...]:
    """Distinct group members holding ``task_id`` (in ``role``, or in any role), in id order."""
    roles = ROLES if role is None else (role,)
    found = {m for r in roles for m in assignment.holders(task_id, r) if view.has_member(m)}
    return sorted_ids(found)


def required_standbys(view: RebalanceInput) -> int:
    """``min(num_standby_replicas, n - 1)`` over the non-leaving members: what ``standby-count`` asks."""
    return max(0, min(view.config.num_standby_replicas, len(staying_members(view)) - 1))


def standby_allowance(view: RebalanceInput) -> int:
    """``min(num_standby_replicas, members - 1)`` over all members: the standbys ``warmup-bound`` forgives."""
    return max(0, min(view.config.num_standby_replicas, len(view.members) - 1))


def replica_holders(view: RebalanceInput, assignment: Assignment, task_id: str) -> tuple[str, ...]:
    """Group members holding ``task_id`` as a standby *or* a warmup and not as its active, most caught up first.

    The order is KIP-441's rank (:func:`~rebalproof.model.ranking.rank`), ties by id: the
    labels ``standby`` and ``warmup`` play no part (see the module doc, "Labels").
    """
    actives = set(holders_in_group(view, assignment, task_id, "active"))
    found = {m for role in ("standby", "warmup") for m in holders_in_group(view, assignment, task_id, role)} - actives
    return tuple(sorted(found, key=lambda m: (rank(view, m, task_id), id_key(m))))


def split_replicas(view: RebalanceInput, assignment: Assignment, task_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the standbys, the extra copies) among ``task_id``'s replicas, by count (module doc, "Labels").

    The first :func:`standby_allowance` replicas in :func:`replica_holders` order (the most caught
    up) are the standbys, the rest are extra; each part in id order.
    """
    ranked = replica_holders(view, assignment, task_id)
    allowance = standby_allowance(view)
    return sorted_ids(ranked[:allowance]), sorted_ids(ranked[allowance:])


def extra_copies(view: RebalanceInput, assignment: Assignment) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Per stateful task with extra copies: (task, the members whose copies are counted as extra).

    A task's extra copies number ``max(0, copies - 1 - standby_allowance)``, ``copies`` being the
    distinct group members holding it in any role. Which members are named is a reporting
    choice, the count is not, and labels play no part: the least caught-up replicas first
    (:func:`split_replicas`), then, when a task has several actives, actives from the last in
    id order.
    """
    allowance = standby_allowance(view)
    out = []
    for task_id in view.stateful_task_ids:
        holders = holders_in_group(view, assignment, task_id)
        extra = len(holders) - 1 - allowance
        if extra <= 0:
            continue
        named = list(reversed(replica_holders(view, assignment, task_id)))[:extra]
        for member in reversed(holders_in_group(view, assignment, task_id, "active")):
            if len(named) < extra and member not in named:
                named.append(member)
        out.append((task_id, sorted_ids(named)))
    return tuple(out)


def problems_verdict(name: str, problems: list[str], tasks, members, ok: str, measure: dict | None = None) -> Verdict:
    """``VIOLATED`` with the problems joined and the tasks and members they name, or ``HOLDS`` saying ``ok``."""
    if problems:
        return Verdict(
            property=name,
            status=Status.VIOLATED,
            message="; ".join(problems),
            tasks=sorted_ids(set(tasks)),
            members=sorted_ids(set(members)),
            measure=measure or {},
        )
    return Verdict(property=name, status=Status.HOLDS, message=ok, measure=measure or {})
