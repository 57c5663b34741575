"""A trace read the way the seeds tell a scenario: a start, events, and rebalances.

The seeds narrate a run as a stable state, then per rebalance what happened before it ("New
member S4 joins the group"), how members join ("Member S1~S5 join with following status",
one line per member: ``assigned`` / ``revoked`` / ``learning``) and what the leader assigns
("S1 performs task assignments"). :func:`read_story` turns a decoded trace into exactly those
pieces, as values, so that the text form (:mod:`rebalproof.traces.render_text`), the table form
(:mod:`rebalproof.traces.render_table`) and the HTML viewer lay out one reading. Nothing here
formats text.

Readings (the seed's columns, from the trace's states):

- a **join line**: ``assigned`` = actives the member keeps at the join (after revoking the
  tasks being learned), ``revoked`` = actives it held before the join and gave up at it,
  ``learning`` = its learner (``warmup``) copies, plus ``standby`` copies;
- an **answer line**: ``assigned`` / ``learning`` / ``standby`` = the assignor's answer,
  ``revoked`` = actives the member held before the join that the answer does not give it back
  (seed 001 keeps a task revoked at the join in the answer's ``revoked`` list while it is not
  given back, e.g. "S1(assigned: [T2], revoked: [T1], learning: [])");
- **withheld**: under a protocol that hands a moved active over only after its owner revoked
  it, the answer's active that the new owner is not sent yet (the follow-up rebalance hands it
  over);
- the join lines are *shown* when they say something the previous lines do not: someone
  revoked a task at the join, holds a learner / standby / warmup copy, or the leader changed.

Events group consecutive actions of one kind (joins, deliveries, ...) but never across the
failing step or a lasso's cycle start, so markers land on the right line.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from rebalproof.model.group_state import BEHIND, GroupState, MemberState
from rebalproof.model.lag_readings import BEHIND_READINGS, describe
from rebalproof.model.names import id_key, sorted_ids
from rebalproof.traces.format import Trace

__all__ = ["MemberLine", "Event", "Start", "RebalanceBlock", "Story", "read_story", "step_event", "ordinal"]

_ORDINALS = (
    "First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth", "Ninth", "Tenth",
    "Eleventh", "Twelfth", "Thirteenth", "Fourteenth", "Fifteenth", "Sixteenth", "Seventeenth",
    "Eighteenth", "Nineteenth", "Twentieth",
)


def ordinal(n: int) -> str:
    """``1 -> "First"``; past twenty, ``"21st"`` style."""
    if 1 <= n <= len(_ORDINALS):
        return _ORDINALS[n - 1]
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True)
class MemberLine:
    """One seed line ``S1(assigned: [..], revoked: [..], learning: [..])`` (+ standby copies)."""

    member: str
    assigned: tuple[str, ...] = ()
    revoked: tuple[str, ...] = ()
    learning: tuple[str, ...] = ()
    standby: tuple[str, ...] = ()


@dataclass(frozen=True)
class Event:
    """Consecutive actions told as one sentence.

    ``kind`` is the action kind (``join``, ``restore``, ``deliver``, ...); ``members`` and
    ``tasks`` whom it is about; ``steps`` the trace steps it covers. Extra facts a sentence
    needs: ``ready`` (a restore made the member's learners ready), ``rejoin`` (it rejoined right
    after), ``caught_up`` (no copy of the member is still behind), ``probe`` (a probing rebalance
    follows at once), ``shutdown`` (members that shut down on delivery), ``revoked`` (member ->
    tasks revoked on delivery), ``error`` (the assignor failed).
    """

    kind: str
    steps: tuple[int, ...]
    members: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    ready: bool = False
    rejoin: bool = False
    caught_up: bool = False
    probe: bool = False
    shutdown: tuple[str, ...] = ()
    revoked: tuple[tuple[str, tuple[str, ...]], ...] = ()
    error: str = ""
    comments: tuple[str, ...] = ()


@dataclass(frozen=True)
class Start:
    """Step 0: the group the run starts from."""

    state: GroupState
    stable: bool
    comment: str = ""


@dataclass(frozen=True)
class RebalanceBlock:
    """One rebalance as the seeds tell it, with the events before and the deliveries after it."""

    number: int
    step: int
    title: str
    leader: str | None
    elected: bool  # the leader took over in this rebalance (the old one crashed / left)
    before: tuple[Event, ...]
    joined: tuple[MemberLine, ...]
    show_joined: bool
    not_ready: tuple[str, ...]
    answer: tuple[MemberLine, ...]
    probing: bool
    withheld: tuple[tuple[str, str, str], ...]  # (task, new owner, current owner)
    after: tuple[Event, ...] = ()
    comment: str = ""
    error: str = ""
    roles_before: dict = field(default_factory=dict)  # member -> (active, standby, warmup) before the join
    roles_after: dict = field(default_factory=dict)  # member -> (active, standby, warmup) of the answer
    lags_note: str = ""  # with a boundary lag reading: which caught-up copies the view reported at the limit; a requested rebalance: why it runs


@dataclass(frozen=True)
class Story:
    """The whole trace as the seeds would tell it."""

    start: Start
    blocks: tuple[RebalanceBlock, ...]
    trailing: tuple[Event, ...]  # events after the last rebalance's deliveries
    header: dict


def _members(state: GroupState) -> dict[str, MemberState]:
    return {m.id: m for m in state.members}


def _minus(a, b) -> tuple[str, ...]:
    bs = set(b)
    return tuple(t for t in a if t not in bs)


def _events(trace: Trace, indices: list[int], breaks: set[int]) -> tuple[Event, ...]:
    """Group the non-rebalance steps ``indices`` into events (see the module docstring)."""
    steps = trace.steps
    out: list[Event] = []
    i = 0
    while i < len(indices):
        idx = indices[i]
        a = steps[idx].action
        prev = steps[idx - 1].state
        group = [idx]

        def extend(pred):
            nonlocal i
            while i + 1 < len(indices) and indices[i + 1] == group[-1] + 1 and group[-1] not in breaks:
                if not pred(steps[indices[i + 1]].action):
                    break
                i += 1
                group.append(indices[i])

        def absorb(pred) -> bool:
            nonlocal i
            last = group[-1]
            if last in breaks or i + 1 >= len(indices) or indices[i + 1] != last + 1:
                return False
            if not pred(steps[last + 1].action):
                return False
            i += 1
            group.append(last + 1)
            return True

        if a.kind in ("join", "leave", "mark-leaving", "deliver"):
            extend(lambda x: x.kind == a.kind)
            shutdown, revoked = [], []
            if a.kind == "deliver":
                for j in group:
                    before, after = _members(steps[j - 1].state), _members(steps[j].state)
                    mid = steps[j].action.member
                    if mid not in after:
                        shutdown.append(mid)
                    else:
                        lost = _minus(before[mid].active, after[mid].active)
                        if lost:
                            revoked.append((mid, lost))
            ev = Event(
                kind=a.kind, steps=tuple(group), members=tuple(steps[j].action.member for j in group),
                shutdown=tuple(shutdown), revoked=tuple(revoked),
            )
        elif a.kind == "restore":
            extend(lambda x: x.kind == "restore" and x.member == a.member)
            tasks = tuple(steps[j].action.task for j in group)
            after = _members(steps[group[-1]].state).get(a.member)
            was = _members(prev).get(a.member)
            ready = bool(after is not None and after.ready and not (was is not None and was.ready))
            caught_up = after is not None and all(c != BEHIND for t, c in after.lags if after.hosts(t))
            rejoin = absorb(lambda x: x.kind == "rejoin" and x.member == a.member)
            # "-- I3 finishes catching up, another rebalance is triggered --" (seed 002): one line
            # only when the member has nothing left to restore
            probe = False if rejoin or not caught_up else absorb(lambda x: x.kind == "probe")
            ev = Event(
                kind="restore", steps=tuple(group), members=(a.member,), tasks=tasks,
                ready=ready, rejoin=rejoin, caught_up=caught_up, probe=probe,
            )
        elif a.kind == "rejoin":
            extend(lambda x: x.kind == "rejoin")
            ev = Event(kind="rejoin", steps=tuple(group), members=tuple(steps[j].action.member for j in group))
        else:
            ev = Event(kind=a.kind, steps=(idx,), members=(a.member,) if a.member else (), tasks=(a.task,) if a.task else ())
        comments = tuple(steps[j].comment for j in ev.steps if steps[j].comment)
        out.append(_replace(ev, comments=comments) if comments else ev)
        i += 1
    return tuple(out)


def read_story(trace: Trace) -> Story:
    """The :class:`Story` of ``trace``."""
    steps = trace.steps
    breaks = set()
    for key in ("fail_step", "cycle_start"):
        if isinstance(trace.header.get(key), int):
            breaks.add(trace.header[key])
            breaks.add(trace.header[key] - 1)
    s0 = steps[0].state
    start = Start(state=s0, stable=not s0.triggers and not s0.pending, comment=steps[0].comment or "")
    rebalances = [i for i, s in enumerate(steps) if s.action is not None and s.action.kind == "rebalance"]
    blocks: list[RebalanceBlock] = []
    cursor = 1

    def split_deliveries(indices):
        k = 0
        while k < len(indices) and steps[indices[k]].action.kind == "deliver":
            k += 1
        return indices[:k], indices[k:]

    for n, r in enumerate(rebalances, start=1):
        between = list(range(cursor, r))
        if blocks:  # deliveries right after the previous rebalance belong to it
            after_prev, between = split_deliveries(between)
            if after_prev:
                blocks[-1] = _replace(blocks[-1], after=_events(trace, after_prev, breaks))
        blocks.append(_block(trace, n, r, _events(trace, between, breaks)))
        cursor = r + 1
    tail = list(range(cursor, len(steps)))
    if blocks:
        after_last, tail = split_deliveries(tail)
        if after_last:
            blocks[-1] = _replace(blocks[-1], after=_events(trace, after_last, breaks))
    trailing = _events(trace, tail, breaks) if tail else ()
    return Story(start=start, blocks=tuple(blocks), trailing=trailing, header=dict(trace.header))


def _replace(value, **changes):
    return replace(value, **changes)


def _block(trace: Trace, number: int, idx: int, before: tuple[Event, ...]) -> RebalanceBlock:
    step = trace.steps[idx]
    prev = trace.steps[idx - 1].state
    state = step.state
    pm = _members(prev)
    joined = []
    shows = False
    for m in state.members:
        held = pm[m.id].active if m.id in pm else ()
        revoked = _minus(held, m.active)
        joined.append(MemberLine(member=m.id, assigned=m.active, revoked=revoked, learning=m.warmup, standby=m.standby))
        if revoked or m.warmup or m.standby:
            shows = True
    # a leader took over: the old one is gone (not the first leader of a group that starts empty)
    elected = prev.leader is None and state.leader is not None and (number > 1 or any(e.kind == "crash" for e in before))
    if elected:
        shows = True
    not_ready = tuple(
        m.id for m in state.members if m.warmup and any(m.lag(t) == BEHIND for t in m.warmup)
    )
    answer_lines = []
    withheld = []
    roles_after = {}
    probing = state.probe
    record = step.rebalance or {}
    answer = (record.get("assignment") or {}).get("assignment") if record else None
    pending = {e[0]: e for e in state.pending}
    owner = {t: m.id for m in state.members for t in m.active}
    if answer is not None:
        probing = bool(record["assignment"].get("probing_rebalance", False))
        for mid in sorted_ids(answer):
            roles = answer[mid]
            act, sb, wu = tuple(roles.get("active", ())), tuple(roles.get("standby", ())), tuple(roles.get("warmup", ()))
            held = pm[mid].active if mid in pm else ()
            answer_lines.append(MemberLine(member=mid, assigned=act, revoked=_minus(held, act), learning=wu, standby=sb))
            roles_after[mid] = (act, sb, wu)
            sent = pending.get(mid)
            if sent is not None:
                for t in act:
                    if t not in sent[1]:
                        withheld.append((t, mid, owner.get(t, "")))
    else:
        for mid, act, sb, wu in state.pending:
            held = pm[mid].active if mid in pm else ()
            answer_lines.append(MemberLine(member=mid, assigned=act, revoked=_minus(held, act), learning=wu, standby=sb))
            roles_after[mid] = (act, sb, wu)
    title = step.title or f"#{ordinal(number)} Rebalance"
    lags_note = _lags_note(trace, step) if step.action is not None and step.action.lags else ""
    if step.action is not None and step.action.requested:
        asked = "a member asks for this rebalance in a quiescent group, no membership having changed: a consumer's enforceRebalance or a metadata change"
        lags_note = f"{asked}; {lags_note}" if lags_note else asked
    return RebalanceBlock(
        number=number,
        step=idx,
        title=title,
        leader=state.leader,
        elected=elected,
        before=before,
        joined=tuple(joined),
        show_joined=shows,
        not_ready=not_ready,
        answer=tuple(answer_lines),
        probing=probing,
        withheld=tuple(withheld),
        comment=step.comment or "",
        error=step.error or "",
        roles_before={m.id: (m.active, m.standby, m.warmup) for m in prev.members},
        roles_after=roles_after,
        lags_note=lags_note,
    )


def _lags_note(trace: Trace, step) -> str:
    """What a boundary lag reading (``step.action.lags``) showed the leader: the copies its view
    reported at exactly ``acceptable_recovery_lag``, from the recorded input."""
    limit = (trace.header.get("config") or {}).get("acceptable_recovery_lag", 10000)
    members = ((step.rebalance or {}).get("input") or {}).get("members") or []
    if step.action.lags in BEHIND_READINGS:
        apart = [f"{m['id']} {', '.join(f'{t} {lag}' for t, lag in sorted((m.get('lags') or {}).items(), key=lambda p: id_key(p[0])) if lag > limit)}"
                 for m in members if any(lag > limit for lag in (m.get("lags") or {}).values())]
        return (f"the leader's view reports the behind copies apart: {'; '.join(apart)} "
                f"({step.action.lags}: {describe(step.action.lags)})")
    at = [f"{m['id']} {', '.join(sorted_ids(t for t, lag in (m.get('lags') or {}).items() if lag == limit))}"
          for m in members if any(lag == limit for lag in (m.get("lags") or {}).values())]
    if not at:
        return ""
    return (f"the leader's view reports these caught-up copies at acceptable_recovery_lag ({limit}): {'; '.join(at)}; "
            f"every other caught-up copy at 0 ({step.action.lags})")


def step_event(trace: Trace, index: int) -> Event | None:
    """The event of one non-rebalance step alone (no grouping); None for step 0 and rebalances."""
    if index == 0 or trace.steps[index].action is None or trace.steps[index].action.kind == "rebalance":
        return None
    return _events(trace, [index], {index})[0]
