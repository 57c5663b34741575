"""Where a corpus's records come from: a JSON Lines file, its gzip, or a directory of records.

The tolerant corpus reader of docs/DESIGN.md "Contracts": recorded rebalances come from production
tooling, so the reader takes what such tooling writes —

- a **JSON Lines file** (``.jsonl``), one record per line, blank lines skipped, a UTF-8
  byte-order mark on the first line accepted;
- the same **gzipped** (``.jsonl.gz``; recognised by its content, whatever the suffix);
- a **directory** of ``*.json`` files, one record per file (pretty-printed or not), in natural
  name order (``r2.json`` before ``r10.json``); other files and names starting with ``.`` are
  left out. Records are numbered 1, 2, ... in that order and labelled by their file name unless
  they carry a ``name`` or ``id``.

:func:`entries` yields one :class:`Entry` per record, *without* parsing it: parsing and judging
is :func:`rebalproof.corpus.check_line`'s job, run in this process or in Spark tasks. A problem
found while reading (a line over the size limit, a gzip stream that ends early, a record file
that cannot be read) is an entry with ``problem`` set, at its own line number, so that both
engines report the *first* malformed line, whatever kind it is. A corpus that cannot be opened
at all is an :class:`~rebalproof.errors.InputError` straight away.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from rebalproof.errors import InputError
from rebalproof.model.names import id_key
from rebalproof import reading

__all__ = ["Entry", "entries", "is_local"]

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1024 * 1024
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True, kw_only=True, slots=True)
class Entry:
    """One record of a corpus as read: its number, how messages name it, and its bytes.

    ``offset`` is where ``data`` starts in its file (for the byte offset of an encoding error);
    ``label`` names the record in reports when it has no ``name`` / ``id`` of its own.
    """

    number: int
    where: str
    data: bytes = b""
    offset: int = 0
    label: str | None = None
    problem: str | None = None


def is_local(path: str | os.PathLike) -> bool:
    """True for a plain path or a ``file:`` URI: read by :func:`entries` (on Spark's driver too)."""
    text = str(path)
    return text.startswith("file:") or not _SCHEME.match(text)


def _local_path(path: str | os.PathLike) -> Path:
    text = str(path)
    if text.startswith("file://"):
        text = text[len("file://"):]
    elif text.startswith("file:"):
        text = text[len("file:"):]
    return Path(text)


def entries(path: str | os.PathLike) -> Iterator[Entry]:
    """The records of the corpus at ``path`` (a file, a ``.jsonl.gz`` or a directory), in order.

    Raises
    ------
    InputError
        When the corpus does not exist or cannot be opened.
    """
    path = _local_path(path)
    if path.is_dir():
        return _directory(path)
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise InputError(f"corpus '{path}' does not exist; check the path") from None
    except OSError as exc:
        raise InputError(f"cannot read corpus '{path}': {exc.strerror or exc}") from None
    return _lines(handle, path)


def _lines(raw, path: Path) -> Iterator[Entry]:
    with raw:
        try:
            compressed = raw.peek(2)[:2] == _GZIP_MAGIC if hasattr(raw, "peek") else False
        except OSError as exc:
            raise InputError(f"cannot read corpus '{path}': {exc.strerror or exc}") from None
        if compressed:
            with gzip.GzipFile(fileobj=raw, mode="rb") as handle:
                yield from _split(handle, path, "gzip ")
        else:
            yield from _split(raw, path, "")


def _split(handle, path: Path, kind: str) -> Iterator[Entry]:
    """One entry per non-blank line; a line over the limit is a problem entry (and is skipped)."""
    number, offset = 0, 0
    while True:
        number += 1
        try:
            data = handle.readline(reading.MAX_JSON_BYTES + 1)
        except (EOFError, gzip.BadGzipFile, zlib.error, OSError) as exc:
            yield Entry(number=number, where=f"line {number}",
                        problem=f"the {kind}file cannot be read on from here ({_reason(exc)}); is it truncated or corrupt?")
            return
        if not data:
            return
        start = offset
        offset += len(data)
        if len(data) > reading.MAX_JSON_BYTES and not data.endswith(b"\n"):
            yield Entry(number=number, where=f"line {number}",
                        problem=f"longer than the limit of {reading.MAX_JSON_BYTES:,} bytes for one record; one record per line")
            for rest in iter(lambda: handle.readline(_CHUNK), b""):  # skip the rest of that line
                offset += len(rest)
                if rest.endswith(b"\n"):
                    break
            continue
        if number == 1 and data.startswith(_BOM):
            data, start = data[len(_BOM):], start + len(_BOM)
        if data.strip():
            yield Entry(number=number, where=f"line {number}", data=data, offset=start)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "the compressed stream ends early"
    return str(exc) or type(exc).__name__


def _directory(path: Path) -> Iterator[Entry]:
    try:
        names = [p.name for p in path.iterdir() if p.name.endswith(".json") and not p.name.startswith(".") and not p.is_dir()]
    except OSError as exc:
        raise InputError(f"cannot list corpus directory '{path}': {exc.strerror or exc}") from None
    for number, name in enumerate(sorted(names, key=id_key), start=1):
        where = f"file '{name}'"
        try:
            with (path / name).open("rb") as handle:
                data = handle.read(reading.MAX_JSON_BYTES + 1)
        except OSError as exc:
            yield Entry(number=number, where=where, label=name, problem=f"cannot be read: {exc.strerror or exc}")
            continue
        yield Entry(number=number, where=where, data=data, label=name)
