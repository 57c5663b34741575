"""Checkpoints of a breadth-first exploration: Parquet tables that survive ``kill -9``.

A checkpoint is taken between two levels, at level ``L`` (the frontier being the states at depth
``L``). It is made of:

- **append-only tables** (one folder ``<table>-AAAAAA-BBBBBB/`` per save, holding the rows added
  since the previous save — levels ``A..B``), e.g. the visited fingerprints with their parent
  links, or the state graph's edges; a save writes only what is new;
- ``frontier-BBBBBB/`` — the frontier: ``ord`` (position in the level), ``fp``, and the state,
  pickled;
- optionally ``driver-BBBBBB.bin`` — a small pickled blob of the driver's own bookkeeping;
- ``manifest-BBBBBB.json`` — counters and which folders make up the checkpoint.

Atomicity: every folder and file is written under a ``_tmp-`` name and renamed into place; the
manifest is renamed last, so the newest manifest always names a whole checkpoint. Loading takes
the newest manifest and deletes what it does not name (leftovers of a run killed mid-write).
Only names of these shapes are ever deleted. Folders are Parquet written by Spark's executors;
the driver only renames, lists and deletes, through Hadoop's FileSystem
(:mod:`rebalproof.pipeline.hadoopfs`), so a checkpoint directory can be on HDFS.

States and the driver blob are stored with :mod:`pickle`: resume only from directories you trust.
"""

from __future__ import annotations

import json
import pickle
import re
import uuid
from itertools import repeat
from typing import Callable

import numpy as np

from rebalproof.errors import InputError
from rebalproof.pipeline.hadoopfs import HadoopDir
from rebalproof.reading import parse_json

__all__ = ["CheckpointStore", "Loaded", "FORMAT", "column_chunks", "collect_columns"]

FORMAT = "rebalproof-bfs-checkpoint/2"
_OURS = re.compile(r"^(_tmp-.*|manifest-\d{6}\.json|frontier-\d{6}|driver-\d{6}\.bin|[a-z]+-\d{6}-\d{6})$")
_MANIFEST = re.compile(r"^manifest-(\d{6})\.json$")
_FRONTIER_SCHEMA = "ord LONG, fp LONG, state BINARY"
_CHUNK = 50_000
_ROWS_PER_FILE = 500_000


def column_chunks(columns: dict[str, np.ndarray], constants: dict[str, int] | None = None) -> list[tuple]:
    """Split equal-length numpy columns into picklable chunks for :meth:`CheckpointStore.save`."""
    constants = constants or {}
    n = len(next(iter(columns.values()))) if columns else 0
    return [
        (tuple(constants.values()), tuple(col[a : a + _CHUNK] for col in columns.values()))
        for a in range(0, max(n, 1), _CHUNK)
    ]


def _rows(chunk):
    constants, columns = chunk
    lists = [col.tolist() for col in columns]
    if not lists or not lists[0]:
        return iter(())
    return zip(*[repeat(c) for c in constants], *lists)


def _frontier_rows(chunk):
    ords, fps, states = chunk
    pickled = (bytearray(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)) for state in states)
    return zip(ords.tolist(), fps.tolist(), pickled)


def _column_arrays(names, dtypes, rows):
    rows = list(rows)
    yield tuple(np.fromiter((r[i] for r in rows), dtype=dtypes[i], count=len(rows)) for i in range(len(names)))


def collect_columns(frame, dtypes: dict[str, type], *, order_by: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The columns of a DataFrame as numpy arrays in the driver, sorted by ``order_by``."""
    names = tuple(dtypes)
    types = tuple(dtypes.values())
    blocks = frame.select(*names).rdd.mapPartitions(lambda rows: _column_arrays(names, types, rows)).collect()
    blocks = [b for b in blocks if len(b[0])]
    if not blocks:
        return {name: np.empty(0, dtype=t) for name, t in dtypes.items()}
    columns = {name: np.concatenate([b[i] for b in blocks]) for i, name in enumerate(names)}
    order = np.lexsort(tuple(columns[k] for k in reversed(order_by)))
    return {name: col[order] for name, col in columns.items()}


class Loaded:
    """The newest checkpoint of a directory, as read back: counters, tables, frontier, blob."""

    def __init__(self, store: "CheckpointStore", manifest: dict):
        self._store = store
        self.manifest = manifest
        self.level: int = manifest["level"]
        self.meta: dict = manifest["meta"]

    def table(self, name: str, schema: str):
        """The DataFrame of every row of append-only table ``name`` (all its folders)."""
        folders = self.manifest["tables"].get(name, [])
        spark = self._store._spark
        if not folders:
            return spark.createDataFrame([], schema)
        return spark.read.schema(schema).parquet(*[self._store._dir.child(f) for f in folders])

    def frontier(self) -> tuple[np.ndarray, list]:
        """Fingerprints and states of the frontier, in order."""
        frame = self._store._spark.read.schema(_FRONTIER_SCHEMA).parquet(self._store._dir.child(self.manifest["frontier"]))
        rows = sorted(frame.collect(), key=lambda row: row[0])
        return np.array([row[1] for row in rows], dtype=np.int64), [pickle.loads(row[2]) for row in rows]

    def blob(self):
        name = self.manifest.get("blob")
        return None if name is None else pickle.loads(self._store._dir.read_bytes(name))


class CheckpointStore:
    """Saves and loads checkpoints in one directory (local path or Hadoop URI).

    ``on_stage(name, level)`` is called after each step of a save (``tables``, ``frontier``,
    ``manifest``): tests use it to stop or kill the process at a chosen point.
    """

    def __init__(self, spark, directory: str, *, on_stage: Callable[[str, int], None] | None = None):
        self._spark = spark
        self._dir = HadoopDir(spark, directory)
        self._on_stage = on_stage
        self._tables: dict[str, list[str]] = {}
        self._saved_upto = -1  # deepest level whose append-only rows are on disk

    @property
    def uri(self) -> str:
        return self._dir.uri

    @property
    def saved_upto(self) -> int:
        """The deepest level whose rows are on disk: the next save starts after it."""
        return self._saved_upto

    def _write(self, chunks: list, schema: str, final: str, rows=_rows) -> None:
        context = self._spark.sparkContext
        count = sum(len(c[1][0]) if c[1] else 0 for c in chunks) if rows is _rows else sum(len(c[0]) for c in chunks)
        rdd = context.parallelize(chunks, max(1, min(len(chunks), count // _ROWS_PER_FILE + 1))).flatMap(rows)
        tmp = f"_tmp-{final}-{uuid.uuid4().hex[:8]}"
        self._spark.createDataFrame(rdd, schema, verifySchema=False).write.parquet(self._dir.child(tmp))
        if self._dir.exists(final):
            self._dir.delete(final)
        self._dir.rename(tmp, final)

    def save(
        self,
        level: int,
        *,
        tables: dict[str, tuple[str, list]],
        frontier: tuple[np.ndarray, list],
        meta: dict,
        blob=None,
    ) -> None:
        """Write the rows new since the last save (``tables``: name -> (schema, chunks)), the
        frontier (fingerprints, states), the driver's ``blob`` and the manifest with ``meta``."""
        self._dir.make()
        first = self._saved_upto + 1
        for name, (schema, chunks) in sorted(tables.items()):
            folder = f"{name}-{first:06d}-{level:06d}"
            self._write(chunks, schema, folder)
            if folder not in self._tables.setdefault(name, []):
                self._tables[name].append(folder)
        self._saved_upto = level
        self._stage("tables", level)

        fps, states = frontier
        chunks = [
            (np.arange(a, min(a + _CHUNK, len(fps)), dtype=np.int64), fps[a : a + _CHUNK], states[a : a + _CHUNK])
            for a in range(0, max(len(fps), 1), _CHUNK)
        ]
        frontier_dir = f"frontier-{level:06d}"
        self._write(chunks, _FRONTIER_SCHEMA, frontier_dir, rows=_frontier_rows)
        blob_name = None
        if blob is not None:
            blob_name = f"driver-{level:06d}.bin"
            tmp = f"_tmp-{blob_name}-{uuid.uuid4().hex[:8]}"
            self._dir.write_bytes(tmp, pickle.dumps(blob, protocol=pickle.HIGHEST_PROTOCOL))
            if self._dir.exists(blob_name):
                self._dir.delete(blob_name)
            self._dir.rename(tmp, blob_name)
        self._stage("frontier", level)

        manifest = {
            "format": FORMAT,
            "level": level,
            "meta": meta,
            "tables": {name: list(folders) for name, folders in sorted(self._tables.items())},
            "frontier": frontier_dir,
            "blob": blob_name,
        }
        name = f"manifest-{level:06d}.json"
        tmp = f"_tmp-{name}-{uuid.uuid4().hex[:8]}"
        self._dir.write_bytes(tmp, (json.dumps(manifest, indent=1) + "\n").encode())
        if self._dir.exists(name):
            self._dir.delete(name)
        self._dir.rename(tmp, name)
        self._stage("manifest", level)
        self._clean(manifest, name)

    def _stage(self, name: str, level: int) -> None:
        if self._on_stage is not None:
            self._on_stage(name, level)

    def _clean(self, manifest: dict, manifest_name: str) -> None:
        keep = {manifest_name, manifest["frontier"]} | {f for folders in manifest["tables"].values() for f in folders}
        if manifest.get("blob"):
            keep.add(manifest["blob"])
        for entry in self._dir.names():
            if _OURS.match(entry) and entry not in keep:
                self._dir.delete(entry)

    def load(self) -> Loaded:
        """The newest whole checkpoint; :class:`InputError` when the directory holds none."""
        found = sorted(name for name in self._dir.names() if _MANIFEST.match(name))
        if not found:
            raise InputError(f"no checkpoint in {self.uri}: give the --checkpoint-dir of an earlier run, or start without --resume")
        name = found[-1]
        try:
            manifest = parse_json(self._dir.read_bytes(name), where=f"checkpoint manifest {self._dir.child(name)}")
        except InputError as exc:
            raise InputError(f"{exc}; start afresh without --resume") from None
        if manifest.get("format") != FORMAT:
            raise InputError(f"{self._dir.child(name)} is not a rebalproof checkpoint of format {FORMAT}; start afresh without --resume")
        self._clean(manifest, name)
        self._tables = {k: list(v) for k, v in manifest["tables"].items()}
        self._saved_upto = manifest["level"]
        return Loaded(self, manifest)
