"""The one reading path for every file rebalproof reads: JSON documents, JSON Lines, TOML.

Inputs, answers, traces, corpus records, checkpoint manifests, suite and scenario files come
from other programs (recorded rebalances, foreign assignors, bug reports), so they are read as
hostile until proven otherwise. Every problem is an :class:`~rebalproof.errors.InputError`
whose one-line message starts with the place (``input 'in.json'``, ``corpus 'c.jsonl' line 7``)
and says what to do; the CLI turns it into exit 2. What is rejected, and why:

- **size**: a JSON document (or one corpus line) over :data:`MAX_JSON_BYTES`, a TOML file
  over :data:`MAX_TOML_BYTES` (read no further than the limit);
- **encoding**: bytes that are not UTF-8 (the message names the byte and its offset); a
  UTF-16/32 byte-order mark. A UTF-8 byte-order mark (files saved on Windows) is accepted;
- **nesting** deeper than :data:`MAX_DEPTH` levels: checked by a scan of the brackets outside
  strings *before* parsing, so no parser recursion can overflow (the contracts nest fewer
  than ten levels);
- **numbers**: an integer outside [-2^63, 2^63 - 1] (checked on its digits, so a 5,000-digit
  literal never reaches ``int()``), ``NaN`` / ``Infinity`` and floats that overflow to them;
- **duplicate keys** in one object (JSON would keep the last silently; the message names the
  key and its path, e.g. ``config.num_standby_replicas``); TOML rejects them itself;
- **strings** holding a lone UTF-16 surrogate (``"\\ud800"``), which no output can print;
- an empty document, and anything ``json`` / ``tomllib`` reject (with line and column).

Examples
--------
>>> parse_json('\\ufeff{"a": [1, 2]}', where="input 'x.json'")
{'a': [1, 2]}
>>> parse_json('{"config": {"n": 1, "n": 2}}', where="input 'x.json'")
Traceback (most recent call last):
...
rebalproof.errors.InputError: input 'x.json': duplicate key 'n' in config; give each key once (which one was meant cannot be guessed)
>>> parse_json("[" * 100 + "]" * 100, where="trace 't.json'")
Traceback (most recent call last):
...
rebalproof.errors.InputError: trace 't.json': nested deeper than 64 levels (line 1 column 65); rebalproof's documents nest at most a few levels, so this is not one of them
"""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from pathlib import Path

from rebalproof.errors import InputError

__all__ = [
    "MAX_DEPTH",
    "MAX_JSON_BYTES",
    "MAX_TOML_BYTES",
    "INT_MIN",
    "INT_MAX",
    "decode_utf8",
    "parse_json",
    "parse_toml",
    "read_bytes",
    "read_json_file",
    "read_toml_file",
    "schema_problem",
]

MAX_DEPTH = 64
MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_TOML_BYTES = 1024 * 1024
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
_INT_DIGITS = len(str(INT_MAX))  # 19: longer literals are out of range without converting them

_BOM = b"\xef\xbb\xbf"
_WIDE_BOMS = {b"\xff\xfe\x00\x00": "UTF-32", b"\x00\x00\xfe\xff": "UTF-32", b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}

# Strings end at their closing quote or at the end of the text, so the scan never retries.
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_TOML_SKIP = re.compile(
    r'"""(?:[^\\]|\\.)*?(?:"""|\Z)|\'\'\'.*?(?:\'\'\'|\Z)|"(?:[^"\\\n]++|\\.)*+(?:"|$)|\'[^\'\n]*+(?:\'|$)|#[^\n]*',
    re.DOTALL | re.MULTILINE,
)
_TOML_LONG_INT = re.compile(r"(?<![\w.+-])[+-]?(?:\d[\d_]{%d,}|0x[\da-fA-F_]{17,}|0o[0-7_]{22,}|0b[01_]{64,})(?![\w.])" % _INT_DIGITS)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _Reject(Exception):
    """Raised inside the JSON hooks; turned into an InputError with the literal's position."""

    def __init__(self, problem: str, literal: str):
        self.problem = problem
        self.literal = literal
        super().__init__(problem)


class _Duplicated(dict):
    """An object that had a key twice (the hook keeps the last value, the walk finds the path)."""

    __slots__ = ("key",)


def _position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    return f"line {line} column {offset - text.rfind(chr(10), 0, offset)}"


def decode_utf8(data: bytes, *, where: str, offset: int = 0) -> str:
    """UTF-8 bytes as text, a leading UTF-8 byte-order mark dropped.

    ``offset`` is where ``data`` starts in its file, so the message names the file's byte.
    """
    if offset == 0:
        for bom, name in _WIDE_BOMS.items():
            if data.startswith(bom):
                raise InputError(f"{where}: {name} text (byte-order mark {bom.hex(' ')}); save the file as UTF-8")
        if data.startswith(_BOM):
            data, offset = data[len(_BOM):], len(_BOM)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start:exc.start + 1].hex()
        raise InputError(
            f"{where}: not UTF-8 text: byte 0x{bad} at offset {offset + exc.start} ({exc.reason}); save the file as UTF-8"
        ) from None


def _depth_problem(structure: str, limit: int) -> int | None:
    """The offset (in ``structure``) where nesting first exceeds ``limit``, else None."""
    if structure.count("[") + structure.count("{") <= limit:
        return None
    depth = 0
    for i, char in enumerate(structure):
        if char in "[{":
            depth += 1
            if depth > limit:
                return i
        elif char in "]}":
            depth -= 1
    return None


def _blank(text: str, skip: re.Pattern) -> str:
    """``text`` with strings (and comments) blanked out by spaces, so offsets still name the right place."""
    return skip.sub(lambda m: " " * len(m.group()), text)


def _offset_before_cut(text: str, skip: re.Pattern, at: int) -> int:
    """The offset in ``text`` of the character at offset ``at`` of ``skip.sub("", text)``: each
    match cut out before it moves it on by the match's length (matches after it are not read)."""
    for match in skip.finditer(text):
        start, end = match.span()
        if start > at:
            break
        at += end - start
    return at


def _check_depth(text: str, skip: re.Pattern, where: str, structure: str | None = None) -> None:
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    if structure is None:
        # the brackets outside strings, in order, are the same with the strings cut out (in C)
        # as with them blanked: the place is found in the cut text, then named in the file by
        # the lengths cut before it (blanking every string was a Python call per string: 8
        # million calls in the fuzzing suite's deep documents)
        at = _depth_problem(skip.sub("", text), MAX_DEPTH)
        if at is not None:
            at = _offset_before_cut(text, skip, at)
    else:
        at = _depth_problem(structure, MAX_DEPTH)
    if at is not None:
        raise InputError(
            f"{where}: nested deeper than {MAX_DEPTH} levels ({_position(text, at)}); "
            "rebalproof's documents nest at most a few levels, so this is not one of them"
        )


def _path(parent: str, key) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def _first(obj, wanted) -> tuple[str, object] | None:
    """Depth-first, in document order (iteratively): the first (path, finding) ``wanted`` reports."""
    stack = [("", obj)]
    while stack:
        path, node = stack.pop()
        found = wanted(node)
        if found is not None:
            return path, found
        if isinstance(node, dict):
            stack.extend((_path(path, k), v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((_path(path, i), v) for i, v in reversed(list(enumerate(node))))
    return None


def _where_in(path: str) -> str:
    return f"in {path}" if path else "at the top level"


def _parse_int(literal: str) -> int:
    if len(literal.lstrip("-")) > _INT_DIGITS:
        raise _Reject(f"the integer {_shorten(literal)} has {len(literal.lstrip('-')):,} digits", literal)
    value = int(literal)
    if not INT_MIN <= value <= INT_MAX:
        raise _Reject(f"the integer {literal} is out of range", literal)
    return value


def _parse_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Reject(f"the number {_shorten(literal)} overflows to infinity", literal)
    return value


def _parse_constant(literal: str):
    raise _Reject(f"{literal} is not a JSON number", literal)


def _shorten(literal: str) -> str:
    return literal if len(literal) <= 24 else f"{literal[:10]}...{literal[-6:]}"


def _pairs_hook(duplicated: list):
    """An ``object_pairs_hook`` that marks objects with a repeated key and notes that it did."""

    def pairs(items: list) -> dict:
        obj = dict(items)
        if len(obj) == len(items):
            return obj
        seen = set()
        marked = _Duplicated(obj)
        marked.key = next(k for k, _ in items if k in seen or seen.add(k))
        duplicated.append(marked.key)
        return marked

    return pairs


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def parse_json(data: str | bytes, *, where: str, offset: int = 0):
    """The JSON value in ``data``, read with every check of this module.

    Parameters
    ----------
    data : str or bytes
        The document; bytes are decoded as UTF-8 (a byte-order mark is dropped).
    where : str, keyword-only
        Names the document at the start of every message (``"input 'in.json'"``).
    offset : int, keyword-only
        Where ``data`` starts in its file, for the byte offset of an encoding error.

    Raises
    ------
    InputError
        On any of the problems listed in the module docstring.
    """
    if len(data) > MAX_JSON_BYTES:
        raise InputError(
            f"{where}: over the limit of {MAX_JSON_BYTES:,} bytes for one JSON document; "
            "is this the right file? (a corpus holds one record per line)"
        )
    text = decode_utf8(data, where=where, offset=offset) if isinstance(data, bytes) else data.removeprefix("\ufeff")
    if not text.strip():
        raise InputError(f"{where}: empty, no JSON value; give a JSON document")
    _check_depth(text, _JSON_STRING, where)
    duplicated = []
    try:
        value = json.loads(text, object_pairs_hook=_pairs_hook(duplicated), parse_int=_parse_int, parse_float=_parse_float,
                           parse_constant=_parse_constant)
    except _Reject as exc:
        at = text.find(exc.literal)
        place = f" ({_position(text, at)})" if at >= 0 else ""
        fix = "write a finite number" if "number" in exc.problem else f"integers lie between {INT_MIN} and {INT_MAX}"
        raise InputError(f"{where}: {exc.problem}{place}; {fix}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not valid JSON: {exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:  # the depth scan prevents this; kept so no parser can ever crash a run
        raise InputError(f"{where}: nested too deeply to read; rebalproof's documents nest at most a few levels") from None
    if duplicated:
        found = _first(value, lambda node: node.key if isinstance(node, _Duplicated) else None)
        if found is not None:
            path, key = found
            raise InputError(f"{where}: duplicate key '{key}' {_where_in(path)}; give each key once (which one was meant cannot be guessed)")
    if _SURROGATE_ESCAPE.search(text):
        found = _first(value, _surrogate_in)
        if found is not None:
            path, string = found
            raise InputError(
                f"{where}: {_where_in(path)}, the string {string.encode('utf-8', 'backslashreplace').decode()[:40]!r} holds "
                "a lone UTF-16 surrogate; write the character itself (or a valid surrogate pair)"
            )
    return value


def _surrogate_in(node):
    if isinstance(node, str) and _lone_surrogate(node):
        return node
    if isinstance(node, dict):
        for key in node:
            if _lone_surrogate(key):
                return key
    return None


def parse_toml(data: bytes, *, where: str) -> dict:
    """The TOML table in ``data``, with the size, encoding, depth and number checks of JSON.

    ``tomllib`` already rejects a key given twice; TOML's ``inf`` and ``nan`` are rejected
    here, as are integers outside [-2^63, 2^63 - 1] (the TOML spec's own range).
    """
    if len(data) > MAX_TOML_BYTES:
        raise InputError(f"{where}: over the limit of {MAX_TOML_BYTES:,} bytes for a TOML file; it holds bounds, not data")
    text = decode_utf8(data, where=where)
    structure = _blank(text, _TOML_SKIP)
    _check_depth(text, _TOML_SKIP, where, structure)
    long_int = _TOML_LONG_INT.search(structure)
    if long_int:
        raise InputError(
            f"{where}: the integer {_shorten(long_int.group())} is out of range ({_position(text, long_int.start())}); "
            f"integers lie between {INT_MIN} and {INT_MAX}"
        )
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{where}: not valid TOML: {exc}") from None
    except ValueError as exc:  # tomllib converts integer literals itself: over 4,300 digits raises here
        raise InputError(f"{where}: not valid TOML: {str(exc).split(':')[0]}; integers lie between {INT_MIN} and {INT_MAX}") from None
    except RecursionError:
        raise InputError(f"{where}: nested too deeply to read; suite and scenario files nest at most a few levels") from None
    found = _first(value, _bad_toml_number)
    if found is not None:
        path, problem = found
        raise InputError(f"{where}: {_where_in(path)}: {problem}")
    return value


def _bad_toml_number(node):
    if isinstance(node, bool):
        return None
    if isinstance(node, int) and not INT_MIN <= node <= INT_MAX:
        return f"the integer {node} is out of range; integers lie between {INT_MIN} and {INT_MAX}"
    if isinstance(node, float) and not math.isfinite(node):
        return f"{node} is not a number rebalproof accepts; write a finite number"
    return None


def read_bytes(path: str | os.PathLike, *, what: str, limit: int, missing: str = "check the path") -> bytes:
    """The bytes of the file at ``path`` (at most ``limit`` + 1 are read); errors name ``what``."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            return handle.read(limit + 1)
    except FileNotFoundError:
        raise InputError(f"{what} '{path}' does not exist; {missing}") from None
    except IsADirectoryError:
        raise InputError(f"{what} '{path}' is a directory; give a file") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} '{path}': {exc.strerror or exc}") from None


def read_json_file(path: str | os.PathLike, *, what: str = "file"):
    """The JSON document in the file at ``path`` (see :func:`parse_json`)."""
    data = read_bytes(path, what=what, limit=MAX_JSON_BYTES)  # read no further than the limit
    return parse_json(data, where=f"{what} '{path}'")


def read_toml_file(path: str | os.PathLike, *, what: str = "file", missing: str = "check the path") -> dict:
    """The TOML table in the file at ``path`` (see :func:`parse_toml`)."""
    data = read_bytes(path, what=what, limit=MAX_TOML_BYTES, missing=missing)
    return parse_toml(data, where=f"{what} '{path}'")


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def schema_problem(value, schema: dict, path: str = "") -> str | None:
    """The first place where ``value`` breaks ``schema``, as ``"<path>: <problem>"``; None if it fits.

    The subset of JSON Schema that rebalproof's own schemas use (``type``, ``const``, ``enum``,
    ``required``, ``properties``, ``additionalProperties``, ``items``, ``minItems``,
    ``minimum``, ``anyOf``, ``allOf`` with ``if``/``then``), iteratively over the document's
    depth-limited nesting.
    """
    here = path or "the top level"
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_TYPES[k](value) for k in kinds):
            return f"{here}: must be {' or '.join(kinds)}, got {_json_kind(value)}"
    if "const" in schema and value != schema["const"]:
        return f"{here}: must be {json.dumps(schema['const'])}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{here}: must be one of {', '.join(json.dumps(e) for e in schema['enum'])}, got {_short_json(value)}"
    if "minimum" in schema and _TYPES["number"](value) and value < schema["minimum"]:
        return f"{here}: must be at least {schema['minimum']}, got {value}"
    if "anyOf" in schema and all(schema_problem(value, s, path) for s in schema["anyOf"]):
        return schema_problem(value, schema["anyOf"][0], path)
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                return f'{here}: missing "{key}"'
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                problem = schema_problem(item, properties[key], _path(path, key))
            elif extra is False:
                problem = f"{here}: unknown field '{key}'; the fields are {', '.join(properties)}"
            elif isinstance(extra, dict):
                problem = schema_problem(item, extra, _path(path, key))
            else:
                problem = None
            if problem:
                return problem
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return f"{here}: needs at least {schema['minItems']} item(s)"
        items = schema.get("items")
        if items is not None:
            for i, item in enumerate(value):
                problem = schema_problem(item, items, _path(path, i))
                if problem:
                    return problem
    for rule in schema.get("allOf", ()):
        if "if" in rule and schema_problem(value, rule["if"], path) is None:
            problem = schema_problem(value, rule["then"], path)
            if problem:
                return problem
    return None


def _json_kind(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")


def _short_json(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
