"""Distributed exploration: a level-synchronous breadth-first search with Spark expanding each level.

The design SPARK-NOTES.md measured fastest: the driver keeps the visited set as a sorted numpy
array of int64 fingerprints (8 bytes a state) plus parent links, level by level; Spark only
expands the frontier. Per level:

1. the frontier (states in discovery order) is split into buckets by a multiplicative
   (Fibonacci) hash of the fingerprints — even buckets whatever the fingerprints' low bits;
2. one Spark task per bucket checks every invariant on each of its states and expands them
   (many states per task), dropping successors it has already seen itself, and returns compact
   numpy arrays: successor fingerprint, parent index, action index, plus the successor states;
3. the driver keeps, per new fingerprint, the first discoverer in discovery order — the smallest
   (parent index, action index) — drops fingerprints already visited, orders the new states by
   that key, and merges them into the visited set.

Step 3 is exactly a FIFO queue's rule (see :mod:`rebalproof.pipeline.space`), so counts, depths,
verdicts and the shortest traces are those of the in-process engine, whatever the number of
partitions. The model is broadcast once per exploration. Checkpoints (every ``K`` levels or
``N`` seconds) let a long run resume after a kill: :mod:`rebalproof.pipeline.checkpoint`.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from rebalproof.errors import InputError
from rebalproof.pipeline.checkpoint import CheckpointStore, collect_columns, column_chunks
from rebalproof.pipeline.frontier import fibonacci_buckets, member, split_frontier, worker_visited
from rebalproof.pipeline.hadoopfs import qualify
from rebalproof.pipeline.space import Exploration, StateSpace, as_int64, replay_actions

__all__ = ["explore_distributed", "Checkpointing", "LevelReport"]

_LINKS_SCHEMA = "depth INT, ord LONG, fp LONG, parent LONG, action INT"



@dataclass(frozen=True, kw_only=True)
class Checkpointing:
    """When and where to checkpoint: every ``every_levels`` levels and/or ``every_seconds`` seconds.

    Tests use levels only (no clock). ``on_stage`` is a test hook called inside each save.
    """

    directory: str
    every_levels: int | None = None
    every_seconds: float | None = 300.0
    on_stage: Callable[[str, int], None] | None = None

    def __post_init__(self):
        if self.every_levels is not None and self.every_levels < 1:
            raise InputError(f"checkpoint every N levels needs N >= 1, got {self.every_levels}")
        if self.every_seconds is not None and self.every_seconds <= 0:
            raise InputError(f"checkpoint every N seconds needs N > 0, got {self.every_seconds}")


@dataclass(frozen=True, kw_only=True)
class LevelReport:
    """Progress after one level: the depth just discovered, its size, the total so far."""

    depth: int
    new_states: int
    states: int
    transitions: int
    checkpointed: bool


def _expand_buckets(space_bc, token: str, deltas, parts):
    """Spark task: check and expand each (indices, states) bucket; compact arrays out.

    Successors already visited (as of the previous level) or already found by this task are
    dropped here, so only candidates for the next level travel back to the driver.
    """
    space = space_bc.value
    visited = worker_visited(token, deltas)
    for indices, states in parts:
        violations = []
        fps, parents, actions, successors = [], [], [], []
        seen: set[int] = set()
        transitions = 0
        for index, state in zip(indices.tolist(), states):
            names = space.violations(state)
            if names:
                violations.append((index, tuple(names)))
            for action_index, (_, successor) in enumerate(space.expand(state)):
                transitions += 1
                fp = as_int64(space.fingerprint(successor))
                if fp in seen:
                    continue  # an earlier (parent, action) of this task found it first
                seen.add(fp)
                fps.append(fp)
                parents.append(index)
                actions.append(action_index)
                successors.append(successor)
        fps = np.array(fps, dtype=np.int64)
        fresh = np.flatnonzero(~member(visited, fps))
        yield (
            violations,
            fps[fresh],
            np.array(parents, dtype=np.int64)[fresh],
            np.array(actions, dtype=np.int32)[fresh],
            [successors[i] for i in fresh.tolist()],
            transitions,
        )


def _probe_buckets(space_bc, parts):
    """Spark task for the level at ``max_depth``: check it, and report fingerprints beyond it."""
    space = space_bc.value
    for indices, states in parts:
        violations = []
        beyond: set[int] = set()
        for index, state in zip(indices.tolist(), states):
            names = space.violations(state)
            if names:
                violations.append((index, tuple(names)))
            beyond.update(as_int64(space.fingerprint(s)) for _, s in space.expand(state))
        yield violations, np.array(sorted(beyond), dtype=np.int64)


class _Run:
    """The driver's side of one exploration."""

    def __init__(self, space: StateSpace, spark, partitions: int, max_depth: int | None):
        self.space = space
        self.spark = spark
        self.partitions = partitions
        self.max_depth = max_depth
        self.links: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.visited = np.empty(0, dtype=np.int64)
        self.frontier: list = []
        self.transitions = 0
        self.violations: dict[str, tuple[int, int]] = {}
        self.complete = True
        self.deltas: list = []  # one broadcast of sorted new fingerprints per level
        self.token = uuid.uuid4().hex

    def _publish(self, fps: np.ndarray) -> None:
        self.deltas.append(self.spark.sparkContext.broadcast(np.sort(fps)))

    def close(self) -> None:
        for delta in self.deltas:
            delta.destroy()
        self.deltas = []

    @property
    def level(self) -> int:
        return len(self.links) - 1

    def start(self) -> None:
        fps, states = [], []
        for state in self.space.init_states():
            fp = as_int64(self.space.fingerprint(state))
            if fp not in fps:
                fps.append(fp)
                states.append(state)
        fps = np.array(fps, dtype=np.int64)
        self.links = [(fps, np.zeros(len(fps), dtype=np.int64), np.full(len(fps), -1, dtype=np.int32))]
        self.visited = np.sort(fps)
        self.frontier = states
        self._publish(fps)

    def save(self, store: CheckpointStore) -> None:
        """Checkpoint: parent links of the levels not yet saved, the frontier, the counters."""
        chunks = []
        for depth in range(store.saved_upto + 1, self.level + 1):
            fps, parents, actions = self.links[depth]
            columns = {"ord": np.arange(len(fps), dtype=np.int64), "fp": fps, "parent": parents, "action": actions}
            chunks += column_chunks(columns, {"depth": depth})
        meta = {
            "space": repr(self.space),
            "max_depth": self.max_depth,
            "transitions": self.transitions,
            "violations": {name: list(where) for name, where in sorted(self.violations.items())},
        }
        store.save(self.level, tables={"links": (_LINKS_SCHEMA, chunks)}, frontier=(self.links[-1][0], self.frontier), meta=meta)

    def restore(self, store: CheckpointStore) -> None:
        """Continue from the newest checkpoint in ``store``."""
        loaded = store.load()
        meta = loaded.meta
        if meta["space"] != repr(self.space) or meta["max_depth"] != self.max_depth:
            raise InputError(
                f"checkpoint {store.uri} was written for another model or bound "
                f"({meta['space']}, max depth {meta['max_depth']}); give the same ones, or start without --resume"
            )
        cols = collect_columns(
            loaded.table("links", _LINKS_SCHEMA),
            {"depth": np.int64, "ord": np.int64, "fp": np.int64, "parent": np.int64, "action": np.int32},
            order_by=("depth", "ord"),
        )
        bounds = np.searchsorted(cols["depth"], np.arange(loaded.level + 2))
        self.links = [(cols["fp"][a:b], cols["parent"][a:b], cols["action"][a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
        fps, states = loaded.frontier()
        if len(self.links) != loaded.level + 1 or not np.array_equal(fps, self.links[-1][0]):
            raise InputError(f"checkpoint {store.uri} is incomplete (its frontier does not match its links); start afresh without --resume")
        self.visited = np.sort(cols["fp"])
        self.frontier = states
        self.transitions = meta["transitions"]
        self.violations = {k: tuple(v) for k, v in meta["violations"].items()}
        self._publish(self.visited)

    def _buckets(self) -> list[tuple[np.ndarray, list]]:
        return split_frontier(self.links[-1][0], self.frontier, self.partitions)

    def _record(self, violations) -> None:
        fps = self.links[-1][0]
        first: dict[str, int] = {}
        for index, names in violations:
            for name in names:
                if index < first.get(name, len(fps)):
                    first[name] = index
        for name, index in sorted(first.items()):
            self.violations.setdefault(name, (self.level, int(fps[index])))

    def step(self, broadcast) -> None:
        """Check and expand the frontier; afterwards the frontier is the next level."""
        buckets = self._buckets()
        rdd = self.spark.sparkContext.parallelize(buckets, len(buckets))
        if self.max_depth is not None and self.level >= self.max_depth:
            results = rdd.mapPartitions(partial(_probe_buckets, broadcast)).collect()
            self._record(sorted(v for result in results for v in result[0]))
            beyond = np.concatenate([result[1] for result in results])
            if len(beyond) and not member(self.visited, beyond).all():
                self.complete = False
            self.frontier = []
            return
        results = rdd.mapPartitions(partial(_expand_buckets, broadcast, self.token, tuple(self.deltas))).collect()
        self._record(sorted(v for result in results for v in result[0]))
        self.transitions += sum(result[5] for result in results)
        fps = np.concatenate([r[1] for r in results])
        parents = np.concatenate([r[2] for r in results])
        actions = np.concatenate([r[3] for r in results])
        successors = [s for r in results for s in r[4]]
        # first discoverer per fingerprint: sort by (fp, parent index, action index)
        order = np.lexsort((actions, parents, fps))
        keep = np.ones(len(order), dtype=bool)
        keep[1:] = fps[order[1:]] != fps[order[:-1]]
        winners = order[keep]
        winners = winners[~member(self.visited, fps[winners])]
        winners = winners[np.lexsort((actions[winners], parents[winners]))]  # discovery order
        new_fps = fps[winners]
        parent_fps = self.links[-1][0][parents[winners]]
        self.links.append((new_fps, parent_fps, actions[winners]))
        self.frontier = [successors[i] for i in winners.tolist()]
        if len(new_fps):
            ordered = np.sort(new_fps)
            self.visited = np.insert(self.visited, np.searchsorted(self.visited, ordered), ordered)
            self._publish(ordered)

    def trace(self, name: str):
        depth, fp = self.violations[name]
        path, fps = [], []
        for d in range(depth, 0, -1):
            level_fps, parents, actions = self.links[d]
            (at,) = np.flatnonzero(level_fps == fp)[:1]
            path.append(int(actions[at]))
            fps.append(fp)
            fp = int(parents[at])
        return replay_actions(self.space, fp, path[::-1], fps[::-1], name)

    def result(self, engine: str, seconds: float) -> Exploration:
        levels = tuple(len(link[0]) for link in self.links if len(link[0]))
        return Exploration(
            states=sum(levels),
            transitions=self.transitions,
            levels=levels,
            complete=self.complete,
            violations=tuple((name, self.trace(name)) for name in sorted(self.violations)),
            invariant_names=tuple(self.space.invariant_names),
            engine=engine,
            seconds=seconds,
        )


def explore_distributed(
    space: StateSpace,
    *,
    spark,
    partitions: int | None = None,
    max_depth: int | None = None,
    checkpoint: Checkpointing | None = None,
    resume: str | None = None,
    on_level: Callable[[LevelReport], None] | None = None,
) -> Exploration:
    """Explore ``space`` breadth-first with Spark; equal to :func:`~rebalproof.pipeline.space.explore_reference`.

    ``partitions``: tasks per level (default: twice Spark's parallelism; small levels use
    fewer). ``resume``: a checkpoint directory to continue from; checkpoints go on only when
    ``checkpoint`` is given (its directory may be ``resume`` itself). ``on_level`` is
    called after each level (and after its checkpoint); an exception raised there stops the run.
    """
    if max_depth is not None and max_depth < 0:
        raise InputError(f"max depth must be at least 0, got {max_depth}")
    started = time.monotonic()
    context = spark.sparkContext
    partitions = partitions or 2 * max(1, int(context.defaultParallelism))
    run = _Run(space, spark, partitions, max_depth)
    store = None
    if resume is not None:
        source = CheckpointStore(spark, resume, on_stage=checkpoint.on_stage if checkpoint else None)
        run.restore(source)
        if checkpoint is not None and qualify(checkpoint.directory) == qualify(resume):
            store = source
    if checkpoint is not None and store is None:
        store = CheckpointStore(spark, checkpoint.directory, on_stage=checkpoint.on_stage)
        if resume is not None:  # a new directory needs every level, not only the new ones
            run.save(store)
    if resume is None:
        run.start()
    last_save, last_level = time.monotonic(), run.level
    broadcast = context.broadcast(space)
    try:
        while run.frontier:
            run.step(broadcast)
            saved = False
            if store is not None and checkpoint is not None and run.frontier:
                due_levels = checkpoint.every_levels is not None and run.level - last_level >= checkpoint.every_levels
                due_clock = checkpoint.every_seconds is not None and time.monotonic() - last_save >= checkpoint.every_seconds
                if due_levels or due_clock:
                    run.save(store)
                    last_save, last_level, saved = time.monotonic(), run.level, True
            if on_level is not None and len(run.links[-1][0]):
                on_level(
                    LevelReport(
                        depth=run.level,
                        new_states=len(run.links[-1][0]),
                        states=len(run.visited),
                        transitions=run.transitions,
                        checkpointed=saved,
                    )
                )
    finally:
        run.close()
        broadcast.destroy()
    return run.result(f"spark {context.master} x{partitions}", time.monotonic() - started)
