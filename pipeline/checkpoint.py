"""Checkpoints of a breadth-first exploration: Parquet files that survive ``kill -9``.

A checkpoint taken at level ``L`` (the frontier being the states at depth ``L``) holds everything
needed to go on as if never stopped:

- ``links-AAAAAA-BBBBBB/`` — Parquet, one row per state of depths ``A..B``: ``depth``, ``ord``
  (discovery order within the level), ``fp`` (fingerprint), ``parent`` (the parent's fingerprint)
  and ``action`` (index of the action in ``expand(parent)``; -1 for initial states). The
  fingerprints are the visited set; parent links give back shortest traces. The link files are
  append-only: a checkpoint writes only the levels since the previous one.
- ``frontier-BBBBBB/`` — Parquet: ``ord``, ``fp`` and the pickled state of each frontier state.
- ``manifest-BBBBBB.json`` — counts so far, first violations, and which folders belong to it.

Atomicity: every folder and the manifest are written under a ``_tmp-`` name and renamed into
place; the manifest is renamed last, so the newest manifest always names a whole checkpoint.
Loading takes the newest manifest and deletes what it does not name (leftovers of a run killed
mid-write). Only names of these shapes are ever deleted.

States are stored with :mod:`pickle`: load checkpoints only from directories you trust.
"""

from __future__ import annotations

import json
import pickle
import re
import uuid
from dataclasses import dataclass
from itertools import repeat
from typing import Callable

import numpy as np

from rebalproof.errors import InputError
from rebalproof.pipeline.hadoopfs import HadoopDir

__all__ = ["Snapshot", "CheckpointStore", "FORMAT"]

FORMAT = "rebalproof-bfs-checkpoint/1"
_OURS = re.compile(r"^(_tmp-.*|manifest-\d{6}\.json|frontier-\d{6}|links-\d{6}-\d{6})$")
_MANIFEST = re.compile(r"^manifest-(\d{6})\.json$")
_LINKS_SCHEMA = "depth INT, ord LONG, fp LONG, parent LONG, action INT"
_FRONTIER_SCHEMA = "ord LONG, fp LONG, state BINARY"
_ROWS_PER_FILE = 500_000


@dataclass(frozen=True, kw_only=True, eq=False)
class Snapshot:
    """An exploration stopped between two levels; ``level`` is the depth of ``frontier``.

    ``links[d]`` is ``(fps, parents, actions)`` for depth ``d`` in discovery order
    (numpy int64, int64, int32); ``frontier`` lists the states of depth ``level`` in the order
    of ``links[level]``; ``violations`` maps an invariant to the (depth, fingerprint) of its
    first violating state.
    """

    space_id: str
    max_depth: int | None
    level: int
    transitions: int
    violations: dict
    links: list
    frontier: list


def _link_rows(chunk):
    depth, ords, fps, parents, actions = chunk
    return zip(repeat(int(depth)), ords.tolist(), fps.tolist(), parents.tolist(), actions.tolist())


def _frontier_rows(chunk):
    ords, fps, states = chunk
    pickled = (bytearray(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)) for state in states)
    return zip(ords.tolist(), fps.tolist(), pickled)


def _link_arrays(rows):
    rows = list(rows)
    yield (
        np.fromiter((r[0] for r in rows), dtype=np.int32, count=len(rows)),
        np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows)),
        np.fromiter((r[2] for r in rows), dtype=np.int64, count=len(rows)),
        np.fromiter((r[3] for r in rows), dtype=np.int64, count=len(rows)),
        np.fromiter((r[4] for r in rows), dtype=np.int32, count=len(rows)),
    )


def _chunks(n: int, size: int):
    return [(start, min(n, start + size)) for start in range(0, n, size)] or [(0, 0)]


class CheckpointStore:
    """Saves and loads :class:`Snapshot` values in one directory (local path or Hadoop URI).

    ``on_stage(name, level)`` is called after each step of a save (``links``, ``frontier``,
    ``manifest``): tests use it to stop or kill the process at a chosen point.
    """

    def __init__(self, spark, directory: str, *, on_stage: Callable[[str, int], None] | None = None):
        self._spark = spark
        self._dir = HadoopDir(spark, directory)
        self._on_stage = on_stage
        self._link_dirs: list[str] = []
        self._saved_upto = -1  # deepest level whose links are on disk

    @property
    def uri(self) -> str:
        return self._dir.uri

    # -- writing -------------------------------------------------------------------------
    def _write(self, rows_rdd, schema: str, final: str) -> None:
        tmp = f"_tmp-{final}-{uuid.uuid4().hex[:8]}"
        frame = self._spark.createDataFrame(rows_rdd, schema, verifySchema=False)
        frame.write.parquet(self._dir.child(tmp))
        self._dir.rename(tmp, final)

    def save(self, snapshot: Snapshot) -> None:
        """Write ``snapshot`` (only the levels not yet on disk, then the frontier, then the manifest)."""
        context = self._spark.sparkContext
        self._dir.make()
        first = self._saved_upto + 1
        if first <= snapshot.level:
            chunks = []
            for depth in range(first, snapshot.level + 1):
                fps, parents, actions = snapshot.links[depth]
                for a, b in _chunks(len(fps), 50_000):
                    chunks.append((depth, np.arange(a, b, dtype=np.int64), fps[a:b], parents[a:b], actions[a:b]))
            rows = sum(len(c[2]) for c in chunks)
            slices = max(1, rows // _ROWS_PER_FILE + 1)
            name = f"links-{first:06d}-{snapshot.level:06d}"
            self._write(context.parallelize(chunks, slices).flatMap(_link_rows), _LINKS_SCHEMA, name)
            self._link_dirs.append(name)
            self._saved_upto = snapshot.level
        self._stage("links", snapshot.level)

        fps = snapshot.links[snapshot.level][0]
        chunks = [(np.arange(a, b, dtype=np.int64), fps[a:b], snapshot.frontier[a:b]) for a, b in _chunks(len(fps), 20_000)]
        frontier = f"frontier-{snapshot.level:06d}"
        if self._dir.exists(frontier):  # saved twice at one level (resumed from it): replace
            self._dir.delete(frontier)
        self._write(context.parallelize(chunks, max(1, len(fps) // _ROWS_PER_FILE + 1)).flatMap(_frontier_rows), _FRONTIER_SCHEMA, frontier)
        self._stage("frontier", snapshot.level)

        manifest = {
            "format": FORMAT,
            "space": snapshot.space_id,
            "max_depth": snapshot.max_depth,
            "level": snapshot.level,
            "levels": [len(link[0]) for link in snapshot.links],
            "transitions": snapshot.transitions,
            "violations": {name: list(where) for name, where in sorted(snapshot.violations.items())},
            "links": list(self._link_dirs),
            "frontier": frontier,
        }
        name = f"manifest-{snapshot.level:06d}.json"
        tmp = f"_tmp-{name}-{uuid.uuid4().hex[:8]}"
        self._dir.write_bytes(tmp, (json.dumps(manifest, indent=1) + "\n").encode())
        if self._dir.exists(name):
            self._dir.delete(name)
        self._dir.rename(tmp, name)
        self._stage("manifest", snapshot.level)
        self._clean(manifest, name)

    def _stage(self, name: str, level: int) -> None:
        if self._on_stage is not None:
            self._on_stage(name, level)

    def _clean(self, manifest: dict, manifest_name: str) -> None:
        keep = set(manifest["links"]) | {manifest["frontier"], manifest_name}
        for entry in self._dir.names():
            if _OURS.match(entry) and entry not in keep:
                self._dir.delete(entry)

    # -- reading -------------------------------------------------------------------------
    def latest_manifest(self) -> tuple[str, dict] | None:
        """The newest whole checkpoint's manifest (name, content), or None when there is none."""
        found = sorted(name for name in self._dir.names() if _MANIFEST.match(name))
        if not found:
            return None
        name = found[-1]
        try:
            manifest = json.loads(self._dir.read_bytes(name).decode())
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputError(f"checkpoint manifest {self._dir.child(name)} is not valid JSON ({exc}); start afresh without --resume") from None
        if manifest.get("format") != FORMAT:
            raise InputError(f"{self._dir.child(name)} is not a rebalproof checkpoint of format {FORMAT}; start afresh without --resume")
        return name, manifest

    def load(self) -> Snapshot:
        """The newest checkpoint; :class:`InputError` when the directory holds none."""
        found = self.latest_manifest()
        if found is None:
            raise InputError(f"no checkpoint in {self.uri}: give the --checkpoint-dir of an earlier run, or start without --resume")
        name, manifest = found
        self._clean(manifest, name)
        reader = self._spark.read
        parts = reader.schema(_LINKS_SCHEMA).parquet(*[self._dir.child(d) for d in manifest["links"]])
        blocks = [b for b in parts.rdd.mapPartitions(_link_arrays).collect() if len(b[0])]
        depth, ords, fps, parents, actions = (np.concatenate(col) for col in zip(*blocks))
        order = np.lexsort((ords, depth))
        depth, fps, parents, actions = depth[order], fps[order], parents[order], actions[order]
        bounds = np.searchsorted(depth, np.arange(manifest["level"] + 2))
        links = [(fps[a:b], parents[a:b], actions[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
        if [len(link[0]) for link in links] != manifest["levels"]:
            raise InputError(f"checkpoint {self._dir.child(name)} is incomplete (level sizes differ from its manifest); start afresh without --resume")
        rows = reader.schema(_FRONTIER_SCHEMA).parquet(self._dir.child(manifest["frontier"])).collect()
        rows.sort(key=lambda row: row[0])
        if [row[1] for row in rows] != links[-1][0].tolist():
            raise InputError(f"checkpoint frontier {manifest['frontier']} does not match its links; start afresh without --resume")
        self._link_dirs = list(manifest["links"])
        self._saved_upto = manifest["level"]
        return Snapshot(
            space_id=manifest["space"],
            max_depth=manifest["max_depth"],
            level=manifest["level"],
            transitions=manifest["transitions"],
            violations={k: tuple(v) for k, v in manifest["violations"].items()},
            links=links,
            frontier=[pickle.loads(row[2]) for row in rows],
        )
