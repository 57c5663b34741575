"""``fixpoint`` and ``stable``: KIP-441 "Assignment Algorithm" requirements 5 and 6.

5. "The algorithm must converge: if the current assignment is already balanced, it must not
   alter the assignment." — :func:`fixpoint`.
6. "The algorithm should produce stable assignments. E.g., it should try not to shuffle
   stateless tasks randomly among nodes." — :func:`stable`.

Both are conditional, so both say in ``Verdict.measure`` whether their premise held
(``premise: true/false``) and a vacuous pass reads "premise not met: ..." — a test can demand
a witness where the premise holds (STYLE: every ``always`` has a ``sometimes``).

Examples
--------
>>> from rebalproof.model.assignment import Assignment
>>> from rebalproof.model.view import Member, RebalanceInput, Task
>>> view = RebalanceInput(tasks=(Task(id="0_0"), Task(id="0_1")),
...     members=(Member(id="I1", active=("0_0",)), Member(id="I2", active=("0_1",))))
>>> fixpoint(view, Assignment.build({"I1": {"active": ["0_1"]}, "I2": {"active": ["0_0"]}})).message
'the current assignment is valid, balanced and caught up, but the answer changes it: I1 gains active 0_1, loses active 0_0; I2 gains active 0_0, loses active 0_1'
"""

from __future__ import annotations

from rebalproof.model.assignment import Assignment, MemberAssignment
from rebalproof.model.balance import (
    READINGS, balance_signature, balanced_every_way, copies_balanced_every_way, copies_by_member, copies_evened, counts_by_reading,
    measure_balance,
)
from rebalproof.model.names import id_key, sorted_ids, subtopology_of
from rebalproof.model.ranking import is_caught_up, lag_of, rank
from rebalproof.model.view import RebalanceInput
from rebalproof.properties.common import as_if_staying, current_assignment, extra_copies, plural, replica_holders, words
from rebalproof.properties.copies import no_colocation, one_active, standby_count
from rebalproof.properties.lag import rank_text
from rebalproof.properties.stateless_moves import stateless_moves
from rebalproof.properties.sticky_moves import needless_exchanges
from rebalproof.properties.verdict import Status, Verdict

__all__ = ["fixpoint_premise", "premise_holds", "balanced_some_way_only", "extras_only", "unserved_moves", "same_copies", "same_actives", "fixpoint_pins_copies", "fixpoint", "stable", "stable_settled", "stable_sticky", "load_changes"]

_MAX_LISTED = 6


_NOT_BALANCED = "not balanced"
_EXTRA = "extra copies of "
_BEYOND = "copies beyond the active"
_NOT_EVERY_WAY = "balanced by one reading of balance with capacities but not by every reading (an assignor may aim at another)"


def fixpoint_premise(view: RebalanceInput) -> tuple[str, ...]:
    """Why the input's current assignment is *not* a fixpoint candidate; empty when it is.

    The current assignment (the members' ``active``/``standby``/``warmup`` lists) is a candidate
    when it is valid — every task exactly one active (``one-active``), no two copies on one
    member (``no-colocation``), enough standbys (``standby-count``) and no extra copies, all
    counted whatever the copies are called (a ``warmup`` within the standby allowance is a
    standby: :mod:`rebalproof.properties.common`, "Labels"), and no copy of a stateless task
    beyond its active (nothing to restore, so no purpose) — balanced by every reading of "within
    one" with capacities (:func:`~rebalproof.model.balance.balanced_every_way`: an implementation
    aiming at another reading than the first may rightly change a layout only the first calls
    balanced), every stateful active is
    caught up (lag <= ``acceptable_recovery_lag``, so it is most caught up in every sense), no
    replica is on a member ranked worse than one holding no copy of its task, caught up or only
    less behind (requirement 2, "must assign standby tasks to the next-most-caught-up
    instances", ranks above 5: :func:`_standby_outranked`), and no
    member is leaving (KIP-441 knows no leaving members; a leaving member must be emptied, so
    its assignment cannot be final).
    """
    reasons: list[str] = []
    leaving = [m.id for m in view.members if m.leaving]
    if leaving:
        reasons.append(f"{words(leaving)} {'is' if len(leaving) == 1 else 'are'} leaving")
    current = current_assignment(view)
    for check in (one_active, no_colocation, standby_count):
        verdict = check(view, current)
        if verdict.violated:
            reasons.append(f"not valid: {verdict.message}")
    extras = extra_copies(view, current)
    if extras:
        reasons.append(f"{_EXTRA}{words([t for t, _ in extras])}")
    idle = [t for t in view.stateless_task_ids if replica_holders(view, current, t)]
    if idle:
        reasons.append(f"stateless {words(idle)} {'has' if len(idle) == 1 else 'have'} {_BEYOND}")
    report = measure_balance(view, current)
    if not report.balanced:
        reasons.append(_NOT_BALANCED)
    elif not balanced_every_way(view, current):
        reasons.append(_NOT_EVERY_WAY)
    for task_id in view.stateful_task_ids:
        for member in view.owners(task_id):
            if not is_caught_up(view, member, task_id):
                reasons.append(f"active {task_id} on {member} is not caught up (lag {lag_of(view, member, task_id)})")
    for task_id in view.stateful_task_ids:  # requirement 2 ranks above 5: a standby may move to a better-ranked member
        reason = _standby_outranked(view, current, task_id)
        if reason:
            reasons.append(reason)
    return tuple(reasons)


def _standby_outranked(view: RebalanceInput, current: Assignment, task_id: str) -> str | None:
    """Why the replicas of ``task_id`` are not on its next-most-caught-up members, or None.

    Seed 002, requirement 2: "the algorithm must assign standby tasks to the next-most-caught-up
    instances", ranks being the lags beyond ``acceptable_recovery_lag`` ("Lower is more caught
    up"): a replica on a member ranked worse than some member that holds no copy may move there,
    whether that member is caught up or only less behind (red team 4: five independent assignors
    moved a standby at lag 30000 to a member with state at lag 20000, and ``fixpoint`` called it
    a needless change of a settled layout)."""
    holders = replica_holders(view, current, task_id)
    if not holders:
        return None
    ranks = {m: rank(view, m, task_id) for m in holders}
    idle = {m.id: rank(view, m.id, task_id) for m in view.members if task_id not in m.copies}
    best = min(idle.values(), default=None)
    if best is None or max(ranks.values()) <= best:
        return None
    behind = [m for m in holders if ranks[m] > best]
    better = [m for m, r in idle.items() if r == best]
    how = "caught up" if best == 0 else f"less behind ({rank_text(best)})"
    return (f"the standby of {task_id} on {words(behind)} is behind while {words(better)}, {how}, "
            f"{'holds' if len(better) == 1 else 'hold'} no copy")


def balanced_some_way_only(view: RebalanceInput, reasons: tuple[str, ...]) -> bool:
    """Whether the only ``reasons`` (:func:`fixpoint_premise`'s) against the current assignment are
    that it is not balanced by every reading of "within one" with capacities, though by some.

    Then an implementation aiming at another reading may rebalance it, but an answer with the same
    :func:`~rebalproof.model.balance.balance_signature` is no better balanced by any reading: the
    change is one requirement 5 forbids by the reading that calls the layout balanced and that
    no reading asks for (red team 7: every active traded with its standby, counts unchanged).
    """
    return _balance_reasons_only(reasons) and measure_balance(view, current_assignment(view)).balanced_either


def _balance_reasons_only(reasons: tuple[str, ...]) -> bool:
    return bool(reasons) and all(r in (_NOT_BALANCED, _NOT_EVERY_WAY) for r in reasons)


def extras_only(reasons: tuple[str, ...]) -> bool:
    """Whether the only ``reasons`` (:func:`fixpoint_premise`'s) against the current assignment are
    copies beyond what it needs: extra copies of stateful tasks (a warmup, a copy a former owner
    keeps a while) or copies of stateless tasks beyond their active.

    Then the answer may drop those copies, and a stateful task's extra copy may serve a move of
    its active ("Once these extra replicas are caught up, a subsequent assignment will make that
    the active (or a permanent standby) and unassign one of the prior active or standby tasks",
    seed 002), but every other active stays: the layout is balanced by every reading and caught
    up, and no copy serves another move (red team 8: a copy a former owner kept for one more
    probing rebalance, or a standby of a stateless task, let every active be re-dealt)."""
    return bool(reasons) and all(r.startswith(_EXTRA) or r.endswith(_BEYOND) for r in reasons)


def unserved_moves(view: RebalanceInput, assignment: Assignment) -> list[str]:
    """The tasks whose actives ``assignment`` moves though no extra copy of theirs serves the move:
    every task but the stateful ones with an extra copy in the current assignment
    (:func:`~rebalproof.properties.common.extra_copies`), in id order."""
    current = current_assignment(view)
    served = {t for t, _ in extra_copies(view, current)}
    return [t for t in view.task_ids if t not in served and set(current.actives_of(t)) != set(assignment.actives_of(t))]


def premise_holds(view: RebalanceInput) -> bool:
    """Whether ``fixpoint`` can be violated on ``view``: its premise holds (``not
    fixpoint_premise(view)``) or the current assignment is balanced some way only
    (:func:`balanced_some_way_only`). Asks the cheapest questions first and stops at the first no.

    The run's judge (:mod:`rebalproof.properties.run_rebalance`) asks it of every answer it
    judges and keeps only the status: where it is false ``fixpoint`` holds vacuously and
    its reasons are not needed. Leaving members and lagging actives are read off the view; a
    current assignment balanced by no reading is the next most common reason; only a view that
    passes those is given to :func:`fixpoint_premise` whole, so the answer is the same by
    construction.
    """
    if any(m.leaving for m in view.members):
        return False
    for task_id in view.stateful_task_ids:
        if not all(is_caught_up(view, member, task_id) for member in view.owners(task_id)):
            return False
    if not measure_balance(view, current_assignment(view)).balanced_either:
        return False
    reasons = fixpoint_premise(view)
    return not reasons or _balance_reasons_only(reasons) or extras_only(reasons)  # balanced some way: asked above


def _shape(held: MemberAssignment) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A member's actives and its replicas (standby and warmup alike), duplicates kept."""
    return held.active, tuple(sorted(held.standby + held.warmup, key=id_key))


def same_copies(before: Assignment, after: Assignment) -> bool:
    """Equal member by member up to the standby/warmup label, ignoring members with nothing and probing.

    :meth:`~rebalproof.model.assignment.Assignment.same_layout` with the labels of the copies
    beyond the active set aside (:mod:`rebalproof.properties.common`, "Labels").
    """
    def shapes(a):
        return {m: _shape(x) for m, x in a.members if x.copies}
    return shapes(before) == shapes(after)


def same_actives(before: Assignment, after: Assignment) -> bool:
    """The actives equal member by member (duplicates kept, members with none aside); replicas aside."""
    def actives(a):
        return {m: _held(x, True) for m, x in a.members if x.active}
    return actives(before) == actives(after)


def _held(held: MemberAssignment, actives_only: bool):
    """What :func:`fixpoint` compares of one member: its actives (sorted, duplicates kept), or its shape."""
    return tuple(sorted(held.active, key=id_key)) if actives_only else _shape(held)


def _tasks(held: MemberAssignment, actives_only: bool) -> set[str]:
    """The tasks of one member :func:`fixpoint` names when it changed: its actives, or every copy."""
    return set(held.active) if actives_only else set(held.copies)


def fixpoint_pins_copies(view: RebalanceInput) -> bool:
    """Whether ``fixpoint`` pins every copy of the current assignment, or only its actives.

    Every copy when all copies (active, standby and warmup alike) are within one by every reading
    of "within one" (:func:`~rebalproof.model.balance.copies_balanced_every_way`). Otherwise an
    implementation that counts standbys in its balance, as KIP-441 lets it ("Note that "balance"
    in this KIP, as today, is purely a function of task distribution over the instances": the
    Streams assignor of that day counted every assigned task, and Kafka's sticky assignors still
    do), does not call the layout balanced and may move replicas to even it out; the actives,
    balanced by every reading, stay pinned.
    """
    return copies_balanced_every_way(view, current_assignment(view))


def _changes(before: Assignment, after: Assignment, members, *, actives_only: bool = False) -> list[str]:
    """What each member gains and loses; a replica is named by the label it has where it is."""
    out = []
    for member in members:
        a, b = before.of(member), after.of(member)
        parts = []
        gained = sorted_ids(set(b.active) - set(a.active))
        lost = sorted_ids(set(a.active) - set(b.active))
        if gained:
            parts.append(f"gains active {words(gained)}")
        if lost:
            parts.append(f"loses active {words(lost)}")
        kept_before, kept_after = set(a.standby + a.warmup), set(b.standby + b.warmup)
        for role in () if actives_only else ("standby", "warmup"):
            gained = sorted_ids(set(getattr(b, role)) - kept_before)
            lost = sorted_ids(set(getattr(a, role)) - kept_after)
            if gained:
                parts.append(f"gains {role} {words(gained)}")
            if lost:
                parts.append(f"loses {role} {words(lost)}")
        if not parts and _held(a, actives_only) != _held(b, actives_only):
            parts.append("lists a task twice")
        if parts:
            out.append(f"{member} {', '.join(parts)}")
    return out


def _copies_said(view: RebalanceInput, assignment: Assignment) -> str:
    """All copies per non-leaving member in id order: ``4, 3, 1``."""
    held = copies_by_member(view, assignment)
    return ", ".join(str(held[m]) for m in sorted_ids(held))


#: why replicas may move where ``fixpoint`` pins only the actives
_UNEVEN_COPIES = "all copies, standbys counted, are not within one by every reading"


def fixpoint(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """A valid, balanced, caught-up current assignment comes back unchanged.

    When :func:`fixpoint_premise` finds no reason against the current assignment, the answer must
    have the same copies (:func:`same_copies`: equal member by member, members with nothing
    aside, a standby and a warmup alike), or, where all copies are not within one by every
    reading (:func:`fixpoint_pins_copies`), the same actives (:func:`same_actives`). Otherwise
    the property holds vacuously, with ``measure["premise"]`` false and the reasons in the
    message. A probing rebalance asked for
    is no change of the assignment: "once the leader makes a balanced assignment, it *can* stop
    performing probing rebalances" (KIP-441 "Probing Rebalances") allows, it does not order;
    probing for ever is ``converges``' business (the group never settles).
    """
    reasons = fixpoint_premise(view)
    if reasons and balanced_some_way_only(view, reasons):
        current = current_assignment(view)
        if not same_copies(current, assignment) and balance_signature(view, current) == balance_signature(view, assignment):
            shown, touched, tasks = _what_changed(current, assignment, actives_only=False)
            return _pinned_violation(
                "counts", tasks, touched,
                f"the current assignment is valid, caught up and balanced by some reading of balance with capacities, "
                f"not every one, but the answer changes it keeping every count balance reads (no reading calls it "
                f"better balanced): {shown}")
    if reasons and extras_only(reasons):
        moved = unserved_moves(view, assignment)
        if moved:
            current = current_assignment(view)
            shown, touched, _ = _what_changed(current, assignment, actives_only=True)
            return _pinned_violation(
                "actives without extra copies", tuple(moved), touched,
                f"the current assignment is valid, balanced and caught up but for {'; '.join(reasons)}, "
                f"and the answer moves {'an active' if len(moved) == 1 else 'actives'} no extra copy serves "
                f"({words(moved)}): {shown}")
    if reasons:
        return Verdict(
            property="fixpoint",
            status=Status.HOLDS,
            message=f"premise not met: {'; '.join(reasons)}",
            measure={"premise": False},
        )
    current = current_assignment(view)
    pins_copies = fixpoint_pins_copies(view)
    measure = {"premise": True, "pinned": "copies" if pins_copies else "actives"}
    if same_copies(current, assignment):
        return Verdict(property="fixpoint", status=Status.HOLDS, measure=measure,
                       message="the valid, balanced, caught-up current assignment is returned unchanged")
    actives_kept = not pins_copies and same_actives(current, assignment)
    if actives_kept and copies_evened(view, current, assignment):
        return Verdict(property="fixpoint", status=Status.HOLDS, measure=measure,
                       message=f"the valid, balanced, caught-up current assignment keeps its actives ({_UNEVEN_COPIES}, and the replicas moved even them out)")
    actives_only = not pins_copies and not actives_kept  # an active moved: the actives are what is named
    shown, touched, tasks = _what_changed(current, assignment, actives_only=actives_only)
    aside = f" ({_UNEVEN_COPIES}, so an assignor balancing them may move replicas, not actives)" if actives_only else ""
    what = (f"moves replicas without evening out all copies (standbys counted: {_copies_said(view, current)} before, "
            f"{_copies_said(view, assignment)} after): {shown}" if actives_kept else f"changes it: {shown}")
    return Verdict(
        property="fixpoint",
        status=Status.VIOLATED,
        message=f"the current assignment is valid, balanced and caught up{aside}, but the answer {what}",
        tasks=tasks,
        members=touched,
        measure=measure,
    )


def _pinned_violation(pinned: str, tasks, members, message: str) -> Verdict:
    """``fixpoint`` violated where its premise fails for a reason that still pins part of the
    layout (``measure["pinned"]`` says which part)."""
    return Verdict(property="fixpoint", status=Status.VIOLATED, message=message, tasks=tasks, members=members,
                   measure={"premise": True, "pinned": pinned})


def _what_changed(current: Assignment, assignment: Assignment, *, actives_only: bool):
    """What ``fixpoint`` says of a change: the changes listed (at most :data:`_MAX_LISTED`), the
    members whose actives (or copies) differ, and the tasks that moved among them."""
    members = sorted_ids(set(current.member_ids) | set(assignment.member_ids))
    changes = _changes(current, assignment, members, actives_only=actives_only)
    shown = "; ".join(changes[:_MAX_LISTED] + ([f"and {len(changes) - _MAX_LISTED} more"] if len(changes) > _MAX_LISTED else []))
    touched = [m for m in members if _held(current.of(m), actives_only) != _held(assignment.of(m), actives_only)]
    tasks = {t for m in touched for t in _tasks(current.of(m), actives_only) ^ _tasks(assignment.of(m), actives_only)}
    return shown, sorted_ids(touched), sorted_ids(tasks)


def _moved_back(assignment: Assignment, task_id: str, frm: str, to: str) -> Assignment:
    members = dict(assignment.members)
    src = members.get(frm, MemberAssignment())
    dst = members.get(to, MemberAssignment())
    members[frm] = MemberAssignment(active=[t for t in src.active if t != task_id], standby=src.standby, warmup=src.warmup)
    members[to] = MemberAssignment(active=[*dst.active, task_id], standby=dst.standby, warmup=dst.warmup)
    return Assignment(members=members, probing_rebalance=assignment.probing_rebalance)


def _pair_within_one(view: RebalanceInput, kept: Assignment, task_id: str, owner: str, holder: str) -> bool:
    """In ``kept``, owner and holder are within one of each other: actives, the task's subtopology,
    all copies, by every reading of "within one" with capacities (a move one reading calls
    needless another may need)."""
    pair = [m for m in (owner, holder) if view.has_member(m) and not view.member(m).leaving]
    if len(pair) < 2:
        return True
    caps = {m: view.member(m).capacity for m in pair}
    sub = subtopology_of(task_id)
    actives = {m: len(set(kept.of(m).active)) for m in pair}  # a task listed twice is one copy, as measure_balance counts
    in_sub = {m: sum(1 for t in set(kept.of(m).active) if subtopology_of(t) == sub) for m in pair}
    copies = {m: len(set(kept.of(m).copies)) for m in pair}
    return all(reading(counts, caps) for counts in (actives, in_sub, copies) for reading in READINGS)


def _no_worse(view: RebalanceInput, answer: Assignment, kept: Assignment, *task_ids: str) -> bool:
    """True when ``kept`` is at least as balanced as ``answer`` on every count KIP-441 or Kafka
    balances, by every reading of "within one" with capacities (each subtopology of ``task_ids``
    on its own)."""
    a, k = measure_balance(view, answer), measure_balance(view, kept)
    if not ((k.subtopology_within_one or not a.subtopology_within_one)
            and k.active_spread <= a.active_spread
            and k.copies_spread <= a.copies_spread):
        return False
    a_spread, k_spread = dict(a.subtopology_spread), dict(k.subtopology_spread)
    for sub in dict.fromkeys(subtopology_of(t) for t in task_ids):
        a_by, k_by = counts_by_reading(view, answer, sub), counts_by_reading(view, kept, sub)
        if k_spread[sub] > a_spread[sub] or not all(
                kept_ok or not answer_ok for a_r, k_r in zip(a_by, k_by) for answer_ok, kept_ok in zip(a_r, k_r)):
            return False
    return True


def _needless(view: RebalanceInput, answer: Assignment, kept: Assignment, task_id: str, owner: str, holder: str) -> bool:
    return _no_worse(view, answer, kept, task_id) and _pair_within_one(view, kept, task_id, owner, holder)


def _moves_text(moves) -> str:
    return words([f"{m.task} from {m.owner} to {m.holder}" for m in moves])


def stable(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """A stateless task stays with its current, non-leaving owner unless moving it is needed for balance.

    Two tests, each sound on its own (the answer is a violation when either finds a needless move):

    - **Fewest moves for the load** (:mod:`rebalproof.properties.stateless_moves`): the owned
      stateless tasks the answer moved are compared with the fewest moves of any answer with
      the same stateful copies and the same number of stateless actives per member and
      subtopology (exactly as balanced on every count). More moves than that is a violation
      naming the moves such an answer avoids: this is what catches a swap of two stateless
      tasks, or a rotation of three, in a settled group.
    - **One move back**: for each stateless task ``t`` active on a non-leaving member ``o`` going
      into the rebalance and active on exactly one other group member ``h`` in the answer
      (no or several actives are ``one-active``'s business), the answer with ``t`` put back
      on ``o`` — everything else as the answer has it — is no worse balanced overall
      (within-one and spread of the actives, of ``t``'s subtopology and of all copies are
      kept or improved) and leaves ``o`` and ``h`` within one of each other on each of those
      counts (so a move that evens out the two members involved is needed even while the
      answer as a whole is still unbalanced, as in a probing round). This catches a move that
      *changes* the load for the worse, which the first test takes as given.

    Tasks moved away from a leaving or departed member, and tasks nobody owned, may go
    anywhere. With leaving members, a move is needless only when it is so both with them
    counted as shutting down and as ordinary members (:mod:`rebalproof.properties.common`).
    ``measure`` gives ``owned``, ``moved`` and ``needed`` (``moved`` less the needless moves
    the first test names). The message never calls a move needed unless no answer with the
    same load makes fewer.
    """
    owned = moved = 0
    readings = [view] + [v for v in (as_if_staying(view),) if v is not None]
    exact = [stateless_moves(v, assignment) for v in readings]
    needless = exact[0].needless if all(e.needless for e in exact) else ()
    problems: list[str] = []
    tasks: list[str] = [m.task for m in needless]
    members: list[str] = [x for m in needless for x in (m.owner, m.holder)]
    for task_id in view.stateless_task_ids:
        owners = [m for m in view.owners(task_id) if not view.member(m).leaving]
        if not owners:
            continue
        owned += 1
        holders = sorted_ids(set(assignment.actives_of(task_id)))
        if len(holders) != 1 or not view.has_member(holders[0]) or holders[0] in owners:
            continue
        moved += 1
        holder = holders[0]
        if task_id in tasks:
            continue
        for owner in owners:
            kept = _moved_back(assignment, task_id, holder, owner)
            if all(_needless(v, assignment, kept, task_id, owner, holder) for v in readings):
                problems.append(f"stateless task {task_id} moved from {owner} to {holder}, but keeping it on {owner} is as balanced")
                tasks.append(task_id)
                members.extend([owner, holder])
                break
    measure = {"premise": owned > 0, "owned": owned, "moved": moved, "needed": moved - len(needless)}
    if needless:
        problems.insert(
            0,
            f"stateless tasks moved without need: {_moves_text(needless)} "
            f"({plural(moved, 'move')} made, {moved - len(needless)} needed to give each member the same number of "
            f"stateless tasks per subtopology)",
        )
    if problems:
        return Verdict(
            property="stable",
            status=Status.VIOLATED,
            message="; ".join(problems),
            tasks=sorted_ids(set(tasks)),
            members=sorted_ids(set(members)),
            measure=measure,
        )
    if not owned:
        message = "premise not met: no stateless task has a current owner that stays"
    elif moved:
        message = (
            f"{moved} of {plural(owned, 'owned stateless task')} moved: no answer with the same number of stateless "
            f"tasks per member and subtopology moves fewer, and none is as balanced back on its owner"
        )
    else:
        message = f"{plural(owned, 'owned stateless task')} kept by {'its owner' if owned == 1 else 'their owners'}"
    return Verdict(property="stable", status=Status.HOLDS, message=message, measure=measure)


def load_changes(view: RebalanceInput, assignment: Assignment) -> tuple[str, ...]:
    """What changes the load a stateless task is packed against in this rebalance; empty when nothing does.

    The group is the last generation's (the members are ``previous_members``; when the leader lost
    that memory, every member holds something going in), every task had an owner going in, no
    member is leaving, and the answer keeps every stateful task's active and its other copies on
    the members that held them going in (labels aside).
    """
    reasons: list[str] = []
    if view.previous_members is None:  # the leader's memory is lost: a member holding nothing may be new
        joined = [m.id for m in view.members if not m.copies]
        left = []
    else:
        joined = [m for m in view.member_ids if m not in view.previous_members]
        left = [m for m in view.previous_members if not view.has_member(m)]
    if joined:
        reasons.append(f"{words(joined)} joined" if view.previous_members is not None else f"{words(joined)} may be new (holds nothing)")
    if left:
        reasons.append(f"{words(left)} left")
    orphans = [t for t in view.task_ids if not view.owners(t)]
    if orphans:
        reasons.append(f"{plural(len(orphans), 'task')} had no owner ({words(sorted_ids(orphans)[:_MAX_LISTED])}{', ...' if len(orphans) > _MAX_LISTED else ''})")
    leaving = [m.id for m in view.members if m.leaving]
    if leaving:
        reasons.append(f"{words(leaving)} {'is' if len(leaving) == 1 else 'are'} leaving")
    changed = []
    for task_id in view.stateful_task_ids:
        before_active = {m.id for m in view.members if task_id in m.active}
        before_copies = {m.id for m in view.members if task_id in m.copies}
        after_active = {m for m in assignment.actives_of(task_id) if view.has_member(m)}
        after_copies = {m for m, held in assignment.members if view.has_member(m) and task_id in held.copies}
        if before_active != after_active or before_copies != after_copies:
            changed.append(task_id)
    if changed:
        reasons.append(f"the answer moves stateful {plural(len(changed), 'task')} ({words(sorted_ids(changed)[:_MAX_LISTED])}{', ...' if len(changed) > _MAX_LISTED else ''})")
    return tuple(reasons)


def stable_sticky(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """``stable`` under the ``sticky`` and ``eager`` rules: :func:`stable_settled`, and in every
    rebalance no needless exchange of stateful actives between owners
    (:func:`~rebalproof.properties.sticky_moves.needless_exchanges`: a staying member passing its
    own stateful task on while taking another owner's, where trading the two keeps every count,
    moves less, balances each subtopology no worse (:func:`_no_worse`) and is no less caught up).
    Red team 10: an assignor dealing every task round-robin afresh at each rebalance, balanced
    but never sticky, kept every sticky promise."""
    verdict = stable_settled(view, assignment)
    exchanges = needless_exchanges(
        view, assignment, lambda alt, a, b: _no_worse(view, assignment, alt, a, b))
    if not exchanges:
        return verdict
    problem = (f"stateful actives exchanged without need: {'; '.join(str(x) for x in exchanges)} (each keeping its own "
               f"gives every member the same counts, with fewer moves, no less balanced and no less caught up)")
    tasks = [t for x in exchanges for t in (x.kept, x.taken)]
    members = [m for x in exchanges for m in (x.member, x.holder, x.owner)]
    if verdict.violated:
        problem = f"{verdict.message}; {problem}"
        tasks += list(verdict.tasks)
        members += list(verdict.members)
    return Verdict(
        property="stable",
        status=Status.VIOLATED,
        message=problem,
        tasks=sorted_ids(set(tasks)),
        members=sorted_ids(set(members)),
        measure=dict(verdict.measure, exchanges=len(exchanges)),
    )


def stable_settled(view: RebalanceInput, assignment: Assignment) -> Verdict:
    """``stable`` as every rule set promising it reads requirement 6: no stateless shuffle when nothing changes the load.

    KIP-441 asks that the algorithm "should try not to shuffle stateless tasks randomly", and
    "the assignor just packs the stateless tasks into the cluster to achieve the best balance it
    can with respect to the assignments of stateful tasks" ("Stateless tasks"). A packing that
    starts afresh from the stateful load each time (Kafka's high-availability assignor does)
    moves stateless tasks whenever that load changes, deterministically, not randomly; Kafka's
    sticky assignor, dealing tasks to previous owners while they have room, moves one when an
    orphan fills its owner first. So the ha, sticky and eager rules judge a
    stateless move (by :func:`stable`'s two tests) only in a rebalance that changes nothing the
    packing depends on (:func:`load_changes`): the same members as the last generation, none
    leaving, every stateful copy kept. There a move is a shuffle without cause. Otherwise the
    verdict holds with ``premise: false`` and the reasons; :func:`stable`'s figures are kept.
    """
    verdict = stable(view, assignment)
    reasons = load_changes(view, assignment)
    if not reasons or not verdict.violated:
        return verdict
    return Verdict(
        property="stable",
        status=Status.HOLDS,
        message=f"premise not met: the load changes ({'; '.join(reasons)}); a stateless task may be packed afresh, as it was here: {verdict.message}",
        measure=dict(verdict.measure, premise=False),
    )

