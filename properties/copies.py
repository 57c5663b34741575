"""Properties about the copies of each task: ``one-active``, ``no-colocation``, ``warmup-bound``,
``standby-count``.

These are the hard rules of KIP-441 ("Constraints and Cost Function", "Assignment Algorithm"
requirements 1-4) and of KIP-429's task assignment. Each check is a pure function
``(view, assignment) -> Verdict`` whose message names the tasks and instances.
See :mod:`rebalproof.properties.common` for who counts as the group and how copies are counted.

Examples
--------
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_1"),), members=(Member(id="I2"), Member(id="I3")))
>>> one_active(view, Assignment.build({"I2": {"active": ["0_1"]}, "I3": {"active": ["0_1"]}})).message
'task 0_1 is active on I2 and I3'
>>> no_colocation(view, Assignment.build({"I2": {"active": ["0_1"], "standby": ["0_1"]}})).message
'I2 holds 0_1 twice (active and standby)'
"""

from __future__ import annotations

from collections import Counter

from rebalproof.model.assignment import ROLES, Assignment
from rebalproof.model.names import id_key, sorted_ids
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.common import (
    extra_copies,
    holders_in_group,
    plural,
    replica_holders,
    required_standbys,
    standby_allowance,
    problems_verdict,
    times,
    words,
)
from rebalproof.properties.verdict import Status, Verdict

__all__ = ["one_active", "no_colocation", "warmup_bound", "warmup_bound_ha", "standby_count", "standby_count_learners"]


def one_active(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """Every task of the input has exactly one active copy, on a member of the group.

    "Exactly one" counts *members*: a member listing a task twice as active holds one active
    copy (the duplicate is ``no-colocation``'s business). An active copy on a member the input
    does not name, or of a task the input does not name, is a violation too. A leaving member
    is still a member: an active there is allowed (KIP-429 v2 keeps it until the learner is ready).
    """
    problems: list[str] = []
    tasks: list[str] = []
    members: list[str] = []
    for task_id in view.task_ids:
        holders = sorted_ids(set(assignment.actives_of(task_id)))
        strangers = [m for m in holders if not view.has_member(m)]
        if not holders:
            problems.append(f"task {task_id} has no active copy")
        elif len(holders) > 1:
            problems.append(f"task {task_id} is active on {words(holders)}")
        elif strangers:
            problems.append(f"task {task_id} is active on {strangers[0]}, which is not a member of the group")
        else:
            continue
        tasks.append(task_id)
        members.extend(holders)
    unknown = sorted({(t, m) for m, a in assignment.members for t in a.active if not view.has_task(t)}, key=lambda p: (id_key(p[0]), id_key(p[1])))
    for task_id, member in unknown:
        problems.append(f"{member} is given active task {task_id}, which is not a task of the input")
        tasks.append(task_id)
        members.append(member)
    return problems_verdict(
        "one-active", problems, tasks, members, f"each of the {plural(len(view.tasks), 'task')} has exactly one active copy"
    )


def no_colocation(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """No instance holds two copies of one task, in any roles (the same id twice in one list included).

    KIP-441 "Constraints": "A single instance (not thread) can only host one of those, either the
    active task or one of the standby tasks." Every member the answer names is checked.
    """
    problems: list[str] = []
    tasks: list[str] = []
    members: list[str] = []
    for member_id, roles in assignment.members:
        counts = Counter(roles.copies)
        for task_id in sorted_ids(t for t, n in counts.items() if n > 1):
            held = [r for r in ROLES for t in getattr(roles, r) if t == task_id]
            kinds = f"twice as {held[0]}" if len(set(held)) == 1 and len(held) == 2 else None
            if kinds:
                problems.append(f"{member_id} holds {task_id} {kinds}")
            else:
                problems.append(f"{member_id} holds {task_id} {times(len(held))} ({words(held)})")
            tasks.append(task_id)
            members.append(member_id)
    return problems_verdict("no-colocation", problems, tasks, members, "no instance holds two copies of a task")


def warmup_bound(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """Extra copies <= ``max_warmup_replicas`` (KIP-441 "max_warmup_replicas", requirement 3).

    An extra copy is any copy of a stateful task beyond its active and its allowed standbys,
    whatever the answer calls it (Kafka reports warmups as standbys): per task
    ``max(0, copies - 1 - min(num_standby_replicas, members - 1))`` with ``copies`` the distinct
    group members holding it in any role, summed over the stateful tasks. Role swaps cost
    nothing (a cold standby made by promoting a caught-up standby is not extra); a second active
    on another member is a copy like any other. Stateless tasks have no state to warm and are
    not counted. ``measure`` gives ``extra`` and ``max_warmup_replicas``.
    """
    return _warmup_bound(view, extra_copies(view, assignment))


def _listed(extras) -> str:
    return ", ".join(f"{task_id} on {words(members)}" for task_id, members in extras)


def _warmup_bound(view: RebalanceInput, extras) -> Verdict:
    """:func:`warmup_bound` on the extra copies already found (:func:`~rebalproof.properties.common.extra_copies`)."""
    total = sum(len(members) for _, members in extras)
    limit = view.config.max_warmup_replicas
    measure = {"extra": total, "max_warmup_replicas": limit, "standby_allowance": standby_allowance(view)}
    if total <= limit:
        return Verdict(
            property="warmup-bound",
            status=Status.HOLDS,
            message=f"{plural(total, 'extra copy')} <= max_warmup_replicas {limit}",
            measure=measure,
        )
    return Verdict(
        property="warmup-bound",
        status=Status.VIOLATED,
        message=f"{plural(total, 'extra copy')} ({_listed(extras)}) > max_warmup_replicas {limit}",
        tasks=tuple(task_id for task_id, _ in extras),
        members=sorted_ids({m for _, members in extras for m in members}),
        measure=measure,
    )


def warmup_bound_ha(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """``warmup-bound`` as the ha rules read it: within ``max_warmup_replicas``, and only while a
    probing rebalance is scheduled.

    KIP-441, "Iterative Balancing Assignments": extra replicas are assigned "to the destination
    instances" of a move, and "Once these extra replicas are caught up, a subsequent assignment
    will make that the active (or a permanent standby) and unassign one of the prior active or
    standby tasks"; ``max_warmup_replicas`` counts "extra replicas to assign for the purpose of
    moving a task". An answer with extra copies and no probing rebalance leaves them with no
    subsequent assignment to come: they serve no move. Judged only when no member is leaving
    (KIP-441 knows no leaving members: an assignor may keep a leaving member's copies while it
    hands them over, beside the new ones).
    """
    all_extras = extra_copies(view, assignment)
    verdict = _warmup_bound(view, all_extras)
    if verdict.violated or not all_extras or assignment.probing_rebalance or any(m.leaving for m in view.members):
        return verdict
    # a task with no or several actives is one-active's business
    extras = [(t, ms) for t, ms in all_extras if len(holders_in_group(view, assignment, t, "active")) == 1]
    extra = sum(len(ms) for _, ms in extras)
    if not extra:
        return verdict
    return Verdict(
        property="warmup-bound",
        status=Status.VIOLATED,
        message=(f"{plural(extra, 'extra copy')} ({_listed(extras)}) but no probing rebalance: an extra replica is for moving a task, "
                 "and with no subsequent assignment to come it is never made the active or a permanent standby"),
        tasks=tuple(task_id for task_id, _ in extras),
        members=sorted_ids({m for _, members in extras for m in members}),
        measure=dict(verdict.measure, probing_rebalance=False),
    )


def _standby_count(view: RebalanceInput, assignment: Assignment, noun: str) -> Verdict:
    need = required_standbys(view)
    problems: list[str] = []
    tasks: list[str] = []
    if need:
        for task_id in view.stateful_task_ids:
            replicas = sorted_ids(replica_holders(view, assignment, task_id))
            if len(replicas) < need:
                where = f" (on {words(replicas)})" if replicas else ""
                problems.append(f"task {task_id} has {plural(len(replicas), noun)}{where}, needs {need}")
                tasks.append(task_id)
    return problems_verdict(
        "standby-count",
        problems,
        tasks,
        [],
        f"each stateful task has at least {plural(need, noun)}",
        measure={"required": need},
    )


def standby_count(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """Each stateful task has at least ``min(num_standby_replicas, n - 1)`` standbys (KIP-441 requirement 2).

    ``n`` is the number of non-leaving members (a standby may still sit on a leaving member and
    counts). A standby is a copy beyond the active **by count**, in the ``standby`` or the
    ``warmup`` role, on a group member that does not also hold the task as active (a standby
    next to its active protects nothing): KIP-441 moves a task with "extra" standby replicas
    and Kafka reports its warmups as standbys, so the label decides nothing
    (:mod:`rebalproof.properties.common`, "Labels"). The moving copies KIP-441 says "don't count
    against the num.standby.replicas config" are those *beyond* the standbys: extra copies for
    ``warmup-bound``. More standbys than asked are allowed here.
    """
    return _standby_count(view, assignment, "standby")


def standby_count_learners(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """The ``learner`` reading of ``standby-count``: the same count, said with learners.

    KIP-429 "Standby Task Utilization": learner tasks go first to members holding a matching
    standby, so the standby *becomes* the learner, a replica restoring the same changelog;
    KIP-429 does not ask for another standby meanwhile (with ``members - 1`` standbys there is
    no room for one). Counted as :func:`standby_count`; only the message says "standby or learner".
    """
    return _standby_count(view, assignment, "standby or learner")
