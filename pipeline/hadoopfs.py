"""Directory operations through Hadoop's FileSystem, so checkpoints work on local disk and HDFS alike.

Spark's executors write the Parquet files; the driver only lists, renames and deletes folders
and reads and writes one small manifest. Going through the JVM's ``FileSystem`` (rather than
``os``) keeps the same code right for ``hdfs://`` and other Hadoop file systems on a cluster.
A path without a scheme is a local path, made absolute.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["HadoopDir", "qualify"]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def qualify(path: str) -> str:
    """``path`` with a scheme: local paths become absolute ``file:`` URIs, others are kept."""
    path = str(path)
    if _SCHEME.match(path):
        return path
    return Path(path).expanduser().resolve().as_uri()


class HadoopDir:
    """One directory of a Hadoop file system, seen from the driver."""

    def __init__(self, spark, path: str):
        context = spark.sparkContext
        self._jvm = context._jvm
        self.uri = qualify(path)
        self._root = self._jvm.org.apache.hadoop.fs.Path(self.uri)
        self._fs = self._root.getFileSystem(context._jsc.hadoopConfiguration())

    def child(self, name: str) -> str:
        """The full URI of ``name`` inside this directory (what Spark's readers and writers take)."""
        return self.uri.rstrip("/") + "/" + name

    def _path(self, name: str):
        return self._jvm.org.apache.hadoop.fs.Path(self._root, name)

    def make(self) -> None:
        self._fs.mkdirs(self._root)

    def exists(self, name: str | None = None) -> bool:
        return bool(self._fs.exists(self._root if name is None else self._path(name)))

    def names(self) -> list[str]:
        """The entries of the directory, sorted; empty when it does not exist."""
        if not self._fs.exists(self._root):
            return []
        return sorted(status.getPath().getName() for status in self._fs.listStatus(self._root))

    def rename(self, source: str, target: str) -> None:
        """Rename ``source`` to ``target`` (atomic on local disks and HDFS); the target must not exist."""
        if not self._fs.rename(self._path(source), self._path(target)):
            raise OSError(f"could not rename {self.child(source)} to {self.child(target)}")

    def delete(self, name: str) -> None:
        self._fs.delete(self._path(name), True)

    def write_bytes(self, name: str, data: bytes) -> None:
        stream = self._fs.create(self._path(name), True)
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()

    def read_bytes(self, name: str) -> bytes:
        stream = self._fs.open(self._path(name))
        try:
            return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()
