"""The group model: a state machine of one group running one protocol with one assignor.

Stateright's interface (STYLE.md): :meth:`GroupModel.init_states`, :meth:`GroupModel.actions`
(enabled actions in a stable order), :meth:`GroupModel.next_state` (None when the action is
disabled), and :meth:`GroupModel.expand` = ``[(action, next_state)]``, the pure successor
function any engine calls (the local BFS, a level-synchronous Spark BFS).

Each action is one operator below, guards first, then updates (TLA+ style). The rebalance is
split into member-level steps (seed 002, "After KIP-429"):

- ``rebalance``: every member joins (revoking what its protocol revokes at the join), the
  leader builds its view (:class:`~rebalproof.model.view.RebalanceInput`) from the members'
  reports and its memory, calls the assignor, applies its protocol's hand-over rule and sends
  every member its assignment (one successor per answer of a nondeterministic assignor; when
  the leader is gone, one per member it may elect). A rebalance in progress is abandoned by
  the next one: undelivered members keep what they held, as a SyncGroup that gets
  REBALANCE_IN_PROGRESS does.
- ``deliver``: one member receives its assignment, revokes what it lost (and rejoins at once
  when its protocol says so), starts what it gained. Deliveries interleave with each other and
  with every other event, so revocations and hand-overs are asynchronous.

The assignor only ever sees a :class:`RebalanceInput`; which member is leader does not change
the view (after a leader change the memory is lost, whoever is elected).
"""

from __future__ import annotations

import itertools

from dataclasses import dataclass, field
from typing import NamedTuple

from rebalproof.errors import AssignorError
from rebalproof.model.assignment import Assignment
from rebalproof.model.frontier import GroupStatePacker
from rebalproof.model.group_assignor import MemoChooser, as_chooser
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_protocol import Protocol
from rebalproof.model.group_state import (
    BEHIND,
    CAUGHT_UP,
    Action,
    GroupState,
    MemberState,
    is_quiescent,
)
from rebalproof.model.lag_readings import BEHIND_READINGS, READINGS, behind_offsets, member_lags, reported_lags, spreads_behind_ranks
from rebalproof.model.view import Member, RebalanceInput

__all__ = ["GroupModel", "RebalanceStep"]


class RebalanceStep(NamedTuple):
    """What one ``rebalance`` step computed: the leader's view, the assignor's answer, what was sent."""

    view: RebalanceInput
    assignment: Assignment
    delivered: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...]


def _enabled(state: GroupState, action: Action) -> bool:
    """Whether the rebalance ``action`` may run in ``state``: one a trigger asks for, or a
    requested one (:meth:`GroupModel.requested_probes`) in a quiescent group with its leader,
    at the canonical lags or one of their boundary readings."""
    if not action.requested:
        return bool(state.triggers)
    return is_quiescent(state) and state.leader is not None and action.leader is None and (action.lags is None or action.lags in READINGS)


def _with(triggers: tuple[str, ...], reason: str) -> tuple[str, ...]:
    if reason in triggers:
        return triggers
    return tuple(sorted(triggers + (reason,)))


class _LastState:
    """What the leader's side computed for the last state asked about (an engine asks about one
    state many times in a row: its actions, each rebalance successor, the monitor's look at each
    rebalance edge). Keyed by the state object itself, held here, so never by a reused address;
    dropped when pickled, as the chooser's memo is."""

    __slots__ = ("state", "joined", "reported", "key", "answers", "view", "steps", "readings")

    def __init__(self):
        self.state = None
        self.joined = self.reported = self.key = self.answers = self.view = None
        self.steps: dict = {}
        #: boundary lag readings (model/lag_readings.py): reading -> [key, answers, view] for
        #: the readings that change the view; None until asked
        self.readings: dict | None = None

    def __reduce__(self):
        return (_LastState, ())

    def at(self, state) -> "_LastState":
        if self.state is not state:
            self.state = state
            self.joined = self.reported = self.key = self.answers = self.view = None
            self.steps = {}
            self.readings = None
        return self


class _WarmSteps(list):
    """The rebalance steps :meth:`GroupModel.settle` took to build the warm start (a cache of what
    :meth:`GroupModel.init_states` computed); pickled empty."""

    def __reduce__(self):
        return (_WarmSteps, ())


class _Interned(dict):
    """Member (or a member's part of a view key) -> the equal one kept (:meth:`GroupModel.compact`,
    :meth:`GroupModel.view_key`); pickled empty."""

    def __reduce__(self):
        return (_Interned, ())


@dataclass(frozen=True, kw_only=True, eq=False)
class GroupModel:
    """One protocol + one assignor + bounds. Pure: no method changes the model or a state."""

    protocol: Protocol
    bounds: Bounds
    assignor: object  # a callable assignor or a chooser; wrapped as a MemoChooser
    assignor_name: str = "assignor"
    _chooser: MemoChooser = field(init=False, repr=False)
    _stateful: frozenset = field(init=False, repr=False)
    _order: dict = field(init=False, repr=False)
    _capacity: dict = field(init=False, repr=False)
    _last: _LastState = field(init=False, repr=False)
    _interned: dict = field(init=False, repr=False)
    _warm: list = field(init=False, repr=False)
    _tasks: tuple = field(init=False, repr=False)
    _task_ids: tuple = field(init=False, repr=False)
    _config: object = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "_chooser", as_chooser(self.assignor, name=self.assignor_name))
        object.__setattr__(self, "_last", _LastState())
        object.__setattr__(self, "_interned", _Interned())
        object.__setattr__(self, "_warm", _WarmSteps())
        tasks = self.bounds.tasks
        # built once: every view shares them (Bounds builds them anew on each access)
        object.__setattr__(self, "_tasks", tasks)
        object.__setattr__(self, "_task_ids", tuple(t.id for t in tasks))
        object.__setattr__(self, "_config", self.bounds.config)
        object.__setattr__(self, "_stateful", frozenset(t.id for t in tasks if t.stateful))
        object.__setattr__(self, "_order", {t.id: i for i, t in enumerate(tasks)})
        ids = self.bounds.member_ids
        object.__setattr__(self, "_capacity", {m: self.bounds.capacity_at(i) for i, m in enumerate(ids)})

    # -- the interface ---------------------------------------------------------------------
    @property
    def tasks(self):
        return self._tasks

    @property
    def task_ids(self) -> tuple[str, ...]:
        return self._task_ids

    def is_stateful(self, task: str) -> bool:
        return task in self._stateful

    def capacity(self, member_id: str) -> int:
        """Stream threads of ``member_id``, fixed by its place in the pool (:attr:`Bounds.capacities`)."""
        return self._capacity.get(member_id, 1)

    @property
    def capacity_classes(self) -> dict[str, int] | None:
        """Member id -> capacity when the pool mixes capacities (only instances of one capacity
        are interchangeable for symmetry reduction); None when every instance is alike."""
        if len(set(self._capacity.values())) <= 1:
            return None
        return dict(self._capacity)

    def init_states(self) -> tuple[GroupState, ...]:
        """One initial state: the cold start, or (default) the warm start of :meth:`settle`."""
        members = tuple(MemberState(id=m) for m in self.bounds.member_ids[: self.bounds.initial])
        cold = GroupState(
            members=members,
            leader=members[0].id,
            memory=None,
            spawned=self.bounds.initial,
            events=0,
            triggers=("start",),
        )
        if self.bounds.start == "cold":
            return (cold,)
        steps = []
        settled = self.settle(cold, steps=steps)
        self._warm[:] = steps
        return (settled,)

    def warm_start_steps(self) -> tuple:
        """The :class:`RebalanceStep` s (leader view and answer) :meth:`settle` took to build the warm
        start, in order; empty for a cold start. The exploration does not contain them: the
        per-rebalance properties judge them apart (``properties/run_check.py``)."""
        if self.bounds.start == "cold":
            return ()
        if not self._warm:  # a model that did not build its initial state here (a resumed run)
            self.init_states()
        return tuple(self._warm)

    def settle(self, state: GroupState, *, rounds: int = 12, steps: list | None = None) -> GroupState:
        """Run ``state`` to a settled group without interleavings: rebalance (first answer),
        deliver to everyone, restore every copy, and again while a rebalance or probe is due,
        at most ``rounds`` times. The result has every hosted copy caught up, no state for what
        is not hosted, the leader remembering the members, nothing pending (the warm start); if
        the assignor never settles, its rebalance or probe is still due."""
        s = state
        for _ in range(rounds):
            if not s.triggers and not s.probe:
                break
            if not s.triggers:
                s = s._replace(probe=False, triggers=("probe",))
            electors = () if s.leader is not None else (s.members[0].id,)
            before = s
            s = self.next_state(s, Action("rebalance", leader=electors[0] if electors else None))
            if steps is not None:  # the step just taken, as rebalance_step left it for ``before``
                steps.append(self._last.at(before).steps[0])
            while s.pending:
                s = self.next_state(s, Action("deliver", member=s.pending[0][0]))
            s = s._replace(
                members=tuple(
                    m._replace(lags=tuple((t, CAUGHT_UP) for t, _ in m.lags if m.hosts(t)), ready=False)
                    for m in s.members
                ),
                triggers=tuple(t for t in s.triggers if t not in ("ready",)),
            )
        # a group that did not settle within ``rounds`` starts as it is: a rebalance or probe due
        return s._replace(pending=(), events=0)

    def actions(self, state: GroupState) -> list[Action]:
        """Every enabled action, in the stable order of :data:`~rebalproof.model.group_state.ACTION_KINDS`."""
        out: list[Action] = []
        proto = self.protocol
        members = state.members
        if state.triggers and members:
            answers = self._answers(state)
            n = len(answers)
            extra = self._boundary_choices(state, answers) if self.bounds.boundary_lags else ()
            electors = (None,) if state.leader is not None else tuple(m.id for m in members)
            for leader in electors:
                for c in range(n):
                    out.append(Action("rebalance", choice=c, leader=leader))
                for reading, c in extra:
                    out.append(Action("rebalance", choice=c, leader=leader, lags=reading))
        for entry in state.pending:
            out.append(Action("deliver", member=entry[0]))
        for m in members:
            for t, c in m.lags:
                if c == BEHIND and (t in m.active or t in m.standby or t in m.warmup):
                    out.append(Action("restore", member=m.id, task=t))
        if proto.ready_rejoin:
            for m in members:
                if m.ready:
                    out.append(Action("rejoin", member=m.id))
        if state.probe and not state.triggers and not state.pending:
            out.append(Action("probe"))
        if proto.scale_down_timeout:
            for m in members:
                if m.leaving:
                    out.append(Action("timeout", member=m.id))
        if self.bounds.aging and not state.triggers and not state.pending:
            for m in members:
                for t, c in m.lags:
                    if not (t in m.active or t in m.standby or t in m.warmup):
                        out.append(Action("age" if c == CAUGHT_UP else "cleanup", member=m.id, task=t))
        if state.events < self.bounds.events:
            if state.spawned < self.bounds.instances:
                out.append(Action("join", member=self.bounds.member_ids[state.spawned]))
            if len(members) >= 2:
                staying = [m.id for m in members if not m.leaving]
                for m in members:
                    if m.id != state.leader and staying != [m.id]:
                        out.append(Action("leave", member=m.id))
                if state.leader is not None and staying != [state.leader]:
                    out.append(Action("crash", member=state.leader))
            if proto.leaving and sum(1 for m in members if not m.leaving) >= 2:
                for m in members:
                    if not m.leaving:
                        out.append(Action("mark-leaving", member=m.id))
        return out

    def next_state(self, state: GroupState, action: Action) -> GroupState | None:
        """The state after ``action``, or None when it is disabled in ``state``."""
        handler = _HANDLERS.get(action.kind)
        if handler is None:
            return None
        return handler(self, state, action)

    def compact(self, state: GroupState) -> GroupState:
        """``state`` with each member replaced by an equal one met before, if any (an engine keeps
        the states of its frontier so: successors from different parents build equal members
        anew, and a member is most of a state's memory). Equal to ``state``; at most 65,536
        members are remembered, then the memory starts afresh."""
        memo = self._interned
        members = state.members
        shared = tuple(memo.setdefault(m, m) for m in members)
        if len(memo) >= 1 << 16:
            memo.clear()
        return GroupState(shared, state.leader, state.memory, state.spawned, state.events, state.triggers, state.pending, state.probe)

    def packer(self):
        """A :class:`~rebalproof.model.frontier.GroupStatePacker` for this model's states: an
        engine queues states as packed records with it (about 30 bytes a state, not 300), its
        unpacked states sharing their members as :meth:`compact` makes them."""
        return GroupStatePacker(instances=self.bounds.instances)

    def expand(self, state: GroupState) -> list[tuple[Action, GroupState]]:
        """``[(action, next_state)]`` for every enabled action: the pure successor function."""
        out = []
        for action in self.actions(state):
            nxt = self.next_state(state, action)
            if nxt is not None:
                out.append((action, nxt))
        return out

    # -- the leader's side -----------------------------------------------------------------
    def joined(self, state: GroupState) -> tuple[tuple[MemberState, ...], dict[str, tuple[str, ...]]]:
        """Members after their join revocations, and what each reports as its actives."""
        mode = self.protocol.revoke_at_join
        out = []
        reported = {}
        if mode == "being-learned":
            learning: dict[str, set] = {}
            for m in state.members:
                for t in m.warmup:
                    learning.setdefault(t, set()).add(m.id)
        for m in state.members:
            if mode == "all":
                reported[m.id] = m.active
                out.append(m._replace(active=(), ready=False))
            elif mode == "being-learned":
                keep = tuple(t for t in m.active if not (learning.get(t, set()) - {m.id}))
                reported[m.id] = keep
                out.append(m._replace(active=keep, ready=False))
            else:
                reported[m.id] = m.active
                out.append(m._replace(ready=False) if m.ready else m)
        return tuple(out), reported

    def view_of(self, state: GroupState) -> RebalanceInput:
        """The leader's view a rebalance would build now."""
        return self._answers_for(state)[0]

    def view_key(self, state: GroupState):
        """A hashable key of the leader's view in ``state`` (equal keys, equal views)."""
        return self._joined_key(state).key

    def _joined_key(self, state: GroupState) -> _LastState:
        last = self._last.at(state)
        if last.key is None:
            last.joined, last.reported = self.joined(state)
            last.key = self._view_key(state, last.joined, last.reported)
        return last

    def _view_key(self, state: GroupState, joined, reported):
        # a member's part of the key is kept once (interned): the chooser's memo holds a key per
        # view asked, tens of thousands on a million-state run, made of a few hundred such parts
        parts = self._interned
        if len(parts) >= 1 << 16:
            parts.clear()
        return (
            tuple(parts.setdefault(p, p) for p in [(m.id, m.leaving, reported[m.id], m.standby, m.warmup, m.lags) for m in joined]),
            state.memory,
        )

    def _answers_for(self, state: GroupState, reading: str | None = None):
        """``(view, answers)`` of the rebalance ``state`` would run (with the leader's view
        reporting lags by ``reading``; ``(None, ())`` for a reading that changes nothing)."""
        if reading is not None:
            entry = self._reading_entry(state, reading)
            if entry is None:
                return None, ()
            key = entry[0]
            if entry[1] is None:
                entry[1] = self._chooser.answers_for(key, lambda: self.view_from_key(key))
            if entry[2] is None:
                entry[2] = self._chooser.view_for(key, lambda: self.view_from_key(key))
            return entry[2], entry[1]
        answers = self._answers(state)
        last = self._last
        if last.view is None:
            key = last.key
            last.view = self._chooser.view_for(key, lambda: self.view_from_key(key))
        return last.view, answers

    # -- boundary lags (model/lag_readings.py) ------------------------------------------------
    def _reading_entry(self, state: GroupState, reading: str):
        """``[key, answers, view]`` of ``reading`` on the view of ``state``, or None when it
        reports what the canonical reading or an earlier reading reports."""
        last = self._joined_key(state)
        if last.readings is None:
            last.readings = {r: [key, None, None] for r, key in self._readings(*last.key)}
        return last.readings.get(reading)

    def _readings(self, members, memory) -> list[tuple[str, tuple]]:
        """``[(reading, step key), ...]`` of the readings of the view ``(members, memory)`` that
        report numbers no earlier reading (nor the canonical one) reports, in :data:`READINGS` order."""
        limit = self.bounds.acceptable_recovery_lag
        seen = {member_lags(None, members, limit)}
        out = []
        for r in READINGS:
            if r in BEHIND_READINGS and not spreads_behind_ranks(r, members):
                continue  # no rank among behind copies changes
            numbers = member_lags(r, members, limit)
            if numbers not in seen:
                seen.add(numbers)
                out.append((r, (members, memory, r)))
        return out

    def _boundary_choices(self, state: GroupState, answers: tuple) -> list[tuple[str, int]]:
        """``(reading, choice)`` of every answer to a boundary reading of the view of ``state``
        that no earlier reading answered: an answer given to the canonical view too makes the same
        successor with the same verdicts (the model keeps lag classes, the properties read caught-up
        lags through the floor), so only new answers are new steps. The readings of
        :data:`~rebalproof.model.lag_readings.BEHIND_READINGS` are not steps: :meth:`behind_probes`."""
        seen = set(answers)
        out = []
        for reading in READINGS:
            if reading in BEHIND_READINGS:  # judged, not explored: :meth:`behind_probes`
                continue
            for c, answer in enumerate(self._answers_for(state, reading)[1]):
                if answer not in seen:
                    seen.add(answer)
                    out.append((reading, c))
        return out

    def behind_probes(self, state: GroupState, leader: str | None = None) -> list[Action]:
        """The rebalance actions answering the readings of
        :data:`~rebalproof.model.lag_readings.BEHIND_READINGS` of the view of ``state`` that tell
        two behind copies of a task apart (none without boundary lags).

        They are judged, not explored: a reading ties the numbers to the members' loads, which
        the answers change, so following them would let the environment reorder two restoring
        copies at every rebalance with no restore in between, and a correct assignor that
        follows the closest copy would move a task back and forth (``converges`` faulted). Judged
        on its own view, each answer must give an active to a member closest to catching up; a
        violation's trace ends with the probe's rebalance, a real step of the model."""
        if not self.bounds.boundary_lags or not state.triggers or not state.members:
            return []
        out = []
        for reading in BEHIND_READINGS:
            try:
                answers = self._answers_for(state, reading)[1]
            except AssignorError as error:
                error.reading = reading  # which view failed: the finding's trace shows it
                raise
            out.extend(Action("rebalance", choice=c, leader=leader, lags=reading) for c in range(len(answers)))
        return out

    def requested_probes(self, state: GroupState) -> list[tuple[object, Action, RebalanceStep]]:
        """``[(view key, action, step), ...]`` of a rebalance requested in quiescent ``state``, one
        per answer (``[]`` where ``state`` is not quiescent); with boundary lags also one per
        answer to each boundary reading of the view that no earlier reading got (an answer given
        before makes the same verdicts: the properties read caught-up lags through the floor), and
        one per answer to each reading telling behind copies apart, as a triggered rebalance's
        readings are asked (:meth:`_boundary_choices`, :meth:`behind_probes`). Red team 14: a
        settled layout was shown with a caught-up copy at the limit only by a probing rebalance,
        so an assignor ranking caught-up copies by their raw lag in its "already balanced?" test
        passed the defaults (``tests/assignors/red14_ha.py``).

        Nothing but a trigger starts a rebalance in the model, and a membership change is one, so
        a settled layout is shown to the leader again only when a probing rebalance is scheduled:
        KIP-441's requirement 5 ("if the current assignment is already balanced, it must not alter
        the assignment") was put to the test on 2 of 36 views at the sticky defaults (red team 10).
        A consumer may ask for a rebalance at any time (``enforceRebalance``; a metadata change
        does too): these answers are *judged, not explored* -- following them would add a state
        per settled layout and an event with no bound, and every per-answer property is judged
        on the answer alone. A violation's trace ends with this rebalance, a real step of the
        model (``Action.requested``). The leader's own state (``_LastState``) is left alone: an
        engine asks this while expanding another state."""
        if not state.members or not _enabled(state, Action("rebalance", requested=True)):
            return []
        joined, reported = self.joined(state)
        key = self._view_key(state, joined, reported)
        chooser = self._chooser
        answers = chooser.answers_for(key, lambda: self.view_from_key(key))
        view = chooser.view_for(key, lambda: self.view_from_key(key))
        out = [
            (key, Action("rebalance", choice=c, requested=True), RebalanceStep(view=view, assignment=a, delivered=self._hand_over(joined, a)))
            for c, a in enumerate(answers)
        ]
        if not self.bounds.boundary_lags:
            return out
        seen = set(answers)
        for reading, rkey in self._readings(*key):
            try:
                got = chooser.answers_for(rkey, lambda rkey=rkey: self.view_from_key(rkey))
            except AssignorError as error:
                error.reading = reading  # which view failed: the finding's trace shows it
                raise
            rview = None
            for c, a in enumerate(got):
                if reading not in BEHIND_READINGS:
                    if a in seen:
                        continue
                    seen.add(a)
                if rview is None:
                    rview = chooser.view_for(rkey, lambda rkey=rkey: self.view_from_key(rkey))
                step = RebalanceStep(view=rview, assignment=a, delivered=self._hand_over(joined, a))
                out.append((rkey, Action("rebalance", choice=c, requested=True, lags=reading), step))
        return out

    def boundary_summary(self) -> tuple[int, int]:
        """``(asked, otherwise)``: views the assignor was asked at a boundary reading, and of those
        the ones it answered otherwise than the same view at the canonical lags (each a new step),
        over the views still in the chooser's memo."""
        memo = self._chooser._memo
        asked = otherwise = 0
        for key, answers in memo.items():
            if len(key) == 3 and key[2] not in BEHIND_READINGS:
                asked += 1
                canonical = memo.get(key[:2])
                if canonical is None or set(answers) - set(canonical):
                    otherwise += 1
        return asked, otherwise

    def behind_summary(self) -> int:
        """Views the assignor was asked with behind copies spread apart (:meth:`behind_probes`),
        over the views still in the chooser's memo."""
        return sum(1 for key in self._chooser._memo if len(key) == 3 and key[2] in BEHIND_READINGS)

    def step_key(self, state: GroupState, action: Action):
        """The view key of the view a rebalance ``action`` in ``state`` shows the leader: the
        :meth:`view_key`, or that of its lag reading (``action.lags``)."""
        if action.lags is None:
            return self.view_key(state)
        entry = self._reading_entry(state, action.lags)
        return None if entry is None else entry[0]

    def _answers(self, state: GroupState) -> tuple:
        """The assignor's answers on the view of ``state`` (the view itself not built)."""
        last = self._joined_key(state)
        spawned = self._chooser.spawned  # the most ids handed out in a state asking this view, when recorded
        if spawned is not None and spawned.get(last.key, 0) < state.spawned:
            spawned[last.key] = state.spawned
        if last.answers is None:
            key = last.key
            last.answers = self._chooser.answers_for(key, lambda: self.view_from_key(key))
        return last.answers

    # -- answers computed ahead (model/answers_ahead.py) ------------------------------------
    def answers_ahead(self) -> bool:
        """Have a built-in assignor's answers computed ahead on the second core while exploring
        (:mod:`rebalproof.model.answers_ahead`); False (and nothing done) for any other assignor,
        or where processes cannot be forked. An engine offers each state it discovers
        (:meth:`offer_ahead`); :meth:`close_answers_ahead` ends it."""
        from rebalproof.model.answers_ahead import AnswersAhead, can_fork
        from rebalproof.model.assignors.spec import ResolvedAssignor
        from rebalproof.model.group_assignor import OneChoice

        inner = self._chooser.inner
        builtin = isinstance(inner, OneChoice) and isinstance(inner.assignor, ResolvedAssignor) and inner.assignor.kind == "builtin"
        if not builtin or not can_fork() or self._chooser.ahead is not None:
            return False
        memo = self._chooser._memo
        self._chooser.ahead = AnswersAhead(inner, self.view_from_key, memo.__contains__)
        return True

    @property
    def offer_ahead(self):
        """``offer(state)`` for an engine to call on each state it discovers, or None when no
        answers are computed ahead."""
        ahead = self._chooser.ahead
        if ahead is None:
            return None

        def offer(state: GroupState) -> None:
            if state.triggers and state.members:  # a rebalance is enabled: its view is fixed now
                joined, reported = self.joined(state)
                ahead.offer(self._view_key(state, joined, reported))

        return offer

    def close_answers_ahead(self):
        """End the answers computed ahead; their helper's memory
        (:mod:`rebalproof.model.helper_memory`), or None."""
        ahead = self._chooser.ahead
        if ahead is None:
            return None
        self._chooser.ahead = None
        ahead.close()
        return ahead.memory

    def view_from_key(self, key) -> RebalanceInput:
        """The leader's view of a :meth:`view_key` or :meth:`step_key` (the key holds all of it but
        what the bounds fix; a step key's third part names its lag reading)."""
        members, memory, *reading = key
        reading = reading[0] if reading else None
        limit = self.bounds.acceptable_recovery_lag
        offsets = iter(behind_offsets(reading, members))
        return RebalanceInput(
            config=self._config,
            tasks=self._tasks,
            members=tuple(
                Member(
                    id=m_id,
                    capacity=self.capacity(m_id),
                    leaving=leaving,
                    active=active,
                    standby=standby,
                    warmup=warmup,
                    lags=reported_lags(reading, lags, active, standby, warmup, limit, next(offsets)),
                )
                for m_id, leaving, active, standby, warmup, lags in members
            ),
            previous_members=memory,
        )

    def views_asked(self) -> list[RebalanceInput]:
        """Every view the assignor answered (still in the chooser's memo), in the order first asked."""
        return self._chooser.views(self.view_from_key)

    def record_ids(self) -> None:
        """From now on record, per view asked, the pool ids handed out in the states that asked it
        (for :meth:`views_asked_with_ids`; off by default: only a reduced ``--symmetry auto`` run needs it)."""
        if self._chooser.spawned is None:
            self._chooser.spawned = {}

    def views_asked_with_ids(self, start: int = 0) -> list[tuple[RebalanceInput, tuple[str, ...]]]:
        """:meth:`views_asked`, each with the pool ids handed out (``I1 .. I<spawned>``) in the
        states that asked it (:meth:`record_ids`; the whole pool where not recorded): the ids
        symmetry reduction renames among. ``start``: from the view asked ``start``-th on (in the
        order asked)."""
        pool = self.bounds.member_ids
        spawned = self._chooser.spawned or {}
        keys = itertools.islice(self._chooser._memo, start, None)
        return [(self.view_from_key(key), pool[: spawned.get(key, len(pool))]) for key in keys]

    def views_asked_count(self) -> int:
        """How many distinct views the assignor was asked so far."""
        return len(self._chooser._memo)

    def rebalance_step(self, state: GroupState, action: Action) -> RebalanceStep | None:
        """The view, answer and hand-over of a ``rebalance`` action (None when disabled)."""
        if action.kind != "rebalance" or not state.members or not _enabled(state, action):
            return None
        reading = action.lags
        if reading is not None and not self.bounds.boundary_lags:
            return None
        view, answers = self._answers_for(state, reading)
        if not 0 <= action.choice < len(answers):
            return None
        last = self._last.at(state)
        at = action.choice if reading is None else (reading, action.choice)
        step = last.steps.get(at)
        if step is None:
            raw = answers[action.choice]
            step = last.steps[at] = RebalanceStep(view=view, assignment=raw, delivered=self._hand_over(last.joined, raw))
        return step

    def _sorted(self, tasks) -> tuple[str, ...]:
        if len(tasks) < 2:
            return tuple(tasks)  # nothing to order or to repeat (most roles of most members)
        order = self._order
        return tuple(sorted(set(tasks), key=lambda t: order.get(t, len(order))))

    def _hand_over(self, joined: tuple[MemberState, ...], raw: Assignment):
        """What each member is sent: its answer, actives held back until revoked where the
        protocol waits, and one copy per task."""
        owner = {}
        for m in joined:
            for t in m.active:
                owner[t] = m.id
        wait = self.protocol.handover_after_revoke
        out = []
        for m in joined:
            got = raw.of(m.id)
            active = got.active
            if wait:
                active = tuple(t for t in active if owner.get(t, m.id) == m.id)
            # a member told to hold a task twice (the no-colocation finding) holds one copy, the
            # first of active, standby, warmup: the run goes on from a state members can be in
            standby = tuple(t for t in got.standby if t not in got.active)
            warmup = tuple(t for t in got.warmup if t not in got.active and t not in got.standby)
            out.append((m.id, self._sorted(active), self._sorted(standby), self._sorted(warmup)))
        return tuple(out)

    # -- operators: guards, then updates -----------------------------------------------------
    def _rebalance(self, s: GroupState, a: Action) -> GroupState | None:
        if not s.members or not _enabled(s, a):
            return None
        if s.leader is None:
            if a.leader is None or not any(m.id == a.leader for m in s.members):
                return None
            leader = a.leader
        else:
            if a.leader is not None:
                return None
            leader = s.leader
        step = self.rebalance_step(s, a)
        if step is None:
            return None
        joined = self._last.at(s).joined
        return GroupState(
            members=joined,
            leader=leader,
            memory=tuple(m.id for m in joined),
            spawned=s.spawned,
            events=s.events,
            triggers=(),
            pending=step.delivered,
            probe=step.assignment.probing_rebalance,
        )

    def _deliver(self, s: GroupState, a: Action) -> GroupState | None:
        entry = next((e for e in s.pending if e[0] == a.member), None)
        if entry is None:
            return None
        _, active, standby, warmup = entry
        pending = tuple(e for e in s.pending if e[0] != a.member)
        triggers = s.triggers
        members = []
        leader, memory = s.leader, s.memory
        for m in s.members:
            if m.id != a.member:
                members.append(m)
                continue
            lags = dict(m.lags)
            grown = False  # a new copy to restore: its lag entry joins, and the order is made again
            for t in active + standby + warmup:
                if t in self._stateful and t not in lags:
                    lags[t] = BEHIND
                    grown = True
            revoked = set(m.active) - set(active)
            if revoked and self.protocol.rejoin_after_revoke:
                triggers = _with(triggers, "revoked")
            if self.protocol.leaving and m.leaving and not active:
                # "the leaving member will shut down itself once received the instruction to
                # revoke all its active tasks" (seed 001, Scale Down)
                triggers = _with(triggers, "left")
                if leader == m.id:
                    leader, memory = None, None
                continue
            ready = m.ready
            if self.protocol.ready_rejoin:
                ready = ready or self._ready_at_delivery(m, warmup, lags)
            members.append(
                m._replace(
                    active=active,
                    standby=standby,
                    warmup=warmup,
                    lags=tuple(sorted(lags.items(), key=lambda p: self._order[p[0]])) if grown else m.lags,
                    ready=ready,
                )
            )
        return s._replace(members=tuple(members), pending=pending, triggers=triggers, leader=leader, memory=memory)

    def _ready_at_delivery(self, m: MemberState, warmup: tuple[str, ...], lags: dict) -> bool:
        """Whether member ``m``, sent the learners ``warmup``, becomes ready (to rejoin) on delivery.

        Seed 001 (KIP-429), "Learner Task Essential": "When the restoration of learner task is
        complete, the stream instance will initiate a new JoinGroupRequest to call out another
        rebalance to do task transfer", and ``learner.partial.rebalance`` (Version 3.0): "If this
        config is set to true, new member will proactively trigger rebalance when it finishes
        restoring one learner task state each time, until it eventually finishes all the
        replaying. Otherwise, new worker will batch the ready call to ask for single round of
        rebalance."

        A *fresh* learner (new to ``m``) whose state ``m`` already holds caught up is restored at
        once: partial mode calls ready for it; batched mode when all of ``m``'s learners are then
        caught up. Batched mode also calls ready when the delivery itself completes the batch: all
        learners ``m`` keeps are caught up while those it held were not (the one still restoring
        was promoted or taken away, another had caught up meanwhile, so no restore is left to
        call ready). When the held ones were all caught up, ``m`` already called ready for them
        (its rejoin led to this answer): keeping them as learners calls for nothing new.
        """
        stateful = [w for w in warmup if w in self._stateful]
        all_caught_up = bool(stateful) and all(lags.get(w) == CAUGHT_UP for w in stateful)
        fresh = [w for w in stateful if w not in m.warmup]
        if any(lags.get(w) == CAUGHT_UP for w in fresh):
            return self.protocol.partial_rebalance or all_caught_up
        if self.protocol.partial_rebalance or not all_caught_up:
            return False
        return not all(lags.get(w) == CAUGHT_UP for w in m.warmup if w in self._stateful)

    def _member_update(self, s: GroupState, member_id: str, fn) -> GroupState | None:
        members = list(s.members)
        for i, m in enumerate(members):
            if m.id == member_id:
                new = fn(m)
                if new is None:
                    return None
                members[i] = new
                # GroupState(...) positionally: namedtuple's _replace costs three times as much
                return GroupState(tuple(members), s.leader, s.memory, s.spawned, s.events, s.triggers, s.pending, s.probe)
        return None

    def _restore(self, s: GroupState, a: Action) -> GroupState | None:
        # the most frequent step of a run: written out (no closure, no per-pair generator)
        members, task = s.members, a.task
        for i, m in enumerate(members):
            if m.id == a.member:
                break
        else:
            return None
        if not (task in m.active or task in m.standby or task in m.warmup):
            return None
        lags = m.lags
        for k, (t, c) in enumerate(lags):
            if t == task:
                break
        else:
            return None  # no local state: nothing to restore
        if c != BEHIND:
            return None
        lags = lags[:k] + ((task, CAUGHT_UP),) + lags[k + 1:]  # unchanged pairs shared
        ready = m.ready
        proto = self.protocol
        if proto.ready_rejoin and task in m.warmup:
            if proto.partial_rebalance:
                ready = True
            else:
                lag = dict(lags)
                ready = all(lag.get(w) == CAUGHT_UP for w in m.warmup if w in self._stateful)
        new = MemberState(m.id, m.active, m.standby, m.warmup, lags, m.leaving, ready)
        # GroupState(...) positionally: namedtuple's _replace costs three times as much
        return GroupState(members[:i] + (new,) + members[i + 1:], s.leader, s.memory, s.spawned, s.events, s.triggers, s.pending, s.probe)

    def _rejoin(self, s: GroupState, a: Action) -> GroupState | None:
        m = next((x for x in s.members if x.id == a.member), None)
        if m is None or not m.ready or not self.protocol.ready_rejoin:
            return None
        s = self._member_update(s, a.member, lambda x: x._replace(ready=False))
        return s._replace(triggers=_with(s.triggers, "ready"))

    def _probe(self, s: GroupState, a: Action) -> GroupState | None:
        # the probing interval (minutes) is long against a rebalance: it fires in a stable group
        if not s.probe or s.triggers or s.pending:
            return None
        return s._replace(probe=False, triggers=_with(s.triggers, "probe"))

    def _remove(self, s: GroupState, member_id: str, reason: str, counted: bool) -> GroupState:
        members = tuple(m for m in s.members if m.id != member_id)
        pending = tuple(e for e in s.pending if e[0] != member_id)
        leader, memory = s.leader, s.memory
        if leader == member_id:
            leader, memory = None, None
        return s._replace(
            members=members,
            pending=pending,
            leader=leader,
            memory=memory,
            events=s.events + (1 if counted else 0),
            triggers=_with(s.triggers, reason),
        )

    def _timeout(self, s: GroupState, a: Action) -> GroupState | None:
        m = next((x for x in s.members if x.id == a.member), None)
        if m is None or not m.leaving or not self.protocol.scale_down_timeout:
            return None
        return self._remove(s, m.id, "left", counted=False)

    def _unhosted(self, s: GroupState, a: Action, want: int) -> GroupState | None:
        # only while the group is stable: KIP-441 "Race between assignment and state cleanup"
        # (no cleanup from the join to the assignment), and the cleanup delay is long against a
        # rebalance and its immediate cooperative follow-up
        if not self.bounds.aging or s.triggers or s.pending:
            return None

        def fn(m: MemberState):
            if m.hosts(a.task) or m.lag(a.task) != want:
                return None
            if want == CAUGHT_UP:
                return m._replace(lags=tuple((t, BEHIND if t == a.task else c) for t, c in m.lags))
            return m._replace(lags=tuple((t, c) for t, c in m.lags if t != a.task))

        return self._member_update(s, a.member, fn)

    def _age(self, s, a):
        return self._unhosted(s, a, CAUGHT_UP)

    def _cleanup(self, s, a):
        return self._unhosted(s, a, BEHIND)

    def _join(self, s: GroupState, a: Action) -> GroupState | None:
        if s.events >= self.bounds.events or s.spawned >= self.bounds.instances:
            return None
        new_id = self.bounds.member_ids[s.spawned]
        if a.member is not None and a.member != new_id:
            return None
        members = tuple(sorted(s.members + (MemberState(id=new_id),), key=lambda m: (len(m.id), m.id)))
        return s._replace(members=members, spawned=s.spawned + 1, events=s.events + 1, triggers=_with(s.triggers, "join"))

    @staticmethod
    def _last_staying(s: GroupState, member_id: str) -> bool:
        """True when ``member_id`` is the only member not marked leaving."""
        return [m.id for m in s.members if not m.leaving] == [member_id]

    def _leave(self, s: GroupState, a: Action) -> GroupState | None:
        if s.events >= self.bounds.events or len(s.members) < 2 or a.member == s.leader:
            return None
        if self._last_staying(s, a.member):
            return None
        if not any(m.id == a.member for m in s.members):
            return None
        return self._remove(s, a.member, "left", counted=True)

    def _crash(self, s: GroupState, a: Action) -> GroupState | None:
        if s.events >= self.bounds.events or len(s.members) < 2 or s.leader is None:
            return None
        if a.member is not None and a.member != s.leader:
            return None
        if self._last_staying(s, s.leader):
            return None
        return self._remove(s, s.leader, "crash", counted=True)

    def _mark_leaving(self, s: GroupState, a: Action) -> GroupState | None:
        if not self.protocol.leaving or s.events >= self.bounds.events:
            return None
        if sum(1 for m in s.members if not m.leaving) < 2:
            return None
        m = next((x for x in s.members if x.id == a.member), None)
        if m is None or m.leaving:
            return None
        s = self._member_update(s, a.member, lambda x: x._replace(leaving=True))
        return s._replace(events=s.events + 1, triggers=_with(s.triggers, "leaving"))


_HANDLERS = {
    "rebalance": GroupModel._rebalance,
    "deliver": GroupModel._deliver,
    "restore": GroupModel._restore,
    "rejoin": GroupModel._rejoin,
    "probe": GroupModel._probe,
    "timeout": GroupModel._timeout,
    "age": GroupModel._age,
    "cleanup": GroupModel._cleanup,
    "join": GroupModel._join,
    "leave": GroupModel._leave,
    "crash": GroupModel._crash,
    "mark-leaving": GroupModel._mark_leaving,
}
