"""Scenario bounds of a check: the finite pieces the group model is built from.

Kept apart from the model (STYLE.md "Configuration is a frozen, keyword-only value"), read from
CLI flags or a TOML scenario file (bounds only, no code).

Abstraction choices:

- tasks are ``S_P`` for ``subtopologies`` x ``partitions`` stateful tasks; ``stateless``
  stateless tasks form one more subtopology (its index is ``subtopologies``);
- the instance pool is ``I1 .. I<instances>``; the first ``initial`` are the group at the start,
  the others can join, each id once (a restarted instance comes back as a new id, with no state).
  ``first_id`` starts the numbering elsewhere: with ``first_id = 8`` the pool is ``I8, I9, I10``,
  whose natural order (I8, I9, I10) and string order (I10, I8, I9) differ, so an assignor mixing
  the two orders shows it (red team 10: with ``I1 .. I9`` the two orders always agree);
- the group starts *warm* by default: the initial members hold what the assignor settles on
  from scratch, every copy caught up, the leader remembering them (the seeds' "Group stable
  state"); or *cold* (``start = "cold"``): nothing held, no state, a first rebalance due (seed
  001 "Scale Up from Empty Group"). The warm start keeps the state space to what happens after
  the group was running, which is what the seeds' scenarios are about;
- *capacities* (stream threads) are given per instance id of the pool, in order
  (``capacities = [1, 2]``: ``I1`` runs 1 thread, ``I2`` and every later id 2; a shorter list
  repeats its last value); the default is 1 thread everywhere. The leader's view carries them
  (``Member.capacity``), as KIP-441 "Defining 'balance'" counts balance per thread. A list is
  kept in its shortest form (trailing repeats dropped), so ``[1, 2, 2]`` and ``[1, 2]`` are one
  bound;
- lags are abstracted (see :mod:`rebalproof.model.group_state`); the leader's view reports a
  caught-up copy as lag 0 and a behind one as ``acceptable_recovery_lag + 1``, a copy with no
  state not at all (KIP-441 "Computing the most-caught-up instances"); with ``boundary_lags`` a
  rebalance may also report caught-up copies at exactly ``acceptable_recovery_lag``
  (:mod:`rebalproof.model.lag_readings`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from rebalproof.errors import InputError
from rebalproof.model.view import Config, Task
from rebalproof.reading import read_toml_file

__all__ = ["Bounds", "load_scenario", "BOUND_FIELDS"]


@dataclass(frozen=True, kw_only=True)
class Bounds:
    """The bounds and configs of one checked configuration."""

    instances: int = 3  # size of the pool of instance ids
    initial: int = 2  # members at the start
    subtopologies: int = 2
    partitions: int = 2
    stateless: int = 0  # stateless tasks (one more subtopology)
    standbys: int = 1  # num_standby_replicas
    max_warmups: int = 2  # max_warmup_replicas
    acceptable_recovery_lag: int = 10000
    events: int = 2  # membership events (join, leave, crash, mark-leaving)
    depth: int | None = None  # BFS depth bound (None: none)
    max_states: int | None = None  # stop after this many distinct states (None: none)
    aging: bool = True  # state of unhosted copies ages and is cleaned up
    start: str = "warm"  # "warm": a settled group, every copy caught up; "cold": nothing held, no state
    capacities: tuple[int, ...] = (1,)  # stream threads of I1, I2, ... (the last value repeats)
    boundary_lags: bool = False  # rebalances may also report caught-up lags at acceptable_recovery_lag
    first_id: int = 1  # the pool is I<first_id> .. I<first_id + instances - 1>

    def __post_init__(self):
        object.__setattr__(self, "capacities", _capacities(self.capacities))
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "capacities":
                continue
            if f.name == "start":
                if value not in ("warm", "cold"):
                    raise InputError(f"must be 'warm' or 'cold', got {value!r}", where="bounds.start")
                continue
            if f.name in ("aging", "boundary_lags"):
                if not isinstance(value, bool):
                    raise InputError(f"must be true or false, got {value!r}", where=f"bounds.{f.name}")
                continue
            if value is None and f.name in ("depth", "max_states"):
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InputError(f"must be a whole number of at least 0, got {value!r}", where=f"bounds.{f.name}")
        if self.max_warmups < 1:  # seed 002 on max_warmup_replicas: "Defaults to 2. Minimum is 1."
            raise InputError(
                f"max_warmup_replicas must be at least 1 (KIP-441: 'Minimum is 1'; with 0 no task could ever move to a "
                f"member without its state, so no assignor could balance), got {self.max_warmups}; use --max-warmups 1 or more",
                where="bounds.max_warmups",
            )
        tasks = self.subtopologies * self.partitions + self.stateless
        most = (1 << 63) - 2 - tasks  # a behind copy shows limit + 1, + up to one per copy a member holds (a reading)
        if self.acceptable_recovery_lag > most:  # red team 14: 2^63 shown, which the readers refuse and a long cannot hold
            raise InputError(
                f"acceptable_recovery_lag must be at most {most}: a behind copy is shown as acceptable_recovery_lag + 1 "
                f"(and up to {tasks} more with boundary lags), and every lag must fit a signed 64-bit integer (Kafka's long); "
                f"got {self.acceptable_recovery_lag}",
                where="bounds.acceptable_recovery_lag",
            )
        if self.initial < 1:
            raise InputError("the group needs at least 1 initial member", where="bounds.initial")
        if self.first_id < 1:
            raise InputError(f"instance ids start at I1 or later, got first_id {self.first_id}", where="bounds.first_id")
        if self.instances < self.initial:
            raise InputError(
                f"the pool of {self.instances} instances cannot hold {self.initial} initial members; raise --instances",
                where="bounds.instances",
            )
        if tasks < 1:
            raise InputError("there must be at least one task", where="bounds")
        if len(self.capacities) > self.instances:
            raise InputError(
                f"{len(self.capacities)} capacities for a pool of {self.instances} instances; give at most one per instance "
                "(a shorter list repeats its last value)",
                where="bounds.capacities",
            )
        if self.instances > 9 or tasks > 12:
            raise InputError("bounds too large for explicit-state checking here (at most 9 instances, 12 tasks)", where="bounds")

    @property
    def config(self) -> Config:
        return Config(
            num_standby_replicas=self.standbys,
            acceptable_recovery_lag=self.acceptable_recovery_lag,
            max_warmup_replicas=self.max_warmups,
        )

    @property
    def tasks(self) -> tuple[Task, ...]:
        out = [Task(id=f"{s}_{p}") for s in range(self.subtopologies) for p in range(self.partitions)]
        out += [Task(id=f"{self.subtopologies}_{p}", stateful=False) for p in range(self.stateless)]
        return tuple(out)

    @property
    def member_ids(self) -> tuple[str, ...]:
        return tuple(f"I{i}" for i in range(self.first_id, self.first_id + self.instances))

    def capacity_at(self, position: int) -> int:
        """Stream threads of the instance at ``position`` (0-based) of the pool: the last value repeats."""
        return self.capacities[min(position, len(self.capacities) - 1)]

    @property
    def uniform_capacity(self) -> bool:
        """True when every instance of the pool runs the same number of threads."""
        return len(self.capacities) == 1

    def describe_capacities(self) -> str:
        """Per instance of the pool, e.g. ``1,2,2``."""
        return ",".join(str(self.capacity_at(i)) for i in range(self.instances))

    @property
    def behind_lag(self) -> int:
        """The lag the leader's view reports for a copy that is behind."""
        return self.acceptable_recovery_lag + 1

    def to_json(self) -> dict:
        """The bounds as JSON; ``capacities`` only when it is not the default (1 thread everywhere)."""
        out = asdict(self)
        if self.capacities == (1,):
            del out["capacities"]
        else:
            out["capacities"] = list(self.capacities)
        if not self.boundary_lags:
            del out["boundary_lags"]
        if self.first_id == 1:
            del out["first_id"]
        return out


BOUND_FIELDS = tuple(f.name for f in fields(Bounds))


def _capacities(value) -> tuple[int, ...]:
    """``value`` (a whole number, a list of them or ``"1,2,2"``) as a validated tuple in shortest form."""
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
        if not all(re.fullmatch(r"[0-9]+", p) for p in parts):
            raise InputError(
                f"must be whole numbers separated by commas (stream threads per instance, e.g. 1,2,2), got {value!r}",
                where="bounds.capacities",
            )
        value = [int(p) for p in parts]
    elif isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise InputError(
            f"must be a non-empty list of stream threads per instance (e.g. [1, 2, 2]), got {value!r}", where="bounds.capacities"
        )
    for c in value:
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise InputError(
                f"every capacity must be a whole number of at least 1 (stream threads), got {c!r}", where="bounds.capacities"
            )
    out = list(value)
    while len(out) > 1 and out[-1] == out[-2]:
        out.pop()
    return tuple(out)


def load_scenario(path: str | Path) -> dict:
    """Read a TOML scenario file: a table of bounds (plus optional ``protocol``/``assignor`` names).

    Only data: numbers, booleans and names. Unknown keys are an :class:`InputError`.
    """
    path = Path(path)
    data = read_toml_file(path, what="scenario")
    allowed = set(BOUND_FIELDS) | {"protocol", "assignor"}
    for key in data:
        if key not in allowed:
            raise InputError(
                f"unknown key '{key}' in scenario '{path}'; the keys are {', '.join(sorted(allowed))}",
                where=str(path),
            )
    for key in ("protocol", "assignor"):
        if key in data and (not isinstance(data[key], str) or not data[key].strip()):
            raise InputError(f"{key} must be a name in quotes, e.g. {key} = \"{'cooperative' if key == 'protocol' else 'ha'}\"",
                             where=f"scenario '{path}'")
    return data
