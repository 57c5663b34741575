"""The trace format ``rebalproof-trace/1``: counterexamples as JSON values, steps named by action.

A trace is what a check found, replayable without the explorer::

    {"format": "rebalproof-trace/1",
     "protocol": "cooperative", "assignor": "ha",
     "config": <Config JSON>, "tasks": [{"id": "0_0", "stateful": true}, ...],
     "bounds": {<Bounds>}, "property": "single-owner",
     "kind": "safety" | "lasso" | "scenario", "fail_step": 7, "cycle_start": 3 (lasso only),
     "message": "...",
     "steps": [{"action": {"kind": "init"}, "state": {...}},
               {"action": {"kind": "rebalance", "choice": 0}, "state": {...},
                "rebalance": {"input": <RebalanceInput JSON>, "assignment": <Assignment JSON>}},
               ...]}

Step 0 is the initial state (action ``init``); step ``i`` is the action taken from step
``i-1``'s state and the state it leads to. ``fail_step`` is the step whose state (or whose
action, for a property of transitions) shows the failure. A lasso's steps from
``cycle_start`` to the last repeat forever: the last state equals the state of step
``cycle_start``. A step that ran the assignor carries its input and answer; one where the
assignor misbehaved carries ``error`` (and the input) instead of an answer.

A ``scenario`` trace is a run that shows no violation: a golden trace written from a seed's
walk-through (``traces/seeds/``). It has no ``property`` or ``fail_step``; it may start from any
state (the seed's "Group stable state"), not only the model's cold start. Optional fields,
for renderers and readers only (replay ignores them): ``pool`` (the instance ids joins take,
in order; default the bounds' ``I1..I<instances>``), ``title``, ``source`` (``{"seed",
"section", "title"}``), ``comment`` (where the seed contradicts itself: what its text shows);
per step ``title`` (a seed's heading for the rebalance) and ``comment``.

This module keeps the encoders and decoders of traces and of states (:func:`encode_state`,
:func:`decode_state`) so that renderers, replay and HTML build on one definition.
:data:`TRACE_SCHEMA` is the JSON Schema (draft 2020-12).
"""

from __future__ import annotations

from dataclasses import dataclass

from rebalproof.errors import InputError
from rebalproof.model.codec import decode_assignment, decode_input, encode_assignment, encode_input, write_json_atomic
from rebalproof.model.group_state import LAG_CLASSES, Action, GroupState, MemberState
from rebalproof.model.lag_readings import READINGS
from rebalproof.reading import schema_problem

__all__ = [
    "FORMAT",
    "KINDS",
    "TRACE_SCHEMA",
    "STATE_SCHEMA",
    "encode_state",
    "decode_state",
    "encode_action",
    "decode_action",
    "Trace",
    "TraceStep",
    "decode_trace",
    "build_trace",
    "write_trace",
]

FORMAT = "rebalproof-trace/1"
#: ``safety``: a state or step breaks a property; ``lasso``: a cycle does; ``scenario``: no violation.
KINDS = ("safety", "lasso", "scenario")
_LAG_CODES = {v: k for k, v in LAG_CLASSES.items()}

_IDS = {"type": "array", "items": {"type": "string"}}
_ROLES = {
    "type": "object",
    "required": ["active", "standby", "warmup"],
    "properties": {"active": _IDS, "standby": _IDS, "warmup": _IDS},
    "additionalProperties": False,
}
STATE_SCHEMA = {
    "type": "object",
    "required": ["members", "leader", "memory", "spawned", "events", "triggers", "pending", "probe"],
    "additionalProperties": False,
    "properties": {
        "members": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "active", "standby", "warmup", "lags", "leaving", "ready"],
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "string"},
                    "active": _IDS,
                    "standby": _IDS,
                    "warmup": _IDS,
                    "lags": {"type": "object", "additionalProperties": {"enum": list(LAG_CLASSES.values())}},
                    "leaving": {"type": "boolean"},
                    "ready": {"type": "boolean"},
                },
            },
        },
        "leader": {"type": ["string", "null"]},
        "memory": {"anyOf": [_IDS, {"type": "null"}]},
        "spawned": {"type": "integer", "minimum": 0},
        "events": {"type": "integer", "minimum": 0},
        "triggers": _IDS,
        "pending": {"type": "object", "additionalProperties": _ROLES},
        "probe": {"type": "boolean"},
    },
}
_ACTION_SCHEMA = {
    "type": "object",
    "required": ["kind"],
    "additionalProperties": False,
    "properties": {
        "kind": {"type": "string"},
        "member": {"type": "string"},
        "task": {"type": "string"},
        "choice": {"type": "integer", "minimum": 0},
        "leader": {"type": "string"},
        "lags": {"enum": list(READINGS)},
        "requested": {"type": "boolean"},
    },
}
TRACE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://rebalproof.dev/schema/trace-1.json",
    "title": "rebalproof trace",
    "type": "object",
    "required": ["format", "protocol", "assignor", "config", "tasks", "bounds", "kind", "steps"],
    "properties": {
        "format": {"const": FORMAT},
        "protocol": {"type": "string"},
        "assignor": {"type": "string"},
        "config": {"type": "object"},
        "tasks": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "stateful"],
                "properties": {"id": {"type": "string"}, "stateful": {"type": "boolean"}},
            },
        },
        "bounds": {"type": "object"},
        "property": {"type": "string"},
        "kind": {"enum": list(KINDS)},
        "message": {"type": "string"},
        "fail_step": {"type": "integer", "minimum": 0},
        "cycle_start": {"type": "integer", "minimum": 0},
        "symmetry": {"type": "boolean"},
        "pool": _IDS,
        "title": {"type": "string"},
        "source": {"type": "object", "additionalProperties": {"type": "string"}},
        "comment": {"type": "string"},
        "steps": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["action", "state"],
                "properties": {
                    "action": _ACTION_SCHEMA,
                    "state": STATE_SCHEMA,
                    "rebalance": {
                        "type": "object",
                        "required": ["input"],
                        "properties": {"input": {"type": "object"}, "assignment": {"type": ["object", "null"]}},
                    },
                    "error": {"type": "string"},
                    "title": {"type": "string"},
                    "comment": {"type": "string"},
                },
            },
        },
    },
    "allOf": [
        {"if": {"properties": {"kind": {"enum": ["safety", "lasso"]}}}, "then": {"required": ["property", "fail_step"]}},
        {"if": {"properties": {"kind": {"const": "lasso"}}}, "then": {"required": ["cycle_start"]}},
    ],
}


# -- states and actions -----------------------------------------------------------------
def encode_state(state: GroupState) -> dict:
    """The JSON object of a group state (see :data:`STATE_SCHEMA`)."""
    return {
        "members": [
            {
                "id": m.id,
                "active": list(m.active),
                "standby": list(m.standby),
                "warmup": list(m.warmup),
                "lags": {t: LAG_CLASSES[c] for t, c in m.lags},
                "leaving": m.leaving,
                "ready": m.ready,
            }
            for m in state.members
        ],
        "leader": state.leader,
        "memory": None if state.memory is None else list(state.memory),
        "spawned": state.spawned,
        "events": state.events,
        "triggers": list(state.triggers),
        "pending": {e[0]: {"active": list(e[1]), "standby": list(e[2]), "warmup": list(e[3])} for e in state.pending},
        "probe": state.probe,
    }


def decode_state(obj: dict, *, task_order: dict | None = None) -> GroupState:
    """The :class:`GroupState` of :func:`encode_state`'s JSON (``task_order`` sorts lags)."""
    try:
        order = task_order or {}

        def key(t):
            return (order.get(t, len(order)), t)

        members = tuple(
            MemberState(
                id=m["id"],
                active=tuple(m["active"]),
                standby=tuple(m["standby"]),
                warmup=tuple(m["warmup"]),
                lags=tuple(sorted(((t, _LAG_CODES[c]) for t, c in m["lags"].items()), key=lambda p: key(p[0]))),
                leaving=m["leaving"],
                ready=m["ready"],
            )
            for m in obj["members"]
        )
        return GroupState(
            members=members,
            leader=obj["leader"],
            memory=None if obj["memory"] is None else tuple(obj["memory"]),
            spawned=obj["spawned"],
            events=obj["events"],
            triggers=tuple(obj["triggers"]),
            pending=tuple(
                (m, tuple(r["active"]), tuple(r["standby"]), tuple(r["warmup"]))
                for m, r in sorted(obj["pending"].items(), key=lambda p: (len(p[0]), p[0]))
            ),
            probe=obj["probe"],
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"not a rebalproof state: {exc!r}", where="state") from None


def encode_action(action: Action) -> dict:
    return action.to_json()


def decode_action(obj: dict) -> Action:
    if not isinstance(obj, dict) or "kind" not in obj:
        raise InputError('an action is an object with a "kind"', where="action")
    return Action.from_json(obj)


# -- traces -------------------------------------------------------------------------------
@dataclass(frozen=True)
class TraceStep:
    action: Action | None  # None for the initial step
    state: GroupState
    rebalance: dict | None = None
    error: str | None = None
    title: str | None = None  # a seed's heading for this rebalance (readers only)
    comment: str | None = None  # what a seed's text shows here (readers only)


@dataclass(frozen=True)
class Trace:
    """A decoded trace: the header fields and the steps as values."""

    header: dict
    steps: tuple[TraceStep, ...]

    @property
    def property_name(self) -> str | None:
        """The violated property; None for a ``scenario`` trace."""
        return self.header.get("property")

    @property
    def kind(self) -> str:
        return self.header["kind"]

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(s.action for s in self.steps[1:] if s.action is not None)


#: The fields each action kind names (what the model and the renderers read).
_ACTION_NEEDS = {
    "rebalance": (), "probe": (), "deliver": ("member",), "rejoin": ("member",), "timeout": ("member",),
    "join": ("member",), "leave": ("member",), "crash": ("member",), "mark-leaving": ("member",),
    "restore": ("member", "task"), "age": ("member", "task"), "cleanup": ("member", "task"),
}


def _check_step(action: Action | None, state: GroupState, before: GroupState | None, tasks: dict,
                rebalance: dict | None, *, first: bool) -> None:
    """What a schema cannot say: ids name the trace's tasks and members, and a step's action fits
    the state before it (a trace whose steps do not fit together is not one rebalproof wrote)."""
    ids = [m.id for m in state.members]
    if len(set(ids)) != len(ids):
        raise InputError("a member appears twice", where="state.members")
    for m in state.members:
        for task in (*m.active, *m.standby, *m.warmup, *(t for t, _ in m.lags)):
            if task not in tasks:
                raise InputError(f"member {m.id} names task '{task}', which is not among the trace's tasks", where="state")
    for member, *roles in state.pending:
        for task in (t for role in roles for t in role):
            if task not in tasks:
                raise InputError(f"the assignment pending for {member} names task '{task}', not among the trace's tasks", where="state.pending")
    if first != (action is None):
        raise InputError('the first step, and only it, has the action {"kind": "init"}', where="action")
    if action is None:
        return
    if action.kind not in _ACTION_NEEDS:
        raise InputError(f"unknown action kind {action.kind!r}; the kinds are {', '.join(_ACTION_NEEDS)}", where="action")
    for name in _ACTION_NEEDS[action.kind]:
        value = getattr(action, name)
        if not isinstance(value, str) or not value:
            raise InputError(f'a {action.kind} action names its "{name}"', where="action")
    if action.task is not None and action.task not in tasks:
        raise InputError(f"task '{action.task}' is not among the trace's tasks", where="action.task")
    present = {m.id for m in before.members}
    if action.kind == "join":
        if action.member in present or action.member not in ids:
            raise InputError(f"{action.member} joins, so it is a member after the step and not before", where="action")
    elif action.member is not None and action.member not in present:
        raise InputError(f"{action.member} is not a member in the state before this {action.kind}", where="action")
    if not isinstance(action.choice, int) or isinstance(action.choice, bool) or action.choice < 0:
        raise InputError("choice must be a whole number of at least 0", where="action.choice")
    if action.lags is not None and (action.kind != "rebalance" or action.lags not in READINGS):
        raise InputError(
            f"lags names the lag reading of a rebalance's view, one of {', '.join(READINGS)}; got {action.lags!r}"
            + ("" if action.kind == "rebalance" else f" on a {action.kind}"),
            where="action.lags",
        )
    if action.requested and (action.kind != "rebalance" or before.triggers):
        raise InputError("requested marks a rebalance asked for in a quiescent group (no trigger pending)",
                         where="action.requested")
    if rebalance is not None:
        view = decode_input(rebalance.get("input"))
        if rebalance.get("assignment") is not None:
            decode_assignment(rebalance["assignment"], view)


def decode_trace(obj: dict) -> Trace:
    """A :class:`Trace` from its JSON object; an :class:`InputError` saying what is wrong otherwise."""
    if not isinstance(obj, dict):
        raise InputError("a trace is a JSON object")
    if obj.get("format") != FORMAT:
        raise InputError(f'not a rebalproof trace: "format" must be "{FORMAT}"', where="format")
    problem = schema_problem(obj, TRACE_SCHEMA)
    if problem:
        raise InputError(f"not a trace of format {FORMAT}: {problem}; see 'Traces' in docs/DESIGN.md")
    for key in TRACE_SCHEMA["required"]:
        if key not in obj:
            raise InputError(f'missing "{key}"', where="trace")
    if obj["kind"] not in KINDS:
        raise InputError(f'"kind" must be one of {", ".join(KINDS)}, got {obj["kind"]!r}', where="trace")
    if obj["kind"] != "scenario":
        for key in ("property", "fail_step"):
            if key not in obj:
                raise InputError(f'missing "{key}" (a {obj["kind"]} trace names the property and the step where it fails)', where="trace")
    if obj["kind"] == "lasso" and "cycle_start" not in obj:
        raise InputError('a lasso needs "cycle_start"', where="trace")
    order = {t["id"]: i for i, t in enumerate(obj["tasks"])}
    if len(order) != len(obj["tasks"]):
        raise InputError("a task id appears twice", where="tasks")
    steps = []
    for i, raw in enumerate(obj["steps"]):
        if not isinstance(raw, dict) or not isinstance(raw.get("action"), dict) or "state" not in raw:
            raise InputError('every step is an object with an "action" and a "state"', where=f"steps[{i}]")
        try:
            action = None if raw["action"].get("kind") == "init" else decode_action(raw["action"])
            state = decode_state(raw["state"], task_order=order)
            _check_step(action, state, steps[-1].state if steps else None, order, raw.get("rebalance"), first=not steps)
        except InputError as exc:
            raise InputError(str(exc), where=f"steps[{i}]") from None
        steps.append(
            TraceStep(
                action=action, state=state, rebalance=raw.get("rebalance"), error=raw.get("error"),
                title=raw.get("title"), comment=raw.get("comment"),
            )
        )
    if not steps:
        raise InputError("a trace has at least its initial step", where="steps")
    header = {k: v for k, v in obj.items() if k != "steps"}
    return Trace(header=header, steps=tuple(steps))


def _step_json(model, state, action, nxt) -> dict:
    out = {"action": encode_action(action), "state": encode_state(nxt)}
    if action.kind == "rebalance":
        step = model.rebalance_step(state, action)
        if step is not None:
            out["rebalance"] = {"input": encode_input(step.view), "assignment": encode_assignment(step.assignment)}
    return out


def _follow(exp, state, action, target_fp):
    """The successor of ``state`` by ``action`` if it has fingerprint ``target_fp``, else a
    successor that has it (under symmetry the stored action names another representative)."""
    model, fp = exp.model, exp.fingerprinter
    nxt = model.next_state(state, action)
    if nxt is not None and fp(nxt) == target_fp:
        return action, nxt
    candidates = [(a, n) for a, n in model.expand(state) if fp(n) == target_fp]
    if not candidates:
        raise RuntimeError("trace: no successor reaches the recorded state")
    candidates.sort(key=lambda p: (p[0].kind != action.kind, ACTION_ORDER(p[0])))
    return candidates[0]


def ACTION_ORDER(a: Action):  # noqa: N802 - a sort key
    return (a.kind, a.member or "", a.task or "", a.choice, a.leader or "")


def build_trace(exp, discovery, *, protocol: str, assignor: str, bounds, config_json: dict) -> dict:
    """The trace JSON of ``discovery`` (from :mod:`rebalproof.properties.run`) in exploration ``exp``.

    The path is rebuilt by actions along BFS parent links and replayed through the model; a
    lasso's cycle is replayed edge by edge (and repeated, under symmetry, until the concrete
    state comes back, at most 24 times).
    """
    model = exp.model
    init_idx, actions = exp.path_actions(discovery.state)
    states = exp.replay(init_idx, actions)
    steps = [{"action": {"kind": "init"}, "state": encode_state(states[0])}]
    for prev, a, nxt in zip(states, actions, states[1:]):
        steps.append(_step_json(model, prev, a, nxt))
    current = states[-1]
    kind = "safety"
    cycle_start = None
    if discovery.kind == "finding":
        err = discovery.error
        action = {"kind": "rebalance", "choice": 0}
        if discovery.action is not None and discovery.action.lags:  # it failed on a reading of the view
            action["lags"] = discovery.action.lags
        if discovery.action is not None and discovery.action.requested:  # on a rebalance requested in a quiescent group
            action["requested"] = True
        steps.append(
            {
                "action": action,
                "state": encode_state(current),
                "rebalance": {"input": getattr(err, "input_json", None) or {}, "assignment": None},
                "error": str(err),
            }
        )
    elif discovery.kind == "lasso":
        kind = "lasso"
        cycle_start = len(steps) - 1
        entry = current
        for _ in range(24):
            for e in discovery.path:
                a, nxt = _follow(exp, current, exp.action(e), exp.fingerprints[exp.edge_dst[e]])
                steps.append(_step_json(model, current, a, nxt))
                current = nxt
            if current == entry:
                break
    else:
        if discovery.action is not None:
            nxt = model.next_state(current, discovery.action)
            steps.append(_step_json(model, current, discovery.action, nxt))
            current = nxt
        for e in discovery.path:
            a, nxt = _follow(exp, current, exp.action(e), exp.fingerprints[exp.edge_dst[e]])
            steps.append(_step_json(model, current, a, nxt))
            current = nxt
    out = {
        "format": FORMAT,
        "protocol": protocol,
        "assignor": assignor,
        "config": config_json,
        "tasks": [{"id": t.id, "stateful": t.stateful} for t in bounds.tasks],
        "bounds": bounds.to_json(),
        "property": discovery.property,
        "kind": kind,
        "message": discovery.message,
        "fail_step": len(steps) - 1,
        "symmetry": bool(exp.symmetry),
        "steps": steps,
    }
    if cycle_start is not None:
        out["cycle_start"] = cycle_start
    return out


def write_trace(path, trace: dict) -> None:
    """Write a trace atomically (the file is the old one or the whole new one)."""
    write_json_atomic(path, trace)
