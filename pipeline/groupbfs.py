"""The Spark engine for the group model: the local explorer's very result, level by level.

:func:`explore_spark` takes what :func:`rebalproof.model.explorer.explore` takes and returns the
same :class:`~rebalproof.model.explorer.Exploration` — the same state numbering (BFS order),
parent links, depths, edges (grouped by source, in expansion order), action ids, fingerprints,
completeness and bound — and leaves a :class:`~rebalproof.properties.run.RunMonitor` in the
state the local run leaves it (per-state flags, layouts, unprocessed tasks; per-edge weights and
moves; first discoveries; assignor errors). :func:`rebalproof.properties.run.evaluate` therefore
gives identical verdicts and traces, liveness included. The tests compare every array.

How: the states never pass through the driver between Spark levels. Each level's frontier is an
RDD with one bucket of (positions, states) per partition; one Spark task per bucket expands its
states, runs a worker-local RunMonitor on the edges it walks and on its candidate states (the
successors its worker's copy of the visited fingerprints does not prove visited), keeps the
candidates where they are (persisted, packed once) and sends the driver compact arrays only. The
driver asks the visited set (:mod:`rebalproof.pipeline.visited`: in the driver while small, then
partitioned on Spark by fingerprint hash, one job a level) which successors are new, keeps, per
new fingerprint, the first discoverer in the local explorer's order (parent position, then action
position), numbers the new states and the edges as the FIFO queue would, merges the monitors'
records, and broadcasts which candidates won: the next level's buckets are selected from the
persisted candidates in place, or, when one partition has grown more than 1.2 times the mean,
shuffled to partitions by a hash of their fingerprints. The driver holds the graph's compact
arrays the result is made of, and the visited set only until it moves to Spark; small levels (the
first ones, and the last ones while the visited set is in the driver) are expanded in the driver,
by the same code, and their frontier travels once.

The local explorer's stops are reproduced exactly, mid-level included: ``max_states`` (checked
before each expansion, with the states found so far), ``monitor.stop()`` (a promised ``always``
property discovered, with ``stop_early``), the depth bound. Only ``max_seconds`` is checked
between levels (a time limit is not reproducible anyway).
"""

from __future__ import annotations

import time
import uuid
from array import array
from dataclasses import replace
from functools import partial

import numpy as np

from rebalproof.errors import AssignorError, InputError
from rebalproof.model.group_por import ample_expand
from rebalproof.pipeline.bfs import Checkpointing
from rebalproof.pipeline.checkpoint import CheckpointStore, collect_columns, column_chunks
from rebalproof.pipeline.frontier import (
    collector_paused,
    fibonacci_buckets,
    member,
    pack_states,
    split_frontier,
    unpack_states,
    worker_cached,
    worker_visited,
)
from rebalproof.pipeline.hadoopfs import qualify
from rebalproof.pipeline.space import as_int64
from rebalproof.pipeline.visited import DriverVisited, PartitionedVisited

__all__ = ["explore_spark", "spark_explorer", "Checkpointing"]

_NOT_STABLE = 0xFFFFFFFF
#: the visited set moves from the driver to Spark (partitioned) at the first Spark level that
#: starts with this many states visited (16 bytes a state in the driver until then)
PARTITION_VISITED_AT = 100_000


class _Job:
    """What every task needs, shipped once per exploration (cloudpickled, then broadcast)."""

    def __init__(self, model, fingerprinter, ctx, properties, por=False):
        self.model = model
        self.fingerprinter = fingerprinter
        self.ctx = ctx
        self.properties = properties
        self.por = por  # partial-order reduction: the ample sets of rebalproof.model.group_por

    def new_monitor(self):
        if self.ctx is None:
            return None
        from rebalproof.properties.run import RunMonitor

        monitor = RunMonitor(self.ctx, self.model, properties=self.properties)
        # the monitor's memos are pure functions of their keys: one per worker for the whole
        # exploration (a task's own would judge again every view the previous tasks judged)
        memos = self.__dict__.setdefault("_memos", {"attainable": {}, "judged": {}, "clean": {}})
        monitor._attainable = memos["attainable"]
        if monitor.judge is not None:
            monitor.judge.track_edges = True  # the driver keeps only the edges the local run walks
            monitor.judge._memo = memos["judged"]
            monitor.judge._clean = memos["clean"]
        return monitor


def _load_job(job_bc, token: str) -> _Job:
    from pyspark import cloudpickle

    return worker_cached(token, lambda: cloudpickle.loads(job_bc.value))


def _new_names(monitor, before: int) -> list[str]:
    return list(monitor.discoveries)[before:]


def _expand_bucket(job: _Job, visited: np.ndarray, positions: np.ndarray, states: list) -> tuple[dict, list]:
    """Expand one bucket of a level: everything the driver needs, in compact arrays, and the
    candidate states (the new successors not visited before this level, in ``cand_fp`` order),
    which stay where they were made when the bucket is a Spark task."""
    started = time.process_time()
    model, fingerprint = job.model, job.fingerprinter
    monitor = job.new_monitor()
    chooser = getattr(model, "_chooser", None)
    calls, hits = getattr(chooser, "calls", 0), getattr(chooser, "hits", 0)
    degrees = np.full(len(positions), -1, dtype=np.int64)
    errors = []
    probe_errors = []  # the assignor's failures on behind probes, judged beside the edges
    edge_fp, edge_act = [], []
    actions: dict = {}
    seen: set[int] = set()
    cand_fp, cand_pos, cand_k, cand_states = [], [], [], []
    edge_disc = {}
    expand_disc = {}  # name -> (position, discovery) of a rebalance requested at that position's expansion
    e = 0
    reduced = 0
    keep_quiescent = getattr(monitor, "requests_rebalances", False)  # every quiescent state reached (group_por)

    def is_old(h) -> bool:  # discovered at a depth <= this level's (the level-synchronous proviso)
        return bool(member(visited, np.array([as_int64(h)], dtype=np.int64))[0])

    for slot, (pos, state) in enumerate(zip(positions.tolist(), states)):
        try:
            if job.por:
                successors, ample = ample_expand(model, state, fingerprint=fingerprint, is_old=is_old, keep_quiescent=keep_quiescent)
                reduced += ample
            else:
                successors = model.expand(state)
        except AssignorError as error:
            errors.append((pos, *_error_fields(error)))
            continue
        degrees[slot] = len(successors)
        if monitor is not None:  # a rebalance requested here, judged, not explored (RunMonitor.on_expand)
            before, failed = len(monitor.discoveries), len(monitor.errors)
            monitor.on_expand(pos, state, len(successors))
            if len(monitor.discoveries) != before:
                for name in _new_names(monitor, before):
                    expand_disc[name] = (pos, monitor.discoveries[name])
            if len(monitor.errors) != failed:
                probe_errors.extend((pos, *_error_fields(error)) for _, error in monitor.errors[failed:])
                del monitor.errors[failed:]
        for k, (action, nxt) in enumerate(successors):
            aid = actions.setdefault(action, len(actions))
            h = as_int64(fingerprint(nxt))
            edge_fp.append(h)
            edge_act.append(aid)
            if h not in seen:
                seen.add(h)
                cand_fp.append(h)
                cand_pos.append(pos)
                cand_k.append(k)
                cand_states.append(nxt)
            if monitor is not None:
                before, failed = len(monitor.discoveries), len(monitor.errors)
                monitor.on_edge(e, pos, state, action, nxt, -1)
                if len(monitor.discoveries) != before:  # rare: a first discovery on this edge
                    for name in _new_names(monitor, before):
                        edge_disc[name] = (e, monitor.discoveries[name])
                if len(monitor.errors) != failed:  # the assignor failed on a behind probe (no failed expansion)
                    probe_errors.extend((pos, *_error_fields(error)) for _, error in monitor.errors[failed:])
                    del monitor.errors[failed:]
            e += 1
    cand_fp = np.array(cand_fp, dtype=np.int64)
    keep = np.flatnonzero(~member(visited, cand_fp))
    kept_states = [cand_states[i] for i in keep.tolist()]
    out = {
        "positions": positions,
        "degrees": degrees,
        "errors": errors,
        "edge_fp": np.array(edge_fp, dtype=np.int64),
        "edge_act": np.array(edge_act, dtype=np.int64),
        "actions": list(actions),
        "cand_fp": cand_fp[keep],
        "cand_pos": np.array(cand_pos, dtype=np.int64)[keep],
        "cand_k": np.array(cand_k, dtype=np.int64)[keep],
        "probe_errors": probe_errors,
    }
    if monitor is not None:
        state_disc = {}
        for local, state in enumerate(kept_states):
            before = len(monitor.discoveries)
            monitor.on_state(local, state)
            if len(monitor.discoveries) != before:
                for name in _new_names(monitor, before):
                    state_disc[name] = (local, monitor.discoveries[name])
        table = [None] * len(monitor._layouts)
        for lay, lid in monitor._layouts.items():
            table[lid] = lay
        out.update(
            flags=bytes(monitor.flags),
            layout_id=np.array(monitor.layout_id, dtype=np.int64),
            layouts=table,
            unprocessed=np.array(monitor.unprocessed, dtype=np.uint64),
            state_disc=state_disc,
            edge_weight=bytes(monitor.edge_weight),
            edge_moved=dict(monitor.edge_moved),
            edge_unforced=dict(monitor.edge_unforced),
            edge_disc=edge_disc,
            expand_disc=expand_disc,
            judged=monitor.judge.records() if monitor.judge is not None else None,
        )
    out["calls"] = getattr(chooser, "calls", 0) - calls
    out["hits"] = getattr(chooser, "hits", 0) - hits
    out["reduced"] = reduced
    out["cpu"] = time.process_time() - started
    return out, kept_states


def _one_bucket(parts) -> tuple[np.ndarray, list]:
    """The partition's frontier as one (positions, states) bucket (a partition holds one, or none)."""
    positions, states = [], []
    for p, s in parts:
        positions.append(p)
        states.extend(s)
    return (np.concatenate(positions) if positions else np.empty(0, dtype=np.int64)), states


def _expand_task(job_bc, token: str, deltas, parts):
    """Spark task: expand the partition's bucket; one ``(records, packed candidate states)``.

    The candidates are packed here, once (:func:`~rebalproof.pipeline.frontier.pack_states`): the
    persisted RDD keeps them as one bytes value, so collecting the records does not unpack them,
    and only the next level's selection unpacks the winners.
    """
    with collector_paused():
        job = _load_job(job_bc, token)
        visited = worker_visited(token, deltas)
        out, kept_states = _expand_bucket(job, visited, *_one_bucket(parts))
        blob = pack_states(job.model, kept_states)
        del kept_states
    yield out, blob


def _records(element) -> dict:
    return element[0]


def _select_task(job_bc, token: str, selection_bc, index: int, parts):
    """Spark task: the next level's frontier bucket of partition ``index``, from its candidates.

    ``selection_bc.value[index]`` is ``(local, positions)``: which of the partition's candidate
    states won (first discoverer in the local explorer's order) and their positions in the level.
    """
    local, positions = selection_bc.value[index]
    model = _load_job(job_bc, token).model
    for _, blob in parts:
        yield positions, unpack_states(model, blob, local.tolist())


def _select_to_buckets(job_bc, token: str, selection_bc, index: int, parts):
    """Spark task: like :func:`_select_task`, but each winner keyed by the partition it moves to
    (``selection_bc.value[index]`` is ``(local, positions, targets)``): a skewed frontier is
    evened out by a shuffle, by a hash of the fingerprints."""
    local, positions, targets = selection_bc.value[index]
    model = _load_job(job_bc, token).model
    for _, blob in parts:
        states = unpack_states(model, blob, local.tolist())  # the winners, in ``local`` order
        for target in np.unique(targets).tolist():
            mine = np.flatnonzero(targets == target)
            yield target, (positions[mine], pack_states(model, [states[i] for i in mine.tolist()]))


def _same_partition(key: int) -> int:
    return key


def _merge_buckets(job_bc, token: str, parts):
    """Spark task: the pieces shuffled to this partition, as one bucket in position order."""
    positions, states = [], []
    model = _load_job(job_bc, token).model
    for _, (p, blob) in parts:
        positions.append(p)
        states.extend(unpack_states(model, blob))
    if not positions:
        yield np.empty(0, dtype=np.int64), []
        return
    positions = np.concatenate(positions)
    order = np.argsort(positions, kind="stable")
    yield positions[order], [states[i] for i in order.tolist()]


_SKEW = 1.2  # a Spark frontier whose largest partition is this much above the mean is evened out


def _gather(frontier_rdd, n: int) -> list:
    """The frontier's states in the driver, by position (for a small level or a checkpoint)."""
    states: list = [None] * n
    for positions, part in frontier_rdd.collect():
        for pos, state in zip(positions.tolist(), part):
            states[pos] = state
    return states


def _gathered(typecode: str, pieces: list) -> array:
    """One ``array`` of ``typecode`` from numpy ``pieces`` (per level), emptying the list as it
    goes: the driver never holds a field twice over (whole concatenations, then copies of
    them, were about 100 MiB more than the local engine at the end of a million-state run)."""
    out = array(typecode)
    kind = {"q": "i", "l": "i", "H": "u", "I": "u", "Q": "u"}[typecode]
    dtype = np.dtype(f"{kind}{out.itemsize}")
    pieces.reverse()
    while pieces:
        out.frombytes(memoryview(np.ascontiguousarray(pieces.pop(), dtype=dtype)).cast("B"))
    return out


def _typed(typecode: str, values: np.ndarray) -> array:
    out = array(typecode)
    kind = {"q": "i", "l": "i", "H": "u", "I": "u", "Q": "u"}[typecode]
    out.frombytes(np.ascontiguousarray(values).astype(np.dtype(f"{kind}{out.itemsize}")).tobytes())
    return out


class _Graph:
    """The driver's side: visited fingerprints, the graph arrays (by level), the monitor."""

    def __init__(self, model, fingerprinter, monitor, run_monitor: bool):
        self.model = model
        self.fingerprinter = fingerprinter
        self.monitor = monitor
        self.run_monitor = run_monitor
        # fingerprint -> state index: in the driver until it is moved to Spark (partitioned)
        self.visited: DriverVisited | PartitionedVisited = DriverVisited()
        self.partitioned_at: int | None = None  # the level whose expansion moved it, if it moved
        self.fps: list[np.ndarray] = []  # per level, BFS order
        self.parent: list[np.ndarray] = []
        self.via: list[np.ndarray] = []
        self.first_edge: list[np.ndarray] = []
        self.edge_src: list[np.ndarray] = []
        self.edge_dst: list[np.ndarray] = []
        self.edge_act: list[np.ndarray] = []
        self.actions: list = []
        self.action_ids: dict = {}
        self.states = 0
        self.edges = 0
        self.errors = 0
        self.calls = 0
        # the assignor's calls and memo hits in Spark's workers (the driver's chooser counts its own)
        self.worker_calls = 0
        self.worker_hits = 0
        self.init: list = []
        # the frontier (states at the deepest level) lives in the driver (``frontier``) or in
        # Spark (``frontier_rdd``: one (positions, states) bucket per partition, derived from the
        # persisted candidates of the last Spark level), never in both
        self.frontier: list | None = []
        self.frontier_rdd = None
        self.frontier_size = 0
        self.selection: list = []  # per task of the last level: (winning candidates, their positions)
        self._held: list = []  # the persisted RDD and broadcast the Spark frontier derives from
        self.spent: list = []  # broadcasts to destroy at the end
        self.levels: list[str] = []  # per level expanded: "d" in the driver, "s" on Spark
        self.skew = 1.0  # largest partition of a Spark frontier against the mean, worst level
        self.evened = 0  # Spark frontiers evened out by a shuffle (skew above _SKEW)
        self.local_levels = 0
        self.saved_edges = 0
        self.spark_levels = 0
        self.task_seconds = 0.0
        self.job_seconds = 0.0  # wall time waiting for Spark's expansion jobs (the driver idles)
        self.merge_seconds = 0.0  # wall time merging levels in the driver (the workers idle)
        self.driver_seconds = 0.0  # wall time expanding small levels in the driver
        self.reduced = 0  # expansions that followed an ample set (partial-order reduction)
        self.resolve_seconds = 0.0  # wall time asking the visited set (a Spark job a level once partitioned)

    def partition_visited(self, context, partitions: int, level: int) -> None:
        """Move the visited set from the driver to Spark, partitioned by fingerprint hash."""
        self.visited = PartitionedVisited(context, self.visited, partitions)
        self.partitioned_at = level

    def start(self) -> None:
        fps, states = [], []
        for state in self.model.init_states():
            h = as_int64(self.fingerprinter(state))
            if h in fps:
                continue
            self.monitor.on_state(len(fps), state)
            fps.append(h)
            states.append(state)
        fps = np.array(fps, dtype=np.int64)
        self.fps.append(fps)
        self.parent.append(np.full(len(fps), -1, dtype=np.int64))
        self.via.append(np.full(len(fps), -1, dtype=np.int64))
        self.first_edge.append(np.full(len(fps), -1, dtype=np.int64))
        self.visited.add(fps, np.arange(len(fps), dtype=np.int64))
        self.states = len(fps)
        self.init = list(states)
        self.frontier_here(list(states))

    def frontier_here(self, states: list) -> None:
        """The next frontier is ``states``, in the driver."""
        self.release()
        self.frontier, self.frontier_size = states, len(states)

    def frontier_there(self, expanded, frontier_rdd, selection) -> None:
        """The next frontier is ``frontier_rdd``, selected by ``selection`` from ``expanded``."""
        self.release()
        self.frontier, self.frontier_rdd = None, frontier_rdd
        self._held = [expanded, selection]
        self.frontier_size = int(sum(len(positions) for _, positions in self.selection))

    def frontier_states(self) -> list:
        """The frontier's states in the driver (collected from Spark if they are there)."""
        if self.frontier is None:
            self.frontier_here(_gather(self.frontier_rdd, self.frontier_size))
        return self.frontier

    def release(self) -> None:
        """Drop what a Spark frontier held (the previous level's persisted candidates)."""
        expanded, selection = self._held or (None, None)
        self._held, self.frontier_rdd = [], None
        if expanded is not None:
            expanded.unpersist()
            selection.unpersist()  # destroyed at the end: RDDs still referencing it are serialized with jobs
            self.spent.append(selection)


def _stop_names(monitor) -> set[str]:
    if not getattr(monitor, "stop_early", False):
        return set()
    return {p.name for p in monitor.properties if p.expectation == "always" and p.promised(monitor.ctx)}


def _merge_state_records(monitor, results: list[dict], winners: np.ndarray, ctask: np.ndarray) -> None:
    """Append the new states' monitor records (flags, layouts, unprocessed tasks) in BFS order.

    ``winners`` index the tasks' candidates concatenated in task order, as the records are.
    Layouts get the driver's ids in order of first use, as the local run gives them.
    """
    flags = np.concatenate([np.frombuffer(r["flags"], dtype=np.uint8) for r in results])
    monitor.flags.extend(flags[winners].tobytes())
    unprocessed = np.concatenate([r["unprocessed"] for r in results])
    monitor.unprocessed.extend(unprocessed[winners].tolist())
    layout_local = np.concatenate([r["layout_id"] for r in results])[winners]
    stable = layout_local != _NOT_STABLE
    key = ctask[winners] * (1 << 32) + layout_local  # (task, local id); unique per layout table entry
    driver_id = np.full(len(winners), _NOT_STABLE, dtype=np.int64)
    if stable.any():
        keys, first, inverse = np.unique(key[stable], return_index=True, return_inverse=True)
        ids = np.empty(len(keys), dtype=np.int64)
        for u in np.argsort(first, kind="stable").tolist():  # in order of first use
            task, lid = divmod(int(keys[u]), 1 << 32)
            ids[u] = monitor._layouts.setdefault(results[task]["layouts"][lid], len(monitor._layouts))
        driver_id[stable] = ids[inverse.reshape(-1)]
    monitor.layout_id.extend(driver_id.tolist())


def _level(graph: _Graph, results: list[dict], max_states: int | None, stop_names: set[str]) -> int | None:
    """Merge one expanded level; returns the position where the local explorer stops, or None."""
    n = graph.frontier_size
    g0 = graph.states - n
    e0 = graph.edges
    monitor = graph.monitor

    # -- every successor's index, -1 for the new ones (one Spark job if the set is there) ---
    successors = np.unique(np.concatenate([r["edge_fp"] for r in results] or [np.empty(0, dtype=np.int64)]))
    clock = time.perf_counter()
    known = graph.visited.resolve(successors)
    graph.resolve_seconds += time.perf_counter() - clock

    # -- the new states, in discovery order -----------------------------------------------
    # candidates: the tasks' successors not dropped as visited by their own (partial) copy
    cfp = np.concatenate([r["cand_fp"] for r in results])
    cpos = np.concatenate([r["cand_pos"] for r in results])
    ck = np.concatenate([r["cand_k"] for r in results])
    ctask = np.concatenate([np.full(len(r["cand_fp"]), t, dtype=np.int64) for t, r in enumerate(results)])
    clocal = np.concatenate([np.arange(len(r["cand_fp"]), dtype=np.int64) for r in results])
    fresh = np.flatnonzero(known[np.searchsorted(successors, cfp)] < 0)  # a candidate is new
    order = fresh[np.lexsort((ck[fresh], cpos[fresh], cfp[fresh]))]
    first = np.ones(len(order), dtype=bool)
    first[1:] = cfp[order[1:]] != cfp[order[:-1]]
    winners = order[first]
    winners = winners[np.lexsort((ck[winners], cpos[winners]))]
    wpos = cpos[winners]

    # -- where the local explorer would stop within this level ----------------------------
    cut = n
    if max_states is not None:
        found_before = graph.states + np.searchsorted(wpos, np.arange(n), side="left")
        over = np.flatnonzero(found_before >= max_states)
        if len(over):
            cut = min(cut, int(over[0]))
    winner_rank = {}  # fingerprint -> rank among this level's new states
    for rank, w in enumerate(winners.tolist()):
        winner_rank[int(cfp[w])] = rank
    pending = stop_names - set(monitor.discoveries)
    if pending:
        times = []
        for t, r in enumerate(results):
            for name, (local, _) in r.get("state_disc", {}).items():
                rank = winner_rank.get(int(r["cand_fp"][local]))
                if name in pending and rank is not None:  # a visited state's discoveries were made when it was new
                    times.append(int(wpos[rank]))
            for name, (e, disc) in r.get("edge_disc", {}).items():
                if name in pending:
                    times.append(int(disc.state))
            for name, (pos, _) in r.get("expand_disc", {}).items():
                if name in pending:
                    times.append(int(pos))
            if "assignor-answers" in pending:
                times.extend(pos for pos, *_ in r["errors"])
        if times:
            cut = min(cut, min(times) + 1)
    kept = int(np.searchsorted(wpos, cut, side="left"))
    winners = winners[:kept]

    # -- edges: numbered by source position, then expansion order -------------------------
    degree = np.full(n, -1, dtype=np.int64)
    for r in results:
        degree[r["positions"]] = r["degrees"]
    expanded = (degree >= 0) & (np.arange(n) < cut)
    counts = np.where(expanded, degree, 0)
    firsts = e0 + np.cumsum(counts) - counts
    level_edges = int(counts.sum())
    graph.first_edge[-1] = np.where(expanded, firsts, -1)

    new_fps = cfp[winners]
    new_idx = graph.states + np.arange(kept, dtype=np.int64)
    graph.visited.add(new_fps, new_idx)
    known[np.searchsorted(successors, new_fps)] = new_idx  # every kept edge's target now

    src = np.empty(level_edges, dtype=np.uint32)  # the Exploration's own width (array "I")
    dst = np.empty(level_edges, dtype=np.uint32)
    act = np.empty(level_edges, dtype=np.uint32)
    weight = np.zeros(level_edges, dtype=np.uint8)
    firsts_of_action = []  # (global edge, task, local action) of actions first seen here
    task_edges = []
    for t, r in enumerate(results):
        deg = np.maximum(r["degrees"], 0)
        pos_of_edge = np.repeat(r["positions"], deg)
        starts = np.cumsum(deg) - deg
        k_of_edge = np.arange(len(pos_of_edge), dtype=np.int64) - np.repeat(starts, deg)
        keep_edge = pos_of_edge < cut
        global_edge = firsts[pos_of_edge] + k_of_edge  # meaningful where keep_edge
        task_edges.append((keep_edge, global_edge))
        if not keep_edge.any():
            continue
        local_act = r["edge_act"]
        acts_here, first_local = np.unique(local_act[keep_edge], return_index=True)
        edges_here = global_edge[keep_edge]
        for a, j in zip(acts_here.tolist(), first_local.tolist()):
            action = r["actions"][a]
            if action not in graph.action_ids:
                firsts_of_action.append((int(edges_here[j]), t, a))
    for _, t, a in sorted(firsts_of_action):
        action = results[t]["actions"][a]
        if action not in graph.action_ids:
            graph.action_ids[action] = len(graph.actions)
            graph.actions.append(action)
    for t, r in enumerate(results):
        keep_edge, global_edge = task_edges[t]
        if not keep_edge.any():
            continue
        slots = global_edge[keep_edge] - e0
        to_global = np.array([graph.action_ids.get(a, -1) for a in r["actions"]], dtype=np.int64)
        pos_of_edge = np.repeat(r["positions"], np.maximum(r["degrees"], 0))
        src[slots] = g0 + pos_of_edge[keep_edge]
        dst[slots] = known[np.searchsorted(successors, r["edge_fp"][keep_edge])]
        act[slots] = to_global[r["edge_act"][keep_edge]]
        if graph.run_monitor:
            weight[slots] = np.frombuffer(r["edge_weight"], dtype=np.uint8)[keep_edge]

    # -- the new states' parent links -----------------------------------------------------
    win_edge = firsts[wpos[:kept]] + ck[winners] - e0
    graph.fps.append(new_fps)
    graph.parent.append(g0 + wpos[:kept])
    graph.via.append(act[win_edge].astype(np.int64) if kept else np.empty(0, dtype=np.int64))
    graph.first_edge.append(np.full(kept, -1, dtype=np.int64))
    graph.edge_src.append(src)
    graph.edge_dst.append(dst)
    graph.edge_act.append(act)

    # -- the monitor: per-state and per-edge records, first discoveries, errors -----------
    if graph.run_monitor:
        _merge_state_records(monitor, results, winners, ctask)
        monitor.edge_weight.extend(weight.tobytes())
        moved, unforced = {}, {}
        for t, r in enumerate(results):
            keep_edge, global_edge = task_edges[t]
            for e, mask in r["edge_moved"].items():
                if keep_edge[e]:
                    moved[int(global_edge[e])] = mask
            for e, mask in r["edge_unforced"].items():
                if keep_edge[e]:
                    unforced[int(global_edge[e])] = mask
        for e in sorted(moved):
            monitor.edge_moved[e] = moved[e]
        for e in sorted(unforced):
            monitor.edge_unforced[e] = unforced[e]
        if monitor.judge is not None:  # the answers judged on the edges kept
            for t, r in enumerate(results):
                keep_edge = task_edges[t][0]
                monitor.judge.merge(*r["judged"], keep=lambda e, k=keep_edge: bool(k[e]), keep_expanded=lambda p: p < cut)
        best: dict[str, tuple[int, object]] = {}
        for t, r in enumerate(results):
            keep_edge, global_edge = task_edges[t]
            for name, (local, disc) in r["state_disc"].items():
                rank = winner_rank.get(int(r["cand_fp"][local]))
                if rank is not None and rank < kept and name not in monitor.discoveries:
                    where = graph.states + rank
                    if name not in best or where < best[name][0]:
                        best[name] = (where, replace(disc, state=where))
            for name, (e, disc) in r["edge_disc"].items():
                if keep_edge[e] and name not in monitor.discoveries:
                    where = int(global_edge[e])
                    if name not in best or where < best[name][0]:
                        best[name] = (where, replace(disc, state=g0 + int(disc.state)))
            for name, (pos, disc) in r.get("expand_disc", {}).items():
                if pos < cut and name not in monitor.discoveries:
                    where = int(firsts[pos]) - 0.5  # judged at the expansion, before the state's first edge
                    if name not in best or where < best[name][0]:
                        best[name] = (where, replace(disc, state=g0 + pos))
        for name in sorted(best):
            monitor.discoveries[name] = best[name][1]
    errors = sorted((e for r in results for e in r["errors"] if e[0] < cut), key=lambda e: e[0])
    probes = [e for r in results for e in r.get("probe_errors", ()) if e[0] < cut]
    # in the local run's order: by state, a state's failed expansion or its failed probe (never both)
    for _, probe, (pos, message, kind, assignor, input_json) in sorted(
            [(e[0], 0, e) for e in errors] + [(e[0], 1, e) for e in probes], key=lambda x: (x[0], x[1])):
        error = AssignorError(message, kind=kind, assignor=assignor, input_json=input_json)
        if probe:  # its finding came with its edge's discoveries; the run's failures count it
            monitor.errors.append((g0 + pos, error))
        else:
            monitor.on_assignor_error(g0 + pos, None, error)
    graph.errors += len(errors)
    graph.calls += sum(r["calls"] for r in results)

    # -- the next frontier: which candidates of each task won, at which positions ----------
    won_task = ctask[winners]
    graph.selection = [
        (clocal[winners[ranks]], ranks) for ranks in (np.flatnonzero(won_task == t) for t in range(len(results)))
    ]
    graph.frontier_size = kept
    graph.states += kept
    graph.edges += level_edges
    return cut if cut < n else None


_STATES_SCHEMA = "depth INT, idx LONG, fp LONG, parent LONG, via LONG, flags INT, layout LONG, unprocessed LONG"
_EXPANDED_SCHEMA = "idx LONG, first_edge LONG"
_EDGES_SCHEMA = "idx LONG, src LONG, dst LONG, act LONG, weight INT, moved LONG"


def _error_fields(error) -> tuple:
    return (str(error), error.kind, error.assignor, error.input_json)


def _error_from(fields: tuple) -> AssignorError:
    message, kind, assignor, input_json = fields
    return AssignorError(message, kind=kind, assignor=assignor, input_json=input_json)


def _identity(model, symmetry: bool, limits, monitor) -> str:
    """What must match for a checkpoint to be resumed (reprs of values, no object addresses)."""
    names = ",".join(p.name for p in getattr(monitor, "properties", ()))
    return (
        f"protocol={model.protocol!r} bounds={model.bounds!r} assignor={model.assignor_name} "
        f"symmetry={symmetry} max_depth={limits.max_depth} max_states={limits.max_states} monitor={names}"
    )


def _save(graph: _Graph, store, depth: int, identity: str) -> None:
    """Checkpoint at level ``depth``: rows new since the last save, the frontier, the driver's books."""
    monitor = graph.monitor
    sizes = [len(f) for f in graph.fps]
    starts = np.cumsum([0] + sizes)
    first_new = store.saved_upto + 1
    states = []
    for d in range(first_new, depth + 1):
        a, b = int(starts[d]), int(starts[d + 1])
        if graph.run_monitor:
            flags = np.frombuffer(bytes(monitor.flags[a:b]), dtype=np.uint8).astype(np.int64)
            layout = np.array(monitor.layout_id[a:b], dtype=np.int64)
            unprocessed = np.array(monitor.unprocessed[a:b], dtype=np.uint64).view(np.int64)
        else:
            flags = layout = unprocessed = np.zeros(b - a, dtype=np.int64)
        columns = {"idx": np.arange(a, b, dtype=np.int64), "fp": graph.fps[d], "parent": graph.parent[d], "via": graph.via[d],
                   "flags": flags, "layout": layout, "unprocessed": unprocessed}
        states += column_chunks(columns, {"depth": d})
    expanded_levels = range(max(store.saved_upto, 0), depth)
    expanded = []
    for d in expanded_levels:
        a = int(starts[d])
        expanded += column_chunks({"idx": np.arange(a, a + sizes[d], dtype=np.int64), "first_edge": graph.first_edge[d]})
    edge_src = np.concatenate(graph.edge_src) if graph.edge_src else np.empty(0, dtype=np.int64)
    edge_start = graph.saved_edges if store.saved_upto >= 0 else 0  # a fresh directory gets every edge
    sl = slice(edge_start, len(edge_src))
    edge_idx = np.arange(edge_start, len(edge_src), dtype=np.int64)
    if graph.run_monitor:
        weight = np.frombuffer(bytes(monitor.edge_weight[edge_start:]), dtype=np.uint8).astype(np.int64)
        moved = np.array([monitor.edge_moved.get(int(e), 0) for e in edge_idx], dtype=np.int64)
    else:
        weight = moved = np.zeros(len(edge_idx), dtype=np.int64)
    edges = column_chunks({
        "idx": edge_idx, "src": edge_src[sl], "dst": np.concatenate(graph.edge_dst)[sl],
        "act": np.concatenate(graph.edge_act)[sl], "weight": weight, "moved": moved,
    })
    discoveries = {
        name: replace(d, error=_error_fields(d.error)) if isinstance(d.error, AssignorError) else d
        for name, d in getattr(monitor, "discoveries", {}).items()
    }
    layouts = [None] * len(getattr(monitor, "_layouts", {}))
    for lay, lid in getattr(monitor, "_layouts", {}).items():
        layouts[lid] = lay
    blob = {
        "actions": graph.actions,
        "init": graph.init,
        "discoveries": discoveries,
        "errors": [(i, _error_fields(e)) for i, e in getattr(monitor, "errors", [])],
        "layouts": layouts,
        "edge_unforced": dict(getattr(monitor, "edge_unforced", {})),
        "judged": dict(monitor.judge.views) if getattr(monitor, "judge", None) is not None else {},
        "requested": sorted(monitor.judge.requested) if getattr(monitor, "judge", None) is not None else [],
        "counters": {"errors": graph.errors, "calls": graph.calls, "worker_calls": graph.worker_calls, "worker_hits": graph.worker_hits},
    }
    meta = {"identity": identity, "states": graph.states, "edges": graph.edges, "depth": depth, "reduced": graph.reduced}
    tables = {"states": (_STATES_SCHEMA, states), "expanded": (_EXPANDED_SCHEMA, expanded), "edges": (_EDGES_SCHEMA, edges)}
    store.save(depth, tables=tables, frontier=(graph.fps[-1], graph.frontier_states()), meta=meta, blob=blob)
    graph.saved_edges = len(edge_src)


def _restore(graph: _Graph, store, identity: str) -> int:
    """Load the newest checkpoint of ``store`` into ``graph``; the level to go on from."""
    loaded = store.load()
    if loaded.meta["identity"] != identity:
        raise InputError(
            f"checkpoint {store.uri} was written for another check ({loaded.meta['identity']}); "
            "give the same protocol, assignor, bounds and limits, or start without --resume"
        )
    depth = loaded.level
    rows = collect_columns(
        loaded.table("states", _STATES_SCHEMA),
        {"depth": np.int64, "idx": np.int64, "fp": np.int64, "parent": np.int64, "via": np.int64, "flags": np.int64, "layout": np.int64, "unprocessed": np.int64},
        order_by=("idx",),
    )
    if len(rows["idx"]) != loaded.meta["states"] or not np.array_equal(rows["idx"], np.arange(len(rows["idx"]))):
        raise InputError(f"checkpoint {store.uri} is incomplete (states are missing); start afresh without --resume")
    bounds = np.searchsorted(rows["depth"], np.arange(depth + 2))
    levels = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
    first_edge = np.full(len(rows["idx"]), -1, dtype=np.int64)
    expanded = collect_columns(loaded.table("expanded", _EXPANDED_SCHEMA), {"idx": np.int64, "first_edge": np.int64}, order_by=("idx",))
    first_edge[expanded["idx"]] = expanded["first_edge"]
    edges = collect_columns(
        loaded.table("edges", _EDGES_SCHEMA),
        {"idx": np.int64, "src": np.int64, "dst": np.int64, "act": np.int64, "weight": np.int64, "moved": np.int64},
        order_by=("idx",),
    )
    if len(edges["idx"]) != loaded.meta["edges"]:
        raise InputError(f"checkpoint {store.uri} is incomplete (edges are missing); start afresh without --resume")
    fps, frontier = loaded.frontier()
    blob = loaded.blob()
    graph.fps = [rows["fp"][a:b] for a, b in levels]
    graph.parent = [rows["parent"][a:b] for a, b in levels]
    graph.via = [rows["via"][a:b] for a, b in levels]
    graph.first_edge = [first_edge[a:b] for a, b in levels]
    if not np.array_equal(fps, graph.fps[-1]):
        raise InputError(f"checkpoint {store.uri} is incomplete (its frontier does not match its states); start afresh without --resume")
    graph.edge_src, graph.edge_dst, graph.edge_act = [edges["src"]], [edges["dst"]], [edges["act"]]
    graph.visited = DriverVisited(rows["fp"], rows["idx"])  # moved to Spark again at the next Spark level if large
    graph.actions = list(blob["actions"])
    graph.action_ids = {a: i for i, a in enumerate(graph.actions)}
    graph.states, graph.edges = loaded.meta["states"], loaded.meta["edges"]
    graph.reduced = loaded.meta.get("reduced", 0)  # ample expansions before the checkpoint (POR)
    graph.saved_edges = graph.edges
    graph.errors, graph.calls = blob["counters"]["errors"], blob["counters"]["calls"]
    graph.worker_calls = blob["counters"].get("worker_calls", 0)
    graph.worker_hits = blob["counters"].get("worker_hits", 0)
    graph.init = list(blob["init"])
    graph.frontier_here(frontier)
    if graph.run_monitor:
        monitor = graph.monitor
        monitor.flags = bytearray(rows["flags"].astype(np.uint8).tobytes())
        monitor.layout_id = _typed("I", rows["layout"])
        monitor.unprocessed = _typed("Q", rows["unprocessed"].view(np.uint64))
        monitor.edge_weight = bytearray(edges["weight"].astype(np.uint8).tobytes())
        monitor.edge_moved = {int(e): int(m) for e, m in zip(edges["idx"].tolist(), edges["moved"].tolist()) if m}
        monitor._layouts = {lay: lid for lid, lay in enumerate(blob["layouts"])}
        monitor.discoveries = {
            name: replace(d, error=_error_from(d.error)) if isinstance(d.error, tuple) else d for name, d in blob["discoveries"].items()
        }
        monitor.errors = [(i, _error_from(fields)) for i, fields in blob["errors"]]
        monitor.edge_unforced = dict(blob.get("edge_unforced", {}))
        if monitor.judge is not None:
            monitor.judge.views = dict(blob.get("judged", {}))
            monitor.judge.requested = set(blob.get("requested", ()))
    return depth


def explore_spark(
    model,
    *,
    symmetry: bool = False,
    limits=None,
    monitor=None,
    progress=None,
    spark=None,
    master: str | None = None,
    partitions: int | None = None,
    local_below: int = 1000,
    partition_visited_at: int = PARTITION_VISITED_AT,
    checkpoint_dir: str | None = None,
    checkpoint=None,
    resume: str | None = None,
    por: bool = False,
):
    """Explore ``model`` on Spark; the same :class:`~rebalproof.model.explorer.Exploration` as ``explore``.

    Takes :func:`~rebalproof.model.explorer.explore`'s arguments, plus ``spark`` (a session; by
    default :func:`~rebalproof.pipeline.session.spark_session` with ``master``) and
    ``partitions`` (tasks per level; default twice Spark's parallelism, fewer for small levels).
    Levels of fewer than ``local_below`` states are expanded in the driver, by the same code:
    a Spark job costs ~0.1-0.3 s whatever its size (0 sends every level to Spark).
    The visited set (fingerprint -> index) stays in the driver until the first Spark level that
    starts with ``partition_visited_at`` states visited; from there on it lives on Spark,
    partitioned by fingerprint hash (:class:`~rebalproof.pipeline.visited.PartitionedVisited`,
    one more job a level), and every later level is expanded on Spark.

    Checkpoints: ``checkpoint_dir`` saves every 5 minutes (``checkpoint``, a
    :class:`~rebalproof.pipeline.bfs.Checkpointing`, says when in levels or seconds);
    ``resume`` continues from the newest checkpoint of a directory and ends with the result of
    an uninterrupted run (saving on into ``checkpoint_dir``/``checkpoint`` if given). An
    exception raised by ``progress`` (called after every level) stops the run, as a crash would.
    ``monitor`` may be None, a plain :class:`~rebalproof.model.explorer.Monitor` or a
    :class:`~rebalproof.properties.run.RunMonitor`, which is left as a local run leaves it.
    The model must pickle (built-in and ``py:`` assignors do; ``exec:`` ones run locally).
    """
    from pyspark import StorageLevel, cloudpickle

    from rebalproof.model.explorer import Exploration, ExploreStats, Limits, Monitor, _peak_rss
    from rebalproof.model.group_fingerprint import Fingerprinter
    from rebalproof.pipeline.session import spark_session
    from rebalproof.properties.run import RunMonitor

    limits = limits or Limits()
    monitor = monitor if monitor is not None else Monitor()
    run_monitor = isinstance(monitor, RunMonitor)
    if not run_monitor and type(monitor) is not Monitor:
        raise InputError(
            f"the Spark engine distributes the run properties' RunMonitor only, not {type(monitor).__name__}; use the local engine"
        )
    fingerprinter = Fingerprinter(model.task_ids, symmetry=symmetry, classes=getattr(model, "capacity_classes", None))
    job = _Job(model, fingerprinter, monitor.ctx if run_monitor else None, monitor.properties if run_monitor else (), por=por)
    try:
        payload = cloudpickle.dumps(job)
    except Exception as exc:
        raise InputError(
            f"the model cannot be shipped to Spark's workers ({type(exc).__name__}: {exc}); "
            "exec: assignors run with the local engine (--engine local)"
        ) from None
    spark = spark or spark_session(master=master)
    context = spark.sparkContext
    partitions = partitions or 2 * max(1, int(context.defaultParallelism))
    if checkpoint is None and checkpoint_dir is not None:
        checkpoint = Checkpointing(directory=checkpoint_dir)
    started = time.perf_counter()
    graph = _Graph(model, fingerprinter, monitor, run_monitor)
    identity = _identity(model, symmetry, limits, monitor) + (" por" if por else "")
    store = None
    depth = 0
    if resume is not None:
        source = CheckpointStore(spark, resume, on_stage=checkpoint.on_stage if checkpoint else None)
        depth = _restore(graph, source, identity)
        if checkpoint is not None and qualify(checkpoint.directory) == qualify(resume):
            store = source
    else:
        graph.start()
    if checkpoint is not None and store is None:
        store = CheckpointStore(spark, checkpoint.directory, on_stage=checkpoint.on_stage)
        if resume is not None:  # a new directory needs every level, not only the new ones
            _save(graph, store, depth, identity)
    last_save, last_level = time.monotonic(), depth
    stop_names = _stop_names(monitor)
    token = uuid.uuid4().hex
    job_bc = context.broadcast(payload)
    deltas: list = []  # one broadcast of new fingerprints per batch of levels, for the workers' visited sets
    unpublished = [graph.visited.fps]  # new fingerprints not yet in the workers' copies
    complete, bound, unexpanded, stopped = True, None, 0, None
    try:
        while graph.frontier_size:
            n = graph.frontier_size
            if monitor.stop():
                stopped = "stopped at the first violation"
                unexpanded += n
                break
            if limits.max_seconds is not None and time.perf_counter() - started > limits.max_seconds:
                stopped = f"time limit {limits.max_seconds:g}s"
                unexpanded += n
                break
            spent = limits.budget.explore_spent() if getattr(limits, "budget", None) is not None else None
            if spent is not None:  # the command's time limit or an interrupt, between levels
                stopped = spent
                unexpanded += n
                break
            if limits.max_depth is not None and depth >= limits.max_depth:
                unexpanded += n
                complete, bound = False, f"depth {limits.max_depth}"
                break
            if limits.max_states is not None and graph.states >= limits.max_states:
                stopped = f"{limits.max_states} states"
                unexpanded += n
                break
            clock = time.perf_counter()
            in_driver = n < local_below and graph.partitioned_at is None
            if in_driver:  # a small level: cheaper here than a Spark job's fixed cost
                states = graph.frontier_states()
                out, candidates = _expand_bucket(job, graph.visited.fps, np.arange(n, dtype=np.int64), states)
                results = [out]
                graph.local_levels += 1
                graph.levels.append("d")
                graph.driver_seconds += time.perf_counter() - clock
            else:
                if unpublished:
                    deltas.append(context.broadcast(np.sort(np.concatenate(unpublished))))
                    unpublished = []
                if graph.partitioned_at is None and len(graph.visited) >= partition_visited_at:
                    graph.partition_visited(context, partitions, depth)
                if graph.frontier_rdd is None:  # from the driver: split by fingerprint
                    buckets = split_frontier(graph.fps[-1], graph.frontier, partitions)
                    graph.frontier_rdd = context.parallelize(buckets, len(buckets))
                expanded = graph.frontier_rdd.mapPartitions(partial(_expand_task, job_bc, token, tuple(deltas)))
                expanded.persist(StorageLevel.MEMORY_AND_DISK)  # not pipelined into what reads it
                expanded.localCheckpoint()  # and the lineage stops here: levels do not pile up in jobs
                results = expanded.map(_records).collect()
                graph.spark_levels += 1
                graph.levels.append("s")
                graph.worker_calls += sum(r["calls"] for r in results)
                graph.worker_hits += sum(r["hits"] for r in results)
                graph.job_seconds += time.perf_counter() - clock
            graph.task_seconds += sum(r["cpu"] for r in results)
            graph.reduced += sum(r["reduced"] for r in results)
            clock, resolving = time.perf_counter(), graph.resolve_seconds
            cut = _level(graph, results, limits.max_states, stop_names)
            graph.merge_seconds += time.perf_counter() - clock - (graph.resolve_seconds - resolving)
            depth += 1
            if cut is not None:
                stopped = "stopped at the first violation" if monitor.stop() else f"{limits.max_states} states"
                unexpanded += (n - cut) + graph.frontier_size
                if not in_driver:
                    expanded.unpersist()
                break
            if in_driver:
                graph.frontier_here([candidates[i] for i in graph.selection[0][0].tolist()])
            else:
                sizes = [len(positions) for _, positions in graph.selection]
                skew = max(sizes) * len(sizes) / max(1, sum(sizes))
                graph.skew = max(graph.skew, skew)
                if skew <= _SKEW:
                    selection = context.broadcast(graph.selection)
                    frontier = expanded.mapPartitionsWithIndex(partial(_select_task, job_bc, token, selection))
                else:
                    targets = fibonacci_buckets(graph.fps[-1], len(sizes))
                    selection = context.broadcast([(local, ranks, targets[ranks]) for local, ranks in graph.selection])
                    frontier = (expanded.mapPartitionsWithIndex(partial(_select_to_buckets, job_bc, token, selection))
                                .partitionBy(len(sizes), _same_partition).mapPartitions(partial(_merge_buckets, job_bc, token)))
                    graph.evened += 1
                graph.frontier_there(expanded, frontier, selection)
            if graph.partitioned_at is None or por:  # the cycle proviso asks the workers' copies (is_old)
                unpublished.append(graph.fps[-1])
            if store is not None and graph.frontier_size:
                due_levels = checkpoint.every_levels is not None and depth - last_level >= checkpoint.every_levels
                due_clock = checkpoint.every_seconds is not None and time.monotonic() - last_save >= checkpoint.every_seconds
                if due_levels or due_clock:
                    _save(graph, store, depth, identity)
                    last_save, last_level = time.monotonic(), depth
            if progress is not None:
                progress(graph.states, depth, graph.frontier_size, time.perf_counter() - started)
    finally:
        graph.release()
        graph.visited.release()
        for bc in [job_bc, *deltas, *graph.spent]:
            bc.destroy()
    if stopped is not None:
        complete, bound = False, stopped
    chooser = getattr(model, "_chooser", None)
    if chooser is not None and hasattr(chooser, "calls"):  # the report counts every process's calls, as a local run's
        chooser.calls += graph.worker_calls
        chooser.hits = getattr(chooser, "hits", 0) + graph.worker_hits

    exp = Exploration(model=model, fingerprinter=fingerprinter, symmetry=symmetry, por=por, reduced=graph.reduced)
    exp.init = graph.init
    levels = len(graph.fps)
    exp.depth = _gathered("H", [np.full(len(f), d, dtype=np.uint16) for d, f in zip(range(levels), graph.fps)])
    exp.parent = _gathered("q", graph.parent)
    exp.via = _gathered("l", graph.via)
    exp.first_edge = _gathered("q", graph.first_edge)
    exp.fingerprints = _gathered("Q", [f.view(np.uint64) for f in graph.fps])
    graph.fps.clear()
    exp.edge_src = _gathered("I", graph.edge_src)
    exp.edge_dst = _gathered("I", graph.edge_dst)
    exp.edge_act = _gathered("I", graph.edge_act)
    exp.actions = graph.actions
    exp.complete = complete
    exp.bound = bound
    exp.unexpanded = unexpanded
    exp.errors = graph.errors
    seconds = time.perf_counter() - started
    if progress is not None:
        progress(graph.states, max(exp.depth) if len(exp.depth) else 0, 0, seconds)
    stored = graph.visited.driver_bytes + sum(
        a.itemsize * len(a) for a in (exp.parent, exp.via, exp.depth, exp.edge_src, exp.edge_dst, exp.edge_act, exp.first_edge, exp.fingerprints)
    )
    exp.stats = ExploreStats(
        states=graph.states,
        edges=len(exp.edge_src),
        depth=max(exp.depth) if len(exp.depth) else 0,
        seconds=seconds,
        peak_rss_bytes=_peak_rss(),
        stored_bytes=stored,
        assignor_calls=graph.calls,
    )
    # not a field of Exploration: what the Spark run cost, for reports and the benchmark
    exp.spark_stats = {
        "master": context.master,
        "partitions": partitions,
        "spark_levels": graph.spark_levels,
        "driver_levels": graph.local_levels,
        "levels": "".join(graph.levels),
        "skew": round(graph.skew, 2),
        "evened": graph.evened,
        "task_seconds": round(graph.task_seconds, 3),
        "job_seconds": round(graph.job_seconds, 3),
        "merge_seconds": round(graph.merge_seconds, 3),
        "driver_seconds": round(graph.driver_seconds, 3),
        "resolve_seconds": round(graph.resolve_seconds, 3),
        "visited_partitioned_at": graph.partitioned_at,
        "visited_jobs": getattr(graph.visited, "jobs", 0),
    }
    return exp


def spark_explorer(
    *,
    master: str | None = None,
    partitions: int | None = None,
    checkpoint_dir: str | None = None,
    checkpoint_every_levels: int | None = None,
    resume: str | None = None,
    local_below: int = 1000,
    partition_visited_at: int = PARTITION_VISITED_AT,
    spark=None,
):
    """A drop-in for :func:`rebalproof.model.explorer.explore` that explores on Spark.

    The one-function hook for ``rebalproof check --engine spark``: wherever ``explore(model,
    symmetry=..., limits=..., monitor=..., progress=...)`` is called, call
    ``spark_explorer(master=..., ...)(model, symmetry=..., ...)`` instead; the result and the
    monitor come out as the local explorer leaves them. Checkpoints go to ``checkpoint_dir``
    every ``checkpoint_every_levels`` levels (default: every 5 minutes); ``resume`` continues
    from one (it implies checkpointing on into the same directory unless another is given).

    Examples
    --------
    >>> explore_on_spark = spark_explorer(master="local[2]", checkpoint_dir="/tmp/ck")
    >>> callable(explore_on_spark)
    True
    """
    directory = checkpoint_dir or resume
    checkpoint = None
    if directory is not None:
        checkpoint = Checkpointing(
            directory=directory,
            every_levels=checkpoint_every_levels,
            every_seconds=None if checkpoint_every_levels is not None else 300.0,
        )

    def explore_on_spark(model, *, symmetry: bool = False, limits=None, monitor=None, progress=None, por: bool = False):
        return explore_spark(
            model,
            symmetry=symmetry,
            por=por,
            limits=limits,
            monitor=monitor,
            progress=progress,
            spark=spark,
            master=master,
            partitions=partitions,
            local_below=local_below,
            partition_visited_at=partition_visited_at,
            checkpoint=checkpoint,
            resume=resume,
        )

    return explore_on_spark
