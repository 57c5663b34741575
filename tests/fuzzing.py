"""Mutations of valid files for the readers' fuzzing suite (``tests/test_fuzz_readers.py``).

A case starts from a valid document and applies one value-level mutation (drop a key or an
element, give a key twice, replace a value by one of another type or a hostile number, nest a
value, possibly past the nesting limit) and/or one byte-level mutation (truncate, splice in
bytes, overwrite, delete, add a byte-order mark, CRLF line ends). Each mutation says whether it
makes the file *certainly* malformed by the reading contract (``rebalproof/reading.py``): those
cases must be exit 2, never 0 or 1.

Documents are kept as plain values with two extra node kinds, so that what ``json.dumps``
cannot write can still be produced: :class:`Raw` (literal text: ``NaN``, a 5,000-digit integer,
deep nesting) and :class:`Pairs` (an object whose keys may repeat).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hypothesis import strategies as st

__all__ = ["Raw", "Pairs", "Case", "dump_json", "dump_toml", "json_cases", "toml_cases", "CERTAINLY_BAD_NUMBERS"]


class Raw(str):
    """Literal text written as it is."""


class Pairs(list):
    """An object as a list of (key, value) pairs: keys may repeat."""


#: Values that are not in the contract of any reader: a hostile number is always bad input.
CERTAINLY_BAD_NUMBERS = (
    Raw("NaN"), Raw("Infinity"), Raw("-Infinity"), Raw("1e999"), Raw("-1e400"),
    Raw(str(2**63)), Raw(str(-(2**63) - 1)), Raw("1" + "0" * 5000), Raw("-" + "9" * 30),
)
_PLAIN = (None, True, False, 0, -1, 1, 2, 3, 1.5, -0.0, "", "x", "0_0", "I1", "I99", [], {}, ["0_0"], {"x": 1})
_TOML_PLAIN = (True, False, 0, -1, 1, 2, 1.5, "", "x", "sticky", "learner", [], {}, [1], {"x": 1})
_TOML_BAD = (Raw("inf"), Raw("nan"), Raw("-inf"), Raw(str(2**63)), Raw("1" + "0" * 5000), Raw("0x" + "f" * 20))
_DEPTHS = (1, 2, 10, 63, 64, 65, 1000, 100_000)
_INVALID_UTF8 = (b"\xff", b"\xfe", b"\xc0", b"\xf8", b"\xc1\xbf")


@dataclass(frozen=True)
class Case:
    """One mutated document: its bytes, what was done, and whether it must be rejected."""

    data: bytes
    steps: tuple[str, ...]
    certainly_bad: bool


def dump_json(value) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {dump_json(v)}" for k, v in value) + "}"
    if isinstance(value, dict):
        return dump_json(Pairs(value.items()))
    if isinstance(value, list):
        return "[" + ", ".join(dump_json(v) for v in value) + "]"
    return json.dumps(value)


def _toml_key(key: str) -> str:
    return key if key and all(c.isalnum() or c in "-_" for c in key) else json.dumps(key)


def _toml_value(value) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Pairs):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value) + "}"
    if isinstance(value, dict):
        return _toml_value(Pairs(value.items()))
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(type(value))


def dump_toml(doc: Pairs | dict) -> str:
    """A TOML document: scalars and inline tables at the top, tables and arrays of tables after."""
    items = list(doc.items()) if isinstance(doc, dict) else list(doc)
    lines, tables = [], []
    for key, value in items:
        if isinstance(value, (dict, Pairs)) and not isinstance(value, Raw):
            tables.append((f"[{_toml_key(key)}]", value))
        elif isinstance(value, list) and value and all(isinstance(v, (dict, Pairs)) for v in value):
            tables.extend((f"[[{_toml_key(key)}]]", v) for v in value)
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    for header, table in tables:
        lines.append("")
        lines.append(header)
        pairs = table.items() if isinstance(table, dict) else table
        lines.extend(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in pairs)
    return "\n".join(lines) + "\n"


def _paths(value, path=()):
    """Every non-root node's path, pre-order."""
    out = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append(path + (k,))
            out.extend(_paths(v, path + (k,)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.append(path + (i,))
            out.extend(_paths(v, path + (i,)))
    return out


def _containers(value, path=()):
    out = [path] if isinstance(value, dict) and value else []
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_containers(v, path + (k,)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_containers(v, path + (i,)))
    return out


def _get(value, path):
    for step in path:
        value = value[step]
    return value


def _replace(value, path, new):
    """A copy of ``value`` with the node at ``path`` replaced by ``new`` (``_DROP``: removed)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k != head:
                out[k] = v
                continue
            child = _replace(v, rest, new)
            if child is not _DROP:
                out[k] = child
        return out
    out = list(value)
    child = _replace(value[head], rest, new)
    if child is _DROP:
        del out[head]
    else:
        out[head] = child
    return out


def _with_pairs(value, path, key, twin):
    """``value`` with the object at ``path`` written as pairs, ``key`` given twice (second: ``twin``)."""
    obj = _get(value, path)
    pairs = Pairs(obj.items())
    index = next(i for i, (k, _) in enumerate(pairs) if k == key)
    pairs.insert(index + 1, (key, twin))
    return _replace(value, path, pairs) if path else pairs


_DROP = object()


def _nest(node, depth: int, kind: str, writer) -> Raw:
    inner = writer(node)
    if kind == "list":
        return Raw("[" * depth + inner + "]" * depth)
    return Raw('{"k": ' * depth + inner + "}" * depth) if writer is dump_json else Raw("{k = " * depth + inner + "}" * depth)


@st.composite
def _value_mutation(draw, doc, *, toml: bool):
    """(new document, description, certainly bad)."""
    writer = _toml_value if toml else dump_json
    paths = _paths(doc)
    kind = draw(st.sampled_from(["none", "none", "drop", "drop", "dup", "retype", "retype", "retype", "nest"]))
    if kind == "none" or not paths:
        return doc, "as is", False
    if kind == "dup":
        containers = _containers(doc)
        if not containers:
            return doc, "as is", False
        where = draw(st.sampled_from(containers))
        key = draw(st.sampled_from(sorted(_get(doc, where), key=str)))
        twin = _get(doc, where + (key,)) if draw(st.booleans()) else draw(st.sampled_from(_TOML_PLAIN if toml else _PLAIN))
        # TOML: tomllib rejects a repeated key itself; JSON: ours must
        return _with_pairs(doc, where, key, twin), f"dup {'.'.join(map(str, where + (key,)))}", True
    path = draw(st.sampled_from(paths))
    where = ".".join(map(str, path))
    if kind == "drop":
        return _replace(doc, path, _DROP), f"drop {where}", False
    if kind == "retype":
        if draw(st.integers(0, 3)) == 0:
            bad = draw(st.sampled_from(_TOML_BAD if toml else CERTAINLY_BAD_NUMBERS))
            return _replace(doc, path, bad), f"retype {where} to {bad[:20]}", True
        new = draw(st.sampled_from(_TOML_PLAIN if toml else _PLAIN))
        return _replace(doc, path, new), f"retype {where} to {new!r}", False
    depth = draw(st.sampled_from(_DEPTHS))
    shape = draw(st.sampled_from(["list", "object"]))
    nested = _nest(_get(doc, path), depth, shape, writer)
    return _replace(doc, path, nested), f"nest {where} {depth} deep in {shape}s", depth > 64


@st.composite
def _byte_mutation(draw, data: bytes, *, certainly_bad: bool, closing: bytes):
    """(new bytes, description, certainly bad) for one byte-level mutation of ``data``."""
    kind = draw(st.sampled_from(["none"] * 6 + ["truncate", "splice", "invalid", "overwrite", "delete", "bom", "crlf"]))
    if kind == "none" or not data:
        return data, None, certainly_bad
    end = data.rstrip().rfind(closing) if closing else -1
    if kind == "bom":
        return b"\xef\xbb\xbf" + data, "bom", certainly_bad
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n"), "crlf", certainly_bad
    at = draw(st.integers(0, len(data)))
    if kind == "truncate":
        return data[:at], f"truncate at {at}", 0 <= end and at <= end
    if kind == "invalid":
        chunk = draw(st.sampled_from(_INVALID_UTF8))
        return data[:at] + chunk + data[at:], f"insert {chunk!r} at {at}", True
    chunk = draw(st.binary(min_size=1, max_size=8))
    if kind == "splice":
        return data[:at] + chunk + data[at:], f"splice {chunk!r} at {at}", False
    if kind == "overwrite":
        return data[:at] + chunk + data[at + len(chunk):], f"overwrite {chunk!r} at {at}", False
    return data[:at] + data[at + len(chunk):], f"delete {len(chunk)} bytes at {at}", False


@st.composite
def json_cases(draw, documents: dict):
    """A mutated JSON document from one of ``documents`` (name -> value)."""
    name = draw(st.sampled_from(sorted(documents)))
    doc, what, bad = draw(_value_mutation(documents[name], toml=False))
    data = (dump_json(doc) + "\n").encode()
    data, byte_step, bad_after = draw(_byte_mutation(data, certainly_bad=bad, closing=b"}"))
    # a byte step after a value step may undo it (delete the twin key): only byte steps that are
    # certainly bad on their own keep the flag
    if byte_step is not None and byte_step.split()[0] not in ("bom", "crlf"):
        bad = bad_after if byte_step.startswith(("truncate", "insert")) else False
    return Case(data=data, steps=(name, what) + ((byte_step,) if byte_step else ()), certainly_bad=bad)


@st.composite
def toml_cases(draw, documents: dict):
    """A mutated TOML document from one of ``documents`` (name -> value)."""
    name = draw(st.sampled_from(sorted(documents)))
    doc, what, bad = draw(_value_mutation(documents[name], toml=True))
    data = dump_toml(doc).encode()
    data, byte_step, bad_after = draw(_byte_mutation(data, certainly_bad=bad, closing=b""))
    if byte_step is not None and byte_step.split()[0] not in ("bom", "crlf"):
        bad = bad_after if byte_step.startswith("insert") else False
    return Case(data=data, steps=(name, what) + ((byte_step,) if byte_step else ()), certainly_bad=bad)
