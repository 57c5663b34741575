"""Pieces shared by the Spark exploration engines: buckets, sorted-set membership, worker caches.

- :func:`fibonacci_buckets` splits a frontier by a multiplicative hash of the fingerprints:
  even buckets whatever the fingerprints' low bits (Spark's default partitioner hashes an int
  to itself, so low bits alone chose the partition: sizes [117, 10720, 10720, 65616] in one
  measured run).
- :func:`split_frontier` makes the (positions, states) buckets a level's tasks expand.
- :func:`worker_visited` keeps, in each Python worker process (workers are reused), a sorted
  copy of the visited fingerprints, brought up to date from one small broadcast per level,
  so tasks drop already-visited successors before sending anything back to the driver.
- :func:`worker_cached` keeps one deserialised object per exploration in a worker (the model).
- :func:`pack_states` / :func:`unpack_states` turn a task's candidate states into one blob and
  back: with the model's packer (:class:`~rebalproof.model.frontier.GroupStatePacker`: each
  distinct member, head and pending tuple once, then 32-bit codes a state) rather than pickling
  every state's objects. Measured on the 35,663-state learner model's 56,636 candidates: 0.56 s
  and 1.4 MB against pickle's 1.42 s and 6.9 MB, both ways included.
- :func:`collector_paused` runs a task without Python's cyclic garbage collector and freezes
  what survives it: a worker holds the model's memos and a whole bucket of unpickled states, and
  the collector's full passes over them took a third of a worker's CPU (measured: 4.0 of 10.8 s
  per worker at 97k states; 0.3 s after), while expanding states makes next to no cyclic garbage
  (745 objects in a whole local run of those 97k states with the collector off, same peak RSS).
"""

from __future__ import annotations

import gc
import pickle
from contextlib import contextmanager

import numpy as np

__all__ = ["fibonacci_buckets", "split_frontier", "member", "worker_visited", "worker_cached", "collector_paused", "MIN_BUCKET",
           "pack_states", "unpack_states"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIN_BUCKET = 64  # below this many states a task costs more than it does

_VISITED: dict[str, tuple[int, np.ndarray]] = {}
_CACHED: dict[str, object] = {}


def fibonacci_buckets(fingerprints: np.ndarray, buckets: int) -> np.ndarray:
    """Bucket of each int64 fingerprint: high bits of ``fp * 0x9E3779B97F4A7C15 mod 2**64``.

    Examples
    --------
    >>> fibonacci_buckets(np.arange(8, dtype=np.int64) * 1024, 4).tolist()   # low bits all zero
    [0, 1, 2, 3, 0, 1, 2, 0]
    """
    mixed = fingerprints.astype(np.int64).view(np.uint64) * _GOLDEN
    return ((mixed >> np.uint64(32)) % np.uint64(buckets)).astype(np.int64)


def split_frontier(fingerprints: np.ndarray, states: list, partitions: int) -> list[tuple[np.ndarray, list]]:
    """``(positions, states)`` per non-empty bucket; positions ascend within a bucket."""
    count = max(1, min(partitions, len(fingerprints) // MIN_BUCKET))
    where = fibonacci_buckets(fingerprints, count)
    out = []
    for bucket in range(count):
        positions = np.flatnonzero(where == bucket)
        if len(positions):
            out.append((positions, [states[i] for i in positions.tolist()]))
    return out


def member(sorted_set: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``values`` are in the sorted array ``sorted_set``."""
    if len(sorted_set) == 0:
        return np.zeros(len(values), dtype=bool)
    pos = np.searchsorted(sorted_set, values)
    return sorted_set[np.minimum(pos, len(sorted_set) - 1)] == values


def worker_visited(token: str, deltas) -> np.ndarray:
    """The visited set as of this level in a worker, from the per-level delta broadcasts.

    Only the newest exploration is kept per worker process.
    """
    applied, visited = _VISITED.get(token, (0, np.empty(0, dtype=np.int64)))
    if applied < len(deltas):
        fresh = [bc.value for bc in deltas[applied:]]
        visited = np.sort(np.concatenate([visited, *fresh]))
        _VISITED.clear()
        _VISITED[token] = (len(deltas), visited)
    return visited


def worker_cached(token: str, load):
    """``load()`` once per exploration and worker process; only the newest is kept."""
    if token not in _CACHED:
        if _CACHED:  # the previous exploration's objects, frozen by collector_paused, go back to the collector
            _CACHED.clear()
            gc.unfreeze()
        _CACHED[token] = load()
    return _CACHED[token]


@contextmanager
def collector_paused():
    """Run the block (one Spark task) with the cyclic garbage collector off; then one collection,
    and what survives (the worker's model, memos and visited set) is frozen out of later passes.

    Reference counting still frees everything as usual; only cycles wait for the end of the task.
    If the collector was off already (someone else's choice), it is left alone.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.collect()
        gc.freeze()
        gc.enable()


def pack_states(model, states: list) -> bytes:
    """``states`` as one blob: packed records and the packer's tables if ``model`` has a packer
    (:meth:`rebalproof.model.group_model.GroupModel.packer`), else pickled as they are."""
    make = getattr(model, "packer", None)
    if make is None:
        return pickle.dumps((None, states), protocol=pickle.HIGHEST_PROTOCOL)
    packer = make()
    buf = bytearray()
    for state in states:
        packer.pack_into(buf, state)
    return pickle.dumps((packer.tables(), bytes(buf)), protocol=pickle.HIGHEST_PROTOCOL)


def unpack_states(model, blob: bytes, pick=None) -> list:
    """The states of :func:`pack_states`'s ``blob``, or only those at the indices ``pick``, in
    that order (equal to the states packed; the ones unpacked share their parts)."""
    tables, body = pickle.loads(blob)
    if tables is None:
        return body if pick is None else [body[i] for i in pick]
    packer = model.packer()
    packer.load_tables(tables)
    size = packer.size
    indices = range(len(body) // size) if pick is None else pick
    unpack = packer.unpack_from
    return [unpack(body, i * size) for i in indices]
