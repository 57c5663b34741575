"""JSON codecs for exactly the contract in docs/DESIGN.md: ``RebalanceInput`` and ``Assignment``.

Decoding validates shape (types, unknown fields) here and semantics (duplicates, unknown
ids, negative numbers) in the values themselves; every problem is an
:class:`~rebalproof.errors.InputError` whose message names the place and says how to fix it.
Encoding is canonical: sorted ids, fixed key order, so equal values give equal text.

Examples
--------
>>> view = decode_input({"tasks": [{"id": "0_0"}], "members": [{"id": "I1"}]})
>>> view.config.max_warmup_replicas
2
>>> encode_assignment(decode_assignment({"assignment": {"I1": {"active": ["0_0"]}}}, view))
{'assignment': {'I1': {'active': ['0_0'], 'standby': [], 'warmup': []}}, 'probing_rebalance': False}
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from rebalproof.errors import InputError
from rebalproof.model.assignment import ROLES, Assignment, MemberAssignment
from rebalproof.model.view import Config, Member, RebalanceInput, Task
from rebalproof.reading import read_json_file

__all__ = [
    "decode_input",
    "encode_input",
    "decode_assignment",
    "encode_assignment",
    "read_json",
    "write_json_atomic",
    "dumps_canonical",
    "check_ids",
    "write_text_atomic",
]

_CONFIG_FIELDS = ("num_standby_replicas", "acceptable_recovery_lag", "max_warmup_replicas")
_INPUT_FIELDS = ("config", "tasks", "members", "previous_members")
_TASK_FIELDS = ("id", "stateful")
_MEMBER_FIELDS = ("id", "capacity", "leaving", "active", "standby", "warmup", "lags")
_ASSIGNMENT_FIELDS = ("assignment", "probing_rebalance")


def _object(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise InputError(f"must be a JSON object, got {_kind(value)}", where=where)
    return value


def _known(obj: dict, fields, where: str) -> None:
    for key in obj:
        if key not in fields:
            raise InputError(f"unknown field '{key}'; the fields are {', '.join(fields)}", where=where)


def _string_list(value, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise InputError(f"must be a list of ids, got {_kind(value)}", where=where)
    for item in value:
        if not isinstance(item, str) or not item:
            raise InputError(f"ids must be non-empty strings, got {item!r}", where=where)
    return tuple(value)


def _kind(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _bool(value, where: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"must be true or false, got {json.dumps(value)}", where=where)
    return value


def _int(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"must be a whole number, got {json.dumps(value)}", where=where)
    return value


def decode_input(obj) -> RebalanceInput:
    """A validated :class:`RebalanceInput` from the contract's JSON object."""
    obj = _object(obj, "input")
    _known(obj, _INPUT_FIELDS, "input")
    raw_config = _object(obj.get("config", {}), "config")
    _known(raw_config, _CONFIG_FIELDS, "config")
    config = Config(**{k: _int(v, f"config.{k}") for k, v in raw_config.items()})

    raw_tasks = obj.get("tasks", [])
    if not isinstance(raw_tasks, list):
        raise InputError(f"must be a list of task objects, got {_kind(raw_tasks)}", where="tasks")
    tasks = []
    for i, raw in enumerate(raw_tasks):
        where = f"tasks[{i}]"
        raw = _object(raw, where)
        _known(raw, _TASK_FIELDS, where)
        if "id" not in raw:
            raise InputError('every task needs an "id"', where=where)
        if not isinstance(raw["id"], str) or not raw["id"]:
            raise InputError(f"a task id must be a non-empty string, got {json.dumps(raw['id'])}", where=f"{where}.id")
        tasks.append(Task(id=raw["id"], stateful=_bool(raw.get("stateful", True), f"{where}.stateful")))

    raw_members = obj.get("members", [])
    if not isinstance(raw_members, list):
        raise InputError(f"must be a list of member objects, got {_kind(raw_members)}", where="members")
    members = []
    for i, raw in enumerate(raw_members):
        where = f"members[{i}]"
        raw = _object(raw, where)
        _known(raw, _MEMBER_FIELDS, where)
        if "id" not in raw:
            raise InputError('every member needs an "id"', where=where)
        if not isinstance(raw["id"], str) or not raw["id"]:
            raise InputError(f"a member id must be a non-empty string, got {json.dumps(raw['id'])}", where=f"{where}.id")
        lags = _object(raw.get("lags", {}), f"{where}.lags")
        members.append(
            Member(
                id=raw["id"],
                capacity=_int(raw.get("capacity", 1), f"{where}.capacity"),
                leaving=_bool(raw.get("leaving", False), f"{where}.leaving"),
                active=_string_list(raw.get("active", []), f"{where}.active"),
                standby=_string_list(raw.get("standby", []), f"{where}.standby"),
                warmup=_string_list(raw.get("warmup", []), f"{where}.warmup"),
                lags=tuple((t, _int(l, f"{where}.lags.{t}")) for t, l in lags.items()),
            )
        )
    previous = obj.get("previous_members")
    if previous is not None:
        previous = _string_list(previous, "previous_members")
    return RebalanceInput(config=config, tasks=tuple(tasks), members=tuple(members), previous_members=previous)


def encode_input(view: RebalanceInput) -> dict:
    """The canonical JSON object of a :class:`RebalanceInput` (every field written out)."""
    out = {
        "config": {k: getattr(view.config, k) for k in _CONFIG_FIELDS},
        "tasks": [{"id": t.id, "stateful": t.stateful} for t in view.tasks],
        "members": [
            {
                "id": m.id,
                "capacity": m.capacity,
                "leaving": m.leaving,
                "active": list(m.active),
                "standby": list(m.standby),
                "warmup": list(m.warmup),
                "lags": dict(m.lags),
            }
            for m in view.members
        ],
    }
    if view.previous_members is not None:
        out["previous_members"] = list(view.previous_members)
    return out


def decode_assignment(obj, view: RebalanceInput | None = None) -> Assignment:
    """A validated :class:`Assignment`; with ``view``, ids are checked against it.

    Against an input: every input member must appear, and no unknown member or task may.
    """
    obj = _object(obj, "output")
    _known(obj, _ASSIGNMENT_FIELDS, "output")
    if "assignment" not in obj:
        raise InputError('missing "assignment": an object from member id to its active, standby and warmup lists', where="output")
    raw = _object(obj["assignment"], "assignment")
    members = {}
    for member_id, roles in raw.items():
        where = f"assignment.{member_id}"
        roles = _object(roles, where)
        _known(roles, ROLES, where)
        members[member_id] = MemberAssignment(**{r: _string_list(roles.get(r, []), f"{where}.{r}") for r in ROLES})
    assignment = Assignment(members=members, probing_rebalance=_bool(obj.get("probing_rebalance", False), "probing_rebalance"))
    if view is not None:
        check_ids(assignment, view)
    return assignment


def check_ids(assignment: Assignment, view: RebalanceInput) -> None:
    """Raise :class:`InputError` when the answer names ids the input does not, or omits a member."""
    for member_id, roles in assignment.members:
        if not view.has_member(member_id):
            raise InputError(
                f"unknown member '{member_id}': the input's members are {', '.join(view.member_ids) or 'none'}",
                where="assignment",
            )
        for role in ROLES:
            for task_id in getattr(roles, role):
                if not view.has_task(task_id):
                    raise InputError(f"unknown task '{task_id}': not among the input's tasks", where=f"assignment.{member_id}.{role}")
    named = set(assignment.member_ids)
    for member_id in view.member_ids:
        if member_id not in named:
            raise InputError(
                f"member '{member_id}' of the input is missing; every input member appears, with empty lists if it gets nothing",
                where="assignment",
            )


def encode_assignment(assignment: Assignment) -> dict:
    """The canonical JSON object of an :class:`Assignment`."""
    return {
        "assignment": {m: {r: list(getattr(a, r)) for r in ROLES} for m, a in assignment.members},
        "probing_rebalance": assignment.probing_rebalance,
    }


def read_json(path: str | os.PathLike, *, what: str = "file"):
    """Parse a JSON file through :func:`rebalproof.reading.read_json_file` (size, depth, number,
    duplicate-key and encoding checks); every problem is an :class:`InputError` naming the place."""
    return read_json_file(path, what=what)


def dumps_canonical(obj) -> str:
    """Compact, key-sorted JSON: the same value always gives the same text."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def write_json_atomic(path: str | os.PathLike, obj, *, indent: int | None = 2) -> None:
    """Write JSON so that the file is either the old one or the whole new one, never half."""
    write_text_atomic(path, json.dumps(obj, indent=indent) + "\n")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write text atomically: a temporary file in the same folder, then a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; a written report should read like any file
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
