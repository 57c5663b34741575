"""The leader's view of one rebalance: config, tasks, members and the leader's memory.

Frozen, keyword-only values. They are built from JSON by :mod:`rebalproof.model.codec`,
which validates; building them directly also validates (see :meth:`RebalanceInput.__post_init__`),
so an invalid view cannot exist.

Abstraction choices (stated once, here):
- a member's ``active``/``standby``/``warmup`` lists are what it held going into the rebalance,
  kept as sorted tuples;
- ``lags`` maps each task the member has local state for to its lag in offsets; a stateful task
  missing there has no local state (KIP-441, "Computing the most-caught-up instances");
- an active stateful copy with no reported lag counts as lag 0: a member processing a task has
  its state current;
- ``previous_members is None`` means the leader's memory was lost (leader fail-over, KIP-429
  "Leader Transfer"): then nobody can be told apart as new.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rebalproof.errors import InputError
from rebalproof.model.names import id_key, sorted_ids, subtopology_of

__all__ = ["Config", "Task", "Member", "RebalanceInput"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Config:
    """Assignment configs of KIP-441 with their documented defaults."""

    num_standby_replicas: int = 0
    acceptable_recovery_lag: int = 10000
    max_warmup_replicas: int = 2

    def __post_init__(self):
        for name in ("num_standby_replicas", "acceptable_recovery_lag", "max_warmup_replicas"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InputError(f"must be a whole number, got {value!r}", where=f"config.{name}")
            if value < 0:
                raise InputError(f"must be at least 0, got {value}", where=f"config.{name}")


@dataclass(frozen=True, kw_only=True, slots=True)
class Task:
    """Partition ``P`` of subtopology ``S``, id ``S_P``; stateful (has a changelog) or not."""

    id: str
    stateful: bool = True

    @property
    def subtopology(self) -> str:
        return subtopology_of(self.id)


@dataclass(frozen=True, kw_only=True, slots=True)
class Member:
    """One instance of the group as the leader sees it at the join."""

    id: str
    capacity: int = 1
    leaving: bool = False
    active: tuple[str, ...] = ()
    standby: tuple[str, ...] = ()
    warmup: tuple[str, ...] = ()
    lags: tuple[tuple[str, int], ...] = ()
    _lag_map: dict = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        object.__setattr__(self, "active", sorted_ids(self.active))
        object.__setattr__(self, "standby", sorted_ids(self.standby))
        object.__setattr__(self, "warmup", sorted_ids(self.warmup))
        lags = self.lags.items() if isinstance(self.lags, dict) else self.lags
        object.__setattr__(self, "lags", tuple(sorted(((t, l) for t, l in lags), key=lambda p: id_key(p[0]))))
        object.__setattr__(self, "_lag_map", dict(self.lags))

    def lag(self, task_id: str) -> int | None:
        """The reported lag on ``task_id``, or None when the member has no local state for it."""
        return self._lag_map.get(task_id)

    @property
    def copies(self) -> tuple[str, ...]:
        """Every task the member holds in any role."""
        return self.active + self.standby + self.warmup


@dataclass(frozen=True, kw_only=True, slots=True)
class RebalanceInput:
    """What the leader sees at one rebalance: the contract's ``RebalanceInput``."""

    config: Config = Config()
    tasks: tuple[Task, ...] = ()
    members: tuple[Member, ...] = ()
    previous_members: tuple[str, ...] | None = None
    _tasks: dict = field(init=False, repr=False, compare=False, hash=False)
    _members: dict = field(init=False, repr=False, compare=False, hash=False)
    #: what pure functions of the view computed about it (:mod:`rebalproof.model.ranking`): a
    #: view never changes, and ``ha`` and the judge ask the same ranking many times
    _derived: dict = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        tasks = tuple(sorted(self.tasks, key=lambda t: id_key(t.id)))
        members = tuple(sorted(self.members, key=lambda m: id_key(m.id)))
        object.__setattr__(self, "tasks", tasks)
        object.__setattr__(self, "members", members)
        if self.previous_members is not None:
            object.__setattr__(self, "previous_members", sorted_ids(self.previous_members))
        object.__setattr__(self, "_tasks", {t.id: t for t in tasks})
        object.__setattr__(self, "_members", {m.id: m for m in members})
        object.__setattr__(self, "_derived", {})
        _validate(self)

    # -- lookups -------------------------------------------------------------
    def task(self, task_id: str) -> Task:
        return self._tasks[task_id]

    def member(self, member_id: str) -> Member:
        return self._members[member_id]

    def has_task(self, task_id: str) -> bool:
        return task_id in self._tasks

    def has_member(self, member_id: str) -> bool:
        return member_id in self._members

    @property
    def task_ids(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tasks)

    @property
    def member_ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.members)

    @property
    def stateful_task_ids(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tasks if t.stateful)

    @property
    def stateless_task_ids(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tasks if not t.stateful)

    def is_new(self, member_id: str) -> bool | None:
        """True when the member was not in the last round; None when the leader's memory is lost."""
        if self.previous_members is None:
            return None
        return member_id not in self.previous_members

    def owners(self, task_id: str) -> tuple[str, ...]:
        """Members that hold ``task_id`` as active going into the rebalance."""
        return tuple(m.id for m in self.members if task_id in m.active)

    def holders(self, task_id: str, role: str) -> tuple[str, ...]:
        """Members that hold ``task_id`` in ``role`` ("active", "standby" or "warmup")."""
        return tuple(m.id for m in self.members if task_id in getattr(m, role))

    def replace(self, **changes) -> "RebalanceInput":
        """A copy with some fields changed (validated again)."""
        fields = {
            "config": self.config,
            "tasks": self.tasks,
            "members": self.members,
            "previous_members": self.previous_members,
        }
        fields.update(changes)
        return RebalanceInput(**fields)


def _validate(view: RebalanceInput) -> None:
    """Precise checks of everything the contract rules out; the first problem is raised."""
    if not isinstance(view.config, Config):
        raise InputError("must be a Config", where="config")
    seen: set[str] = set()
    for task in view.tasks:
        if not isinstance(task.id, str) or not task.id:
            raise InputError("a task id must be a non-empty string", where="tasks")
        if not isinstance(task.stateful, bool):
            raise InputError(f"stateful must be true or false, got {task.stateful!r}", where=f"tasks[id={task.id}].stateful")
        if task.id in seen:
            raise InputError(f"task '{task.id}' is listed twice; give each task once", where="tasks")
        seen.add(task.id)
    seen = set()
    for member in view.members:
        where = f"members[id={member.id}]"
        if not isinstance(member.id, str) or not member.id:
            raise InputError("a member id must be a non-empty string", where="members")
        if not isinstance(member.leaving, bool):
            raise InputError(f"leaving must be true or false, got {member.leaving!r}", where=f"{where}.leaving")
        if member.id in seen:
            raise InputError(f"member '{member.id}' is listed twice; give each member once", where="members")
        seen.add(member.id)
        if isinstance(member.capacity, bool) or not isinstance(member.capacity, int) or member.capacity < 1:
            raise InputError(
                f"capacity of '{member.id}' must be a whole number of at least 1, got {member.capacity!r}",
                where=f"{where}.capacity",
            )
        held: dict[str, str] = {}
        for role in ("active", "standby", "warmup"):
            for task_id in getattr(member, role):
                if task_id not in view._tasks:
                    raise InputError(
                        f"'{member.id}' holds unknown task '{task_id}' as {role}; add it to \"tasks\" or remove it",
                        where=f"{where}.{role}",
                    )
                if task_id in held:
                    raise InputError(
                        f"'{member.id}' lists task '{task_id}' twice ({held[task_id]} and {role}); a member holds one copy of a task",
                        where=f"{where}.{role}",
                    )
                held[task_id] = role
        lag_seen: set[str] = set()
        for task_id, lag in member.lags:
            if task_id in lag_seen:
                raise InputError(f"lag for task '{task_id}' given twice", where=f"{where}.lags")
            lag_seen.add(task_id)
            if task_id not in view._tasks:
                raise InputError(
                    f"'{member.id}' reports a lag for unknown task '{task_id}'; add it to \"tasks\" or remove the lag",
                    where=f"{where}.lags",
                )
            if isinstance(lag, bool) or not isinstance(lag, int):
                raise InputError(f"lag of '{member.id}' on '{task_id}' must be a whole number, got {lag!r}", where=f"{where}.lags")
            if lag < 0:
                raise InputError(f"lag of '{member.id}' on '{task_id}' must be at least 0, got {lag}", where=f"{where}.lags")
    if view.previous_members is not None:
        prev_seen: set[str] = set()
        for member_id in view.previous_members:
            if not isinstance(member_id, str) or not member_id:
                raise InputError("member ids must be non-empty strings", where="previous_members")
            if member_id in prev_seen:
                raise InputError(f"member '{member_id}' is listed twice", where="previous_members")
            prev_seen.add(member_id)
