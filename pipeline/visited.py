"""The Spark engine's visited set: fingerprint -> state index, in the driver or partitioned on Spark.

Both kinds answer the same two questions for :mod:`rebalproof.pipeline.groupbfs`:
:meth:`~DriverVisited.resolve` (the index of each fingerprint, ``-1`` if it was never visited)
and :meth:`~DriverVisited.add` (a level's new states, numbered in BFS order by the driver).

- :class:`DriverVisited` keeps two sorted int64 arrays in the driver (16 bytes a state). Small
  runs stay there: no Spark job is needed to answer.
- :class:`PartitionedVisited` keeps them on Spark, hash-partitioned by fingerprint
  (:func:`~rebalproof.pipeline.frontier.fibonacci_buckets`): partition ``i`` of a persisted RDD
  holds the sorted slice of the fingerprints it owns, with their indices, and nothing else. A
  level's questions cost one Spark job: the driver broadcasts each owner its share of the level's
  successor fingerprints (and the previous level's new states, which the owner inserts first) and
  collects one answer array per partition. The driver's memory for the visited set is then that
  of one level, whatever the number of states; the slices live in the executors' block managers
  and are never collected.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from rebalproof.pipeline.frontier import fibonacci_buckets

__all__ = ["DriverVisited", "PartitionedVisited"]


def _insert(fps: np.ndarray, idx: np.ndarray, new_fps: np.ndarray, new_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(fps, idx)`` with the new pairs inserted, fingerprints kept sorted."""
    order = np.argsort(new_fps, kind="stable")
    new_fps, new_idx = new_fps[order], new_idx[order]
    at = np.searchsorted(fps, new_fps)
    return np.insert(fps, at, new_fps), np.insert(idx, at, new_idx)


def _lookup(fps: np.ndarray, idx: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """The index of each query in the sorted ``fps``, ``-1`` where absent."""
    if len(fps) == 0:
        return np.full(len(queries), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(fps, queries), len(fps) - 1)
    return np.where(fps[at] == queries, idx[at], -1)


class DriverVisited:
    """The visited set in the driver: sorted fingerprints and their state indices."""

    def __init__(self, fps: np.ndarray | None = None, idx: np.ndarray | None = None):
        self.fps = np.empty(0, dtype=np.int64)
        self.idx = np.empty(0, dtype=np.int64)
        if fps is not None and len(fps):
            self.add(np.asarray(fps, dtype=np.int64), np.asarray(idx, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.fps)

    @property
    def driver_bytes(self) -> int:
        return self.fps.nbytes + self.idx.nbytes

    def add(self, fps: np.ndarray, idx: np.ndarray) -> None:
        self.fps, self.idx = _insert(self.fps, self.idx, fps, idx)

    def resolve(self, fps: np.ndarray) -> np.ndarray:
        return _lookup(self.fps, self.idx, fps)

    def release(self) -> None:
        pass


def _split(fps: np.ndarray, idx: np.ndarray, parts: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each owner's share of ``(fps, idx)``, in the given order."""
    owner = fibonacci_buckets(fps, parts)
    return [(fps[owner == i], idx[owner == i]) for i in range(parts)]


def _owned_task(bc, index: int, parts):
    """Spark task of partition ``index``: insert the pending pairs it owns, answer its queries.

    One element in, one out: ``(fps, idx, answers)`` (the answers of the previous job, ignored).
    """
    fps, idx = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    for element in parts:
        fps, idx = element[0], element[1]
    pending, queries = bc.value
    for new_fps, new_idx in pending[index]:
        fps, idx = _insert(fps, idx, new_fps, new_idx)
    yield fps, idx, _lookup(fps, idx, queries[index])


def _answers(element) -> np.ndarray:
    return element[2]


class PartitionedVisited:
    """The visited set on Spark, one sorted slice per owner partition (see the module docstring).

    ``add`` only queues a level's pairs in the driver; the next ``resolve`` ships them with its
    questions, so a level costs one job. ``release`` unpersists the slices.
    """

    def __init__(self, context, visited: DriverVisited, partitions: int):
        from pyspark import StorageLevel

        self.context = context
        self.partitions = partitions
        self._level = StorageLevel.MEMORY_AND_DISK
        slices = [(f, i, np.empty(0, dtype=np.int64)) for f, i in _split(visited.fps, visited.idx, partitions)]
        self.rdd = context.parallelize(slices, partitions)
        self.rdd.persist(self._level)
        self.size = len(visited)
        self.pending: list[tuple[np.ndarray, np.ndarray]] = []
        self.spent: list = []  # broadcasts, destroyed by release (persisted lineage may name them until then)
        self.jobs = 0

    def __len__(self) -> int:
        return self.size

    @property
    def driver_bytes(self) -> int:
        return sum(f.nbytes + i.nbytes for f, i in self.pending)

    def add(self, fps: np.ndarray, idx: np.ndarray) -> None:
        self.pending.append((np.asarray(fps, dtype=np.int64), np.asarray(idx, dtype=np.int64)))
        self.size += len(fps)

    def resolve(self, fps: np.ndarray) -> np.ndarray:
        """One Spark job: the pending pairs inserted by their owners, then each owner's answers."""
        parts = self.partitions
        pending = [[] for _ in range(parts)]
        for new_fps, new_idx in self.pending:
            for i, share in enumerate(_split(new_fps, new_idx, parts)):
                if len(share[0]):
                    pending[i].append(share)
        owner = fibonacci_buckets(fps, parts)
        queries = [fps[owner == i] for i in range(parts)]
        bc = self.context.broadcast((pending, queries))
        self.spent.append(bc)
        updated = self.rdd.mapPartitionsWithIndex(partial(_owned_task, bc))
        updated.persist(self._level)
        updated.localCheckpoint()  # the lineage stops here: levels do not pile up in jobs
        answers = updated.map(_answers).collect()
        self.rdd.unpersist()
        self.rdd = updated
        self.pending = []
        bc.unpersist()
        self.jobs += 1
        out = np.empty(len(fps), dtype=np.int64)
        for i, answer in enumerate(answers):
            out[owner == i] = answer
        return out

    def release(self) -> None:
        self.rdd.unpersist()
        for bc in self.spent:
            bc.destroy()
        self.spent = []
