"""States and actions of the group model: frozen, hashable, picklable values.

The group runs one member-side protocol (:mod:`rebalproof.model.group_protocol`) with one
assignor at the leader. A :class:`GroupState` is everything that decides what can happen next;
one comment per variable, as in a TLA+ spec:

``members``
    the instances in the group, sorted by id (:class:`MemberState`);
``leader``
    the leader's id, or None when the leader is gone and the next rebalance elects one
    (seed 001 "Leader Transfer": "S2 takes over the leader");
``memory``
    the leader's memory of the last round (``previous_members``); None after a leader change
    (seed 001 "Backing up Information on Leader": it lives on the leader only);
``spawned``
    how many ids of the pool have been handed out (``I1`` .. ``I<spawned>``); a join takes the
    next one, ids are never reused;
``events``
    membership events used so far (bounded by :attr:`Bounds.events`);
``triggers``
    why a rebalance is needed (sorted reasons; empty: none is needed);
``pending``
    assignments of the rebalance in progress not yet delivered, ``(member, active, standby,
    warmup)``; a member missing there has received its assignment (or the rebalance is over);
``probe``
    the leader scheduled a probing rebalance (KIP-441 "Probing Rebalances").

Abstraction choices (stated once, here):

- **Lags** are abstracted to three classes per (member, task): caught-up (:data:`CAUGHT_UP`),
  behind (:data:`BEHIND`) and none (absent from ``lags``). Hosting a copy creates its store,
  so a copy a member starts to host is at least behind at once; one *restore* step takes a
  hosted copy from behind to caught-up (the "2-step abstraction": none -> behind on hosting,
  behind -> caught-up by restore). State a member no longer hosts *ages* (caught-up ->
  behind) and is *cleaned up* (behind -> none), only while the group is stable: KIP-441's
  mutex keeps the cleaner off from a join to the assignment, and its delay (minutes) is long
  against a rebalance and its immediate cooperative follow-up.
- **Processing**: a member processes a task it holds as active once the copy is caught up
  (stateless tasks at once). **Owning** a task (holding it as active, restoring or not) is what
  ``single-owner`` forbids twice: the stronger reading of "process the same task".
- **No generation counter**: a generation number would make every state new and the space
  infinite; a trace counts rebalances along its actions instead.
- **Capacity** (stream threads) is not part of a state: it is fixed per instance id of the pool
  by the bounds (:attr:`~rebalproof.model.group_bounds.Bounds.capacities`, 1 thread each by
  default) and reaches the leader's view as ``Member.capacity``.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "CAUGHT_UP",
    "BEHIND",
    "LAG_CLASSES",
    "MemberState",
    "GroupState",
    "Action",
    "ACTION_KINDS",
    "FAIR_KINDS",
    "MEMBERSHIP_KINDS",
    "member_of",
    "is_stable",
    "is_quiescent",
    "layout",
    "owners",
    "processing",
]

CAUGHT_UP = 0
BEHIND = 1
#: Names of the lag classes as traces show them ("none" is the absence of a lag).
LAG_CLASSES = {CAUGHT_UP: "caught-up", BEHIND: "behind"}


class MemberState(NamedTuple):
    """One instance: its copies and roles, its local state, its leaving flag."""

    id: str
    #: tasks it owns as active (holds their input partitions)
    active: tuple[str, ...] = ()
    #: tasks it hosts as standby
    standby: tuple[str, ...] = ()
    #: tasks it hosts as warmup (KIP-441) / learner (KIP-429)
    warmup: tuple[str, ...] = ()
    #: (task, lag class) for every stateful task it has local state for, sorted by task
    lags: tuple[tuple[str, int], ...] = ()
    #: marked to shut down (KIP-429 v2 ``isLeaving``)
    leaving: bool = False
    #: a learner became ready and the member has not rejoined to say so (KIP-429 learner protocol)
    ready: bool = False

    def lag(self, task: str) -> int | None:
        """Its lag class on ``task``; None when it has no local state."""
        for t, c in self.lags:
            if t == task:
                return c
        return None

    def hosts(self, task: str) -> bool:
        return task in self.active or task in self.standby or task in self.warmup

    @property
    def copies(self) -> tuple[str, ...]:
        return self.active + self.standby + self.warmup


class GroupState(NamedTuple):
    """The whole group; see the module docstring for one line per variable."""

    members: tuple[MemberState, ...]
    leader: str | None
    memory: tuple[str, ...] | None
    spawned: int
    events: int
    triggers: tuple[str, ...] = ()
    pending: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = ()
    probe: bool = False


class Action(NamedTuple):
    """One step. Traces name steps by action, never by a state's hash.

    ``kind`` is one of :data:`ACTION_KINDS`; ``member``/``task`` say whom it is about;
    ``choice`` picks among a nondeterministic assignor's answers; ``leader`` names the leader a
    rebalance elects when the old one is gone; ``lags`` names the lag reading the leader's view
    reports (:mod:`rebalproof.model.lag_readings`; None: the canonical one), ``choice`` then
    picking among the answers to that view. ``requested``: a rebalance some member asks for in a
    quiescent group, no membership having changed (a consumer's ``enforceRebalance``, a metadata
    change); judged, not explored (:meth:`GroupModel.requested_probes
    <rebalproof.model.group_model.GroupModel.requested_probes>`).
    """

    kind: str
    member: str | None = None
    task: str | None = None
    choice: int = 0
    leader: str | None = None
    lags: str | None = None
    requested: bool = False

    def to_json(self) -> dict:
        out = {"kind": self.kind}
        if self.member is not None:
            out["member"] = self.member
        if self.task is not None:
            out["task"] = self.task
        if self.kind == "rebalance":
            out["choice"] = self.choice
        if self.leader is not None:
            out["leader"] = self.leader
        if self.lags is not None:
            out["lags"] = self.lags
        if self.requested:
            out["requested"] = True
        return out

    @classmethod
    def from_json(cls, obj: dict) -> "Action":
        return cls(
            kind=obj["kind"],
            member=obj.get("member"),
            task=obj.get("task"),
            choice=obj.get("choice", 0),
            leader=obj.get("leader"),
            lags=obj.get("lags"),
            requested=bool(obj.get("requested", False)),
        )

    def describe(self) -> str:
        parts = [self.kind]
        if self.member:
            parts.append(self.member)
        if self.task:
            parts.append(self.task)
        if self.kind == "rebalance" and self.choice:
            parts.append(f"choice {self.choice}")
        if self.leader:
            parts.append(f"(leader {self.leader})")
        if self.lags:
            parts.append(f"(lags: {self.lags})")
        if self.requested:
            parts.append("(requested in a quiescent group)")
        return " ".join(parts)

    @property
    def fairness_key(self) -> tuple:
        """Weak fairness is per (kind, member, task): which answer a rebalance picks is not."""
        return (self.kind, self.member, self.task)


#: Every kind of action, in the stable order :meth:`GroupModel.actions` lists them.
ACTION_KINDS = (
    "rebalance",  # all members join (revoking what the protocol says), the leader assigns
    "deliver",  # one member receives its assignment: revokes what it lost, starts what it gained
    "restore",  # a hosted copy catches up (behind -> caught-up)
    "rejoin",  # a member with a ready learner rejoins (KIP-429)
    "probe",  # the scheduled probing rebalance happens (KIP-441)
    "timeout",  # scale-down timeout: a leaving member shuts down (KIP-429 v2)
    "age",  # state a member no longer hosts falls behind
    "cleanup",  # state a member no longer hosts is deleted
    "join",  # a new instance joins (next id of the pool, no local state)
    "leave",  # a member that is not the leader leaves (graceful leave or crash: the same here)
    "crash",  # the leader crashes: its memory is lost, the next rebalance elects a leader
    # (neither takes the last member that is not leaving: someone must be left to hand over to)
    "mark-leaving",  # the scaling tool marks a member as leaving (KIP-429 v2)
)
#: Kinds under weak fairness: if one stays enabled it eventually happens.
FAIR_KINDS = frozenset({"rebalance", "deliver", "restore", "rejoin", "probe", "timeout"})
#: Kinds that change membership and use the events budget.
MEMBERSHIP_KINDS = frozenset({"join", "leave", "crash", "mark-leaving"})


def member_of(state: GroupState, member_id: str) -> MemberState | None:
    for m in state.members:
        if m.id == member_id:
            return m
    return None


def is_stable(state: GroupState) -> bool:
    """No rebalance in progress and none needed (``no-lost-task`` is checked here)."""
    return not state.triggers and not state.pending


def is_quiescent(state: GroupState) -> bool:
    """Stable, and nothing will start another rebalance by itself: no probe, no ready learner."""
    return not state.triggers and not state.pending and not state.probe and not any(m.ready for m in state.members)


def layout(state: GroupState) -> tuple:
    """Who holds what: ``((member, active, standby, warmup), ...)`` for members holding anything."""
    return tuple((m.id, m.active, m.standby, m.warmup) for m in state.members if m.active or m.standby or m.warmup)


def owners(state: GroupState, task: str) -> tuple[str, ...]:
    """Members owning ``task`` (holding it as active)."""
    return tuple(m.id for m in state.members if task in m.active)


def processing(member: MemberState, task: str, stateful: bool) -> bool:
    """True when the member owns the task and is processing it (its copy is caught up)."""
    if task not in member.active:
        return False
    return (not stateful) or member.lag(task) == CAUGHT_UP
