"""Breadth-first explicit-state exploration of a model (TLC / Stateright style).

:func:`explore` runs BFS over ``model.expand(state) -> [(action, next_state)]`` from
``model.init_states()``: the first violation found of a state or edge property is at the least
depth, so its trace is a shortest one. Visited states are kept as 64-bit fingerprints
(:mod:`rebalproof.model.group_fingerprint`) mapped to a dense index
(:class:`~rebalproof.model.visited.Visited`: flat sorted arrays but for the newest entries); per index we keep the
parent index and the *action* that reached it, so a path is rebuilt as a list of actions and
replayed through ``next_state`` (never identified by a state's hash: two actions reaching one
state keep their own identity). Every edge is kept (source, target, action) as compact arrays
for the liveness properties (:mod:`rebalproof.properties.run_liveness`).

A *monitor* (:class:`Monitor`) watches states and edges as they are found; the run properties
(:mod:`rebalproof.properties.run`) are one.

For another engine (a level-synchronous Spark BFS): the pure, picklable pieces are
``model.init_states()``, ``model.expand(state)``, and :class:`Fingerprinter` ``(state) -> int``;
:func:`expand_level` shows one BFS level with them.

Examples
--------
>>> from rebalproof.model.group_model import GroupModel
>>> from rebalproof.model.group_bounds import Bounds
>>> from rebalproof.model.group_protocol import protocol
>>> from rebalproof.model.toy_assignors import NaiveLearner
>>> model = GroupModel(protocol=protocol("eager"), bounds=Bounds(instances=2, initial=1, subtopologies=1,
...     partitions=2, standbys=0, events=1), assignor=NaiveLearner(learners_to="none"), assignor_name="rr")
>>> exp = explore(model)
>>> exp.complete, exp.states > 0
(True, True)
"""

from __future__ import annotations

import contextlib
import gc
import resource
import time
from array import array
from dataclasses import dataclass, field

import numpy as np

from rebalproof.errors import AssignorError
from rebalproof.model.budget import Budget
from rebalproof.model.group_fingerprint import Fingerprinter, collision_probability
from rebalproof.model.group_por import ample_expand
from rebalproof.model.frontier import ObjectFrontier, PackedFrontier
from rebalproof.model.group_state import Action
from rebalproof.model.visited import Visited

__all__ = ["Limits", "Monitor", "Exploration", "ExploreStats", "explore", "expand_level", "current_rss"]


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Where exploration stops: a BFS depth, a number of distinct states, a time in seconds, and
    a whole command's :class:`~rebalproof.model.budget.Budget` (its time limit, its interrupts)."""

    max_depth: int | None = None
    max_states: int | None = None
    max_seconds: float | None = None
    budget: Budget | None = None


class Monitor:
    """Watches exploration. Subclass and override what you need; every hook is optional."""

    def on_state(self, idx: int, state) -> None:
        """A new distinct state was found (index ``idx``)."""

    def on_edge(self, edge: int, src: int, state, action: Action, nxt, dst: int) -> None:
        """An edge ``src --action--> dst`` was found (``edge`` is its index)."""

    def on_expand(self, idx: int, state, successors: int) -> None:
        """State ``idx`` was expanded (its ``successors`` computed, before its edges are walked)."""

    def on_assignor_error(self, idx: int, state, error: AssignorError) -> None:
        """The assignor misbehaved while ``state`` was expanded (a finding)."""

    def stop(self) -> bool:
        """Return True to stop exploring early."""
        return False


@dataclass(kw_only=True)
class ExploreStats:
    """Final statistics, as TLC prints them."""

    states: int = 0
    edges: int = 0
    depth: int = 0
    seconds: float = 0.0
    peak_rss_bytes: int = 0
    stored_bytes: int = 0
    assignor_calls: int = 0

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds > 0 else float("inf")

    @property
    def bytes_per_state(self) -> float:
        return self.stored_bytes / self.states if self.states else 0.0

    @property
    def collision_probability(self) -> float:
        return collision_probability(self.states)

    def to_json(self) -> dict:
        return {
            "distinct_states": self.states,
            "edges": self.edges,
            "depth": self.depth,
            "seconds": round(self.seconds, 3),
            "states_per_second": round(self.states_per_second, 1) if self.seconds > 0 else None,
            "peak_rss_bytes": self.peak_rss_bytes,
            "bytes_per_state": round(self.bytes_per_state, 1),
            "collision_probability": self.collision_probability,
            "assignor_calls": self.assignor_calls,
        }

    def describe(self) -> str:
        return (
            f"{self.states} distinct states, {self.edges} transitions, depth {self.depth}, "
            f"{self.seconds:.2f}s ({self.states_per_second:,.0f} states/s), "
            f"{self.bytes_per_state:.0f} bytes/state stored, peak RSS {self.peak_rss_bytes / 2**20:.0f} MiB, "
            f"fingerprint collision probability ~{self.collision_probability:.1e}"
        )


@dataclass(kw_only=True)
class Exploration:
    """What BFS found: the state graph (as arrays), parent links, completeness."""

    model: object
    fingerprinter: Fingerprinter
    init: list = field(default_factory=list)  # init states by index (index i < len(init))
    parent: array = field(default_factory=lambda: array("i"))  # -1: an init state
    via: array = field(default_factory=lambda: array("i"))  # action id that reached it (-1: init)
    depth: array = field(default_factory=lambda: array("H"))
    edge_src: array = field(default_factory=lambda: array("I"))
    edge_dst: array = field(default_factory=lambda: array("I"))
    edge_act: array = field(default_factory=lambda: array("B"))  # widened as action ids grow
    first_edge: array = field(default_factory=lambda: array("i"))  # -1: not expanded (widened past 2**31 edges)
    fingerprints: array = field(default_factory=lambda: array("Q"))  # by index
    actions: list = field(default_factory=list)  # action id -> Action
    complete: bool = True
    bound: str | None = None  # what cut exploration short
    unexpanded: int = 0
    errors: int = 0  # states whose expansion hit an assignor error
    stats: ExploreStats = field(default_factory=ExploreStats)
    symmetry: bool = False
    budget: Budget | None = None  # the command's budget: the analysis stops when it is spent
    por: bool = False  # partial-order reduction was used (:mod:`rebalproof.model.group_por`)
    reduced: int = 0  # expansions that followed an ample set smaller than the enabled set

    @property
    def states(self) -> int:
        return len(self.parent)

    def expanded(self, idx: int) -> bool:
        return self.first_edge[idx] >= 0

    def out_edges(self, idx: int) -> range:
        """Edge indices leaving ``idx`` (edges are stored grouped by source, in BFS order)."""
        start = self.first_edge[idx]
        if start < 0:
            return range(0)
        end = len(self.edge_src)
        # the next expanded state's first edge ends this range
        for j in range(idx + 1, len(self.first_edge)):
            if self.first_edge[j] >= 0:
                end = self.first_edge[j]
                break
        return range(start, end)

    def edge_ranges(self) -> list[range]:
        """``out_edges`` for every state at once (linear time)."""
        n = len(self.first_edge)
        out = [range(0)] * n
        total = len(self.edge_src)
        nxt = total
        for i in range(n - 1, -1, -1):
            start = self.first_edge[i]
            if start >= 0:
                out[i] = range(start, nxt)
                nxt = start
        return out

    def action(self, edge: int) -> Action:
        return self.actions[self.edge_act[edge]]

    def path_actions(self, idx: int) -> tuple[int, list[Action]]:
        """(index of the init state, actions from it to ``idx``) along BFS parent links."""
        acts = []
        while self.parent[idx] >= 0:
            acts.append(self.actions[self.via[idx]])
            idx = self.parent[idx]
        acts.reverse()
        return idx, acts

    def replay(self, init_index: int, actions) -> list:
        """The states along ``actions`` from init state ``init_index`` (``[init, s1, ...]``)."""
        state = self.init[init_index]
        out = [state]
        for a in actions:
            state = self.model.next_state(state, a)
            if state is None:
                raise RuntimeError(f"replay: action {a.describe()} is not enabled; the model is not deterministic")
            out.append(state)
        return out

    def state_at(self, idx: int):
        """The concrete representative of state ``idx`` (replayed from its init state)."""
        init, acts = self.path_actions(idx)
        return self.replay(init, acts)[-1]


def _stored_bytes(visited: Visited, exp: Exploration) -> int:
    """Bytes held for the visited set and the graph (:meth:`Visited.nbytes`, the arrays)."""
    arrays = sum(
        a.itemsize * len(a)
        for a in (exp.parent, exp.via, exp.depth, exp.edge_src, exp.edge_dst, exp.edge_act, exp.first_edge, exp.fingerprints)
    )
    return visited.nbytes() + arrays


def _peak_rss() -> int:
    """Peak resident memory of this process plus the largest of its finished children (bytes).

    ``ru_maxrss`` is the process's own maximum so far (KiB on Linux); children (an ``exec:``
    assignor, a Spark JVM) run beside it, so their peak adds to it at worst.
    """
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (own + children) * 1024


def current_rss() -> int:
    """Resident memory of this process now (bytes; the peak where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def explore(
    model,
    *,
    symmetry: bool = False,
    limits: Limits = Limits(),
    monitor: Monitor | None = None,
    progress=None,
    por: bool = False,
) -> Exploration:
    """Breadth-first exploration of ``model`` within ``limits``; see the module docstring.

    ``symmetry`` reduces by renaming of instances and of partitions within a subtopology (only
    sound for an equivariant assignor; the caller decides). ``progress`` is called as
    ``progress(states, depth, queued, seconds)`` now and then (see
    :mod:`rebalproof.model.explore_progress`). ``por`` explores the ample sets of
    :func:`rebalproof.model.group_por.ample_expand` (partial-order reduction) instead of every
    successor.

    The cyclic garbage collector is paused while exploring (:func:`_collector_paused`).
    """
    with _collector_paused():
        return _explore(model, symmetry=symmetry, limits=limits, monitor=monitor, progress=progress, por=por)


@contextlib.contextmanager
def _collector_paused():
    """Pause Python's cyclic garbage collector while exploring; afterwards it runs as before, but
    never walks the objects that survived the run.

    A run allocates millions of short-lived tuples (states, members, actions) and keeps hundreds
    of thousands (memos, the young visited set): every few hundred allocations the collector
    walked the young ones, and now and then all of them, about a tenth of a run's CPU time. The
    states, members and views a run builds hold no reference cycles (refcounting frees them), so
    nothing is left for the collector to find. What survives is moved to the collector's
    permanent generation (:func:`gc.freeze`): otherwise its next pass walks all of it, 0.3 s after
    ``check --partitions 3`` (it is still freed by reference counting when dropped).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def _explore(model, *, symmetry, limits, monitor, progress, por) -> Exploration:
    monitor = monitor or Monitor()
    fp = Fingerprinter(model.task_ids, symmetry=symmetry, classes=getattr(model, "capacity_classes", None))
    exp = Exploration(model=model, fingerprinter=fp, symmetry=symmetry, budget=limits.budget, por=por)
    visited = Visited()
    action_ids: dict[Action, int] = {}
    packer = getattr(model, "packer", None)  # a model may queue its states packed (model/frontier.py)
    frontier = PackedFrontier(packer()) if packer is not None else ObjectFrontier(getattr(model, "compact", None))
    started = time.perf_counter()
    parent, via, depth, first_edge = exp.parent, exp.via, exp.depth, exp.first_edge
    edst, eact = exp.edge_dst, exp.edge_act
    act_limit, edge_limit = _LIMIT[eact.typecode], _LIMIT[first_edge.typecode]
    fps = exp.fingerprints
    n_edges = 0
    offer = getattr(model, "offer_ahead", None)  # a model computing answers ahead is told of each new state
    on_expand = getattr(monitor, "on_expand", None)
    keep_quiescent = getattr(monitor, "requests_rebalances", False)  # every quiescent state reached (group_por)

    for state in model.init_states():
        h = fp(state)
        if visited.get(h) is not None:
            continue
        idx = len(parent)
        visited.add(h, idx)
        exp.init.append(state)
        parent.append(-1)
        via.append(-1)
        depth.append(0)
        first_edge.append(-1)
        exp.fingerprints.append(h)
        frontier.push_kept(idx, state)
        monitor.on_state(idx, state)

    max_depth, max_states, max_seconds = limits.max_depth, limits.max_states, limits.max_seconds
    budget = limits.budget
    last_report = started
    stopped = None
    push, pop = frontier.push, frontier.pop
    while frontier:
        if monitor.stop():
            stopped = "stopped at the first violation"
            break
        now = time.perf_counter()
        if max_seconds is not None and now - started > max_seconds:
            stopped = f"time limit {max_seconds:g}s"
            break
        if budget is not None:
            stopped = budget.explore_spent()
            if stopped is not None:
                break
        if progress is not None and now - last_report > 0.25:
            last_report = now
            progress(len(parent), depth[frontier.peek()], len(frontier), now - started)
        idx, state = pop()
        d = depth[idx]
        if max_depth is not None and d >= max_depth:
            exp.unexpanded += 1
            exp.complete = False
            exp.bound = f"depth {max_depth}"
            continue
        if max_states is not None and len(parent) >= max_states:
            exp.unexpanded += 1  # popped: counted here, the rest below
            stopped = f"{max_states} states"
            break
        try:
            if por:
                successors, reduced = ample_expand(
                    model, state, fingerprint=fp, is_old=lambda h, d=d: (j := visited.get(h)) is not None and depth[j] <= d,
                    keep_quiescent=keep_quiescent,
                )
                exp.reduced += reduced
            else:
                successors = model.expand(state)
        except AssignorError as error:
            exp.errors += 1
            monitor.on_assignor_error(idx, state, error)
            continue
        if on_expand is not None:
            on_expand(idx, state, len(successors))
        if n_edges > edge_limit:
            first_edge = exp.first_edge = _widened(first_edge, "q")
            edge_limit = _LIMIT["q"]
        first_edge[idx] = n_edges
        for action, nxt in successors:
            aid = action_ids.get(action)
            if aid is None:
                aid = action_ids[action] = len(exp.actions)
                exp.actions.append(action)
                if aid > act_limit:
                    eact = exp.edge_act = _widened(eact, "H" if aid <= _LIMIT["H"] else "I")
                    act_limit, edge_limit = _LIMIT[eact.typecode], _LIMIT[first_edge.typecode]
            h = fp(nxt)
            j = visited.get(h)
            if j is None:
                j = len(parent)
                visited.add(h, j)
                parent.append(idx)
                via.append(aid)
                depth.append(d + 1)
                first_edge.append(-1)
                fps.append(h)
                push(j, nxt)
                if offer is not None:
                    offer(nxt)
                monitor.on_state(j, nxt)
            edst.append(j)
            eact.append(aid)
            monitor.on_edge(n_edges, idx, state, action, nxt, j)
            n_edges += 1
    if stopped is not None:
        exp.complete = False
        exp.bound = stopped
        exp.unexpanded += len(frontier)
    del frontier, push, pop  # the queue's memory goes before the edge sources are built
    exp.edge_src = _edge_sources(first_edge, n_edges)
    if progress is not None:
        progress(len(parent), max(depth) if len(depth) else 0, 0, time.perf_counter() - started)
    exp.stats = ExploreStats(
        states=len(parent),
        edges=n_edges,
        depth=max(depth) if len(depth) else 0,
        seconds=time.perf_counter() - started,
        peak_rss_bytes=_peak_rss(),
        stored_bytes=_stored_bytes(visited, exp),
        assignor_calls=getattr(getattr(model, "_chooser", None), "calls", 0),
    )
    return exp


#: The largest value of an array typecode the explorer uses.
_LIMIT = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFFFFFF, "i": 0x7FFFFFFF, "q": 0x7FFFFFFFFFFFFFFF}


def _widened(values: array, typecode: str) -> array:
    """``values`` copied into a wider typecode (an action id or an edge index outgrew it)."""
    out = array(typecode)
    if len(values):
        out.frombytes(np.frombuffer(values, dtype=np.dtype(values.typecode)).astype(np.dtype(typecode)).tobytes())
    return out


def _edge_sources(first_edge: array, n_edges: int) -> array:
    """The source of every edge, from where each state's edges start (edges are stored grouped
    by source, in BFS order): built once at the end, so a run does not hold it as it goes."""
    out = array("I")
    if not n_edges:
        return out
    first = np.frombuffer(first_edge, dtype=np.dtype(first_edge.typecode)).astype(np.int64)
    expanded = np.flatnonzero(first >= 0)
    starts = first[expanded]
    counts = np.diff(np.append(starts, n_edges))
    out.frombytes(np.repeat(expanded.astype(np.uint32), counts).tobytes())
    return out


def expand_level(model, fingerprinter, states) -> list[tuple[int, object, object]]:
    """One BFS level for a distributed engine: ``[(fingerprint, action, next_state)]`` of ``states``.

    Pure: the caller deduplicates by fingerprint against its visited set.
    """
    out = []
    for state in states:
        for action, nxt in model.expand(state):
            out.append((fingerprinter(nxt), action, nxt))
    return out
