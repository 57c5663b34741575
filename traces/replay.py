"""Replay a trace: re-execute its actions against its protocol and assignor, step by step.

A trace (:mod:`rebalproof.traces.format`) is a value: a start state, then actions, each with the
state it led to, and for every rebalance the leader's view and the assignor's answer. Replay
rebuilds the group model from the trace's header (protocol, assignor, bounds, tasks, pool of
instance ids) and checks every step:

``exact``
    the model, running the trace's own assignor, takes the action to exactly the recorded
    state (and, for a rebalance, builds exactly the recorded view and gives exactly the
    recorded answer);
``rules``
    a rebalance where the assignor answers differently from the trace, but the trace's answer
    is one the protocol's rules allow (:func:`rebalproof.solver.oracle.conforms`: every hard
    rule of the assignor's rule set; with ``balance="achievable"`` also balanced whenever a
    balanced answer keeping the rules exists). The protocol leaves that choice to the
    implementation (which task a learner takes, which tie wins), so the answer conforms;
    replay continues *from the trace's choice*: the member side of the protocol (join
    revocations, hand-over, delivery) is still checked exactly on that answer;
``differs``
    the first step where the trace and the protocol disagree: an action that is not enabled,
    another state, another view, or an answer that breaks a rule. Replay stops there.

Step 0 is checked too: either one of the model's initial states (a check's counterexample), or
a *given* start state (a golden trace starts from the seed's "Group stable state"), which must
only name the trace's tasks and instances.

After the steps, the trace's claim is checked where replay can: a ``safety`` trace's property is
evaluated again at ``fail_step`` (state and transition properties); a ``lasso``'s cycle must
close (its last state is the state at ``cycle_start``) without membership changes, and for
``no-shuffle-cycle`` pass through two stable assignments, for ``converges`` never settle.
Other properties decided on the whole state graph (``bounded-unavailability``,
``scale-down-completes``) are reported as not re-checked, never as confirmed.

Abstraction note: the group model takes its task ids and instance pool from its bounds; a
trace with its own names (the seeds' ``S1``/``T1``) is replayed over bounds that carry the
trace's ``tasks`` and ``pool`` (:class:`NamedBounds`), everything else as in the trace's
``bounds``.

Examples
--------
>>> from rebalproof.traces.make_seeds import golden_path
>>> report = replay(load_trace(golden_path("kip429-scale-up")))
>>> report.ok, report.counts()["differs"]
(True, 0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rebalproof.errors import AssignorError, InputError
from rebalproof.model.assignment import ROLES, Assignment
from rebalproof.model.codec import decode_assignment, decode_input, encode_input, read_json
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import parse_protocol
from rebalproof.model.group_state import MEMBERSHIP_KINDS, Action, GroupState, is_quiescent, is_stable
from rebalproof.model.names import sorted_ids
from rebalproof.model.view import Task
from rebalproof.traces.format import Trace, decode_trace, encode_state

__all__ = [
    "HOW",
    "NamedBounds",
    "ReplayModel",
    "StepCheck",
    "Claim",
    "ReplayReport",
    "load_trace",
    "model_for",
    "replay",
    "resolve_trace_assignor",
    "decode_recorded",
    "state_differences",
    "assignment_differences",
    "view_differences",
]

#: How a step was checked (see the module docstring).
HOW = ("start", "exact", "rules", "differs")


class NamedBounds:
    """:class:`Bounds` with the trace's own task ids and instance pool (everything else delegated)."""

    def __init__(self, base: Bounds, *, tasks: tuple[Task, ...], pool: tuple[str, ...]):
        self._base = base
        self._tasks = tasks
        self._pool = pool

    def __getattr__(self, name):
        return getattr(self._base, name)

    @property
    def tasks(self) -> tuple[Task, ...]:
        return self._tasks

    @property
    def member_ids(self) -> tuple[str, ...]:
        return self._pool

    @property
    def instances(self) -> int:
        return len(self._pool)

    def to_json(self) -> dict:
        return self._base.to_json()


def load_trace(path: str | Path) -> Trace:
    """Read and decode a trace file; an :class:`InputError` saying what is wrong otherwise."""
    return decode_trace(read_json(path, what="trace"))


# -- the model of a trace ------------------------------------------------------------------
@dataclass(frozen=True)
class ReplayModel:
    """What replay runs: the group model, the assignor's rule set, a way to close the assignor."""

    model: GroupModel
    rules: str | None
    assignor: object
    close: object = None


def resolve_trace_assignor(spec: str):
    """``(assignor, rules, close)`` for an assignor spec as traces name it.

    Built-in names (with options), ``py:`` and ``exec:`` specs, and the check command's toy
    assignors ``learner-naive[:learners_to=any|new|none]`` and ``round-robin``.
    """
    from rebalproof.model.toy_assignors import NaiveLearner, RoundRobin

    if spec == "round-robin":
        return RoundRobin(), None, None
    if spec.startswith("learner-naive"):
        _, _, opts = spec.partition(":")
        learners_to = "any"
        if opts:
            key, _, value = opts.partition("=")
            if key.strip() != "learners_to" or value.strip() not in ("any", "new", "none"):
                raise InputError(f"assignor '{spec}': learner-naive takes learners_to=any|new|none")
            learners_to = value.strip()
        return NaiveLearner(learners_to=learners_to), "learner", None
    from rebalproof.model.assignors.spec import resolve

    resolved = resolve(spec)
    return resolved, resolved.rules, resolved.close


def _bounds_of(header: dict) -> Bounds:
    raw = header.get("bounds")
    if not isinstance(raw, dict):
        raise InputError('"bounds" must be an object of scenario bounds', where="trace")
    try:
        return Bounds(**raw)
    except TypeError as exc:
        raise InputError(f"not scenario bounds: {exc}", where="trace.bounds") from None


def _tasks_of(header: dict) -> tuple[Task, ...]:
    try:
        return tuple(Task(id=t["id"], stateful=bool(t.get("stateful", True))) for t in header["tasks"])
    except (KeyError, TypeError):
        raise InputError('"tasks" must be a list of {"id", "stateful"} objects', where="trace.tasks") from None


def model_for(header: dict, *, assignor=None, rules: str | None = None, assignor_name: str | None = None) -> ReplayModel:
    """The group model a trace ran on: its protocol, its assignor (or ``assignor``, named
    ``assignor_name``), its bounds and names."""
    proto = parse_protocol(header["protocol"])
    bounds = _bounds_of(header)
    tasks = _tasks_of(header)
    pool = tuple(header.get("pool") or bounds.member_ids)
    if tasks != bounds.tasks or pool != bounds.member_ids:
        bounds = NamedBounds(bounds, tasks=tasks, pool=pool)
    close = None
    if assignor is None:
        assignor, found_rules, close = resolve_trace_assignor(header["assignor"])
        rules = rules or found_rules
    name = header["assignor"] if close is not None or assignor_name is None else assignor_name
    model = GroupModel(protocol=proto, bounds=bounds, assignor=assignor, assignor_name=name)
    return ReplayModel(model=model, rules=rules, assignor=assignor, close=close)


class _Given:
    """A one-answer assignor: the trace's own answer (to continue from the trace's choice)."""

    def __init__(self, answer: Assignment):
        self.answer = answer

    def __call__(self, view):
        return self.answer


# -- results -------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class StepCheck:
    """How one step was checked: ``how`` in :data:`HOW`, and in words what was found."""

    index: int
    action: Action | None
    how: str
    detail: str = ""
    differences: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return "init" if self.action is None else self.action.describe()


@dataclass(frozen=True, kw_only=True)
class Claim:
    """The trace's claim (property, step) as replay found it: ``confirmed``, ``refuted`` or ``not re-checked``."""

    status: str
    message: str


@dataclass(frozen=True, kw_only=True)
class ReplayReport:
    """Every step's check, the first disagreement (if any) and the trace's claim."""

    trace: Trace
    steps: tuple[StepCheck, ...]
    claim: Claim | None = None
    rules: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: the assignor replayed against, when not the trace's own (``replay --assignor``)
    assignor: str | None = None

    @property
    def failure(self) -> StepCheck | None:
        return next((s for s in self.steps if s.how == "differs"), None)

    @property
    def ok(self) -> bool:
        """The trace conforms: every step exact or by the rules, and its claim not refuted."""
        return self.failure is None and (self.claim is None or self.claim.status != "refuted")

    def counts(self) -> dict[str, int]:
        out = {h: 0 for h in HOW}
        for s in self.steps:
            out[s.how] += 1
        return out

    def indices(self, how: str) -> tuple[int, ...]:
        return tuple(s.index for s in self.steps if s.how == how)


# -- differences in words --------------------------------------------------------------------
def _ids(xs) -> str:
    return "[" + ", ".join(xs) + "]"


def _member_map(state_json: dict) -> dict:
    return {m["id"]: m for m in state_json["members"]}


def state_differences(recorded: GroupState, computed: GroupState) -> tuple[str, ...]:
    """What differs between the trace's state and the protocol's, one phrase per field."""
    a, b = encode_state(recorded), encode_state(computed)
    out = []
    ma, mb = _member_map(a), _member_map(b)
    for mid in sorted_ids(set(ma) | set(mb)):
        if mid not in mb:
            out.append(f"{mid} is in the group in the trace, not by the protocol")
            continue
        if mid not in ma:
            out.append(f"{mid} is in the group by the protocol, not in the trace")
            continue
        x, y = ma[mid], mb[mid]
        for key in ("active", "standby", "warmup"):
            if sorted_ids(x[key]) != sorted_ids(y[key]):
                out.append(f"{mid} {key}: {_ids(x[key])} in the trace, {_ids(y[key])} by the protocol")
        if x["lags"] != y["lags"]:
            out.append(f"{mid} lags: {x['lags']} in the trace, {y['lags']} by the protocol")
        for key in ("leaving", "ready"):
            if x[key] != y[key]:
                out.append(f"{mid} {key}: {x[key]} in the trace, {y[key]} by the protocol")
    for key in ("leader", "memory", "triggers", "probe", "spawned", "events"):
        if a[key] != b[key]:
            out.append(f"{key}: {a[key]!r} in the trace, {b[key]!r} by the protocol")
    if a["pending"] != b["pending"]:
        for mid in sorted_ids(set(a["pending"]) | set(b["pending"])):
            x, y = a["pending"].get(mid), b["pending"].get(mid)
            if x != y:
                out.append(f"undelivered assignment of {mid}: {_roles(x)} in the trace, {_roles(y)} by the protocol")
    return tuple(out)


def _roles(roles: dict | None) -> str:
    if roles is None:
        return "none"
    return ", ".join(f"{r} {_ids(roles.get(r, []))}" for r in ROLES)


def assignment_differences(recorded: Assignment, computed: Assignment) -> tuple[str, ...]:
    """Member by member, role by role: the trace's answer against the assignor's."""
    out = []
    for mid in sorted_ids(set(recorded.member_ids) | set(computed.member_ids)):
        x, y = recorded.of(mid), computed.of(mid)
        for role in ROLES:
            if getattr(x, role) != getattr(y, role):
                out.append(f"{mid} {role}: {_ids(getattr(x, role))} in the trace, {_ids(getattr(y, role))} by the assignor")
    if recorded.probing_rebalance != computed.probing_rebalance:
        said = {True: "asked", False: "not asked"}
        out.append(f"probing rebalance: {said[recorded.probing_rebalance]} in the trace, {said[computed.probing_rebalance]} by the assignor")
    return tuple(out)


def view_differences(recorded: dict, computed: dict) -> tuple[str, ...]:
    """The recorded leader's view (JSON) against the one the model builds."""
    out = []
    ra = {m["id"]: m for m in recorded.get("members", [])}
    rb = {m["id"]: m for m in computed.get("members", [])}
    for mid in sorted_ids(set(ra) | set(rb)):
        if mid not in ra or mid not in rb:
            out.append(f"member {mid} is in the {'trace' if mid in ra else 'model'}'s view only")
            continue
        for key in ("leaving", "active", "standby", "warmup", "lags", "capacity"):
            if ra[mid].get(key) != rb[mid].get(key):
                out.append(f"{mid} {key}: {ra[mid].get(key)!r} in the trace's view, {rb[mid].get(key)!r} in the model's")
    for key in ("previous_members", "config", "tasks"):
        if recorded.get(key) != computed.get(key):
            out.append(f"{key}: {recorded.get(key)!r} in the trace's view, {computed.get(key)!r} in the model's")
    return tuple(out)


# -- the replay ------------------------------------------------------------------------------
def _check_start(rm: ReplayModel, trace: Trace) -> StepCheck:
    state = trace.steps[0].state
    model = rm.model
    if state in model.init_states():
        return StepCheck(index=0, action=None, how="start", detail="the model's initial state")
    known_tasks = set(model.task_ids)
    pool = set(model.bounds.member_ids)
    problems = []
    for m in state.members:
        if m.id not in pool:
            problems.append(f"member {m.id} is not in the trace's pool of instances ({', '.join(model.bounds.member_ids)})")
        for t in m.copies + tuple(t for t, _ in m.lags):
            if t not in known_tasks:
                problems.append(f"{m.id} holds unknown task {t}")
    if state.leader is not None and all(m.id != state.leader for m in state.members):
        problems.append(f"the leader {state.leader} is not a member")
    if problems:
        return StepCheck(index=0, action=None, how="differs", detail="the start state is not a state of this model", differences=tuple(problems))
    return StepCheck(index=0, action=None, how="start", detail="a given start state (not the model's cold start)")


def _disabled_reason(model: GroupModel, state: GroupState, action: Action) -> str:
    enabled = model.actions(state)
    same_kind = [a.describe() for a in enabled if a.kind == action.kind]
    if same_kind:
        return f"enabled {action.kind} actions there: {', '.join(same_kind)}"
    return f"no {action.kind} action is enabled there; enabled: {', '.join(a.describe() for a in enabled) or 'nothing'}"


def _rebalance_step(rm: ReplayModel, index: int, prev: GroupState, action: Action, step, balance: str) -> tuple[StepCheck, GroupState | None]:
    model = rm.model
    record = step.rebalance or {}
    try:
        computed = model.rebalance_step(prev, action)
    except AssignorError as exc:
        if step.error is not None:
            return StepCheck(index=index, action=action, how="exact", detail=f"the assignor misbehaves again, as recorded: {exc}"), step.state
        return StepCheck(index=index, action=action, how="differs", detail=f"the assignor failed where the trace has an answer: {exc}"), None
    if step.error is not None:
        if computed is None:
            return StepCheck(index=index, action=action, how="differs", detail="the rebalance is not enabled in the state before it"), None
        return StepCheck(
            index=index, action=action, how="differs",
            detail=f"the trace records an assignor failure ({step.error}) but the assignor now answers",
        ), None
    nxt = model.next_state(prev, action)
    if computed is None or nxt is None:
        return StepCheck(
            index=index, action=action, how="differs",
            detail=f"the action is not enabled in the state of step {index - 1}; {_disabled_reason(model, prev, action)}",
        ), None
    recorded_input = record.get("input")
    if recorded_input is not None:
        diffs = view_differences(recorded_input, encode_input(computed.view))
        if diffs:
            return StepCheck(index=index, action=action, how="differs", detail="the leader's view differs from the one the model builds", differences=diffs), None
    recorded_raw = record.get("assignment")
    if recorded_raw is None:
        how, detail = "exact", "no answer recorded; the state is checked"
        return _compare(index, action, how, detail, step.state, nxt)
    try:
        recorded = decode_assignment(recorded_raw, computed.view)
    except InputError as exc:
        return StepCheck(index=index, action=action, how="differs", detail=f"the trace's answer does not fit the leader's view: {exc}"), None
    if recorded.same_layout(computed.assignment) and recorded.probing_rebalance == computed.assignment.probing_rebalance:
        return _compare(index, action, "exact", "the assignor gives the recorded answer", step.state, nxt)
    differs = assignment_differences(recorded, computed.assignment)
    if rm.rules is None:
        return StepCheck(
            index=index, action=action, how="differs",
            detail=f"the assignor answers differently and {rm.model.assignor_name} has no rule set to judge the trace's answer by (give --rules)",
            differences=differs,
        ), None
    from rebalproof.solver.oracle import conforms

    verdict = conforms(computed.view, recorded, rm.rules, balance=balance)
    if verdict.status.value != "holds":
        said = "breaks the" if verdict.status.value == "violated" else "could not be judged by the"
        return StepCheck(
            index=index, action=action, how="differs",
            detail=f"the trace's answer {said} {rm.rules} rules: {verdict.message}",
            differences=differs,
        ), None
    given = GroupModel(protocol=model.protocol, bounds=model.bounds, assignor=_Given(recorded), assignor_name="trace")
    nxt = given.next_state(prev, action._replace(choice=0))
    if nxt is None:  # pragma: no cover - the same guards as above
        return StepCheck(index=index, action=action, how="differs", detail="the trace's answer cannot be applied"), None
    detail = f"the assignor answers differently; the trace's answer keeps every {rm.rules} rule (" + "; ".join(differs) + ")"
    why = f"the trace's answer keeps the {rm.rules} rules, but the recorded state is not what the protocol makes of it"
    return _compare(index, action, "rules", detail, step.state, nxt, why=why)


def _compare(index, action, how, detail, recorded: GroupState, computed: GroupState, *, why: str = "") -> tuple[StepCheck, GroupState | None]:
    if recorded == computed:
        return StepCheck(index=index, action=action, how=how, detail=detail), computed
    diffs = state_differences(recorded, computed)
    if not diffs:  # equal up to order: accept the model's canonical order
        return StepCheck(index=index, action=action, how=how, detail=detail), computed
    text = "the state after the step differs" + (f" ({why})" if why else "")
    return StepCheck(index=index, action=action, how="differs", detail=text, differences=diffs), None


def _check_claim(rm: ReplayModel, trace: Trace, states: list[GroupState]) -> Claim | None:
    header = trace.header
    if trace.kind == "scenario":
        return None
    from rebalproof.properties.run import RUN_PROPERTIES, RunContext

    name = header["property"]
    fail = header["fail_step"]
    if not 0 <= fail < len(states):
        return Claim(status="refuted", message=f"fail_step {fail} is not a step of the trace (0..{len(states) - 1})")
    if trace.kind == "lasso":
        start = header["cycle_start"]
        if not 0 <= start < len(states) - 1:
            return Claim(status="refuted", message=f"cycle_start {start} is not a step before the last")
        if states[-1] != states[start]:
            return Claim(status="refuted", message=f"the cycle does not close: the last state differs from the state at step {start}")
        cycle = trace.steps[start + 1:]
        membership = [s.action.describe() for s in cycle if s.action is not None and s.action.kind in MEMBERSHIP_KINDS]
        if membership:
            return Claim(status="refuted", message=f"the cycle changes membership ({', '.join(membership)}), so it is no counterexample to {name}")
        loop = states[start:]
        if name == "no-shuffle-cycle":
            layouts = {tuple((m.id, m.active) for m in s.members) for s in loop if is_stable(s)}
            if len(layouts) < 2:
                return Claim(status="refuted", message="the cycle does not go through two different stable assignments")
        if name == "converges" and any(is_quiescent(s) for s in loop):
            return Claim(status="refuted", message="the cycle reaches a settled state, so the run settles")
        closes = f"the cycle from step {start} to step {len(states) - 1} closes and repeats without membership change"
        if name in ("no-shuffle-cycle", "converges"):
            return Claim(status="confirmed", message=f"{name}: {closes}")
        return Claim(status="not re-checked", message=f"{closes}; {name} itself is decided on the whole state graph")
    prop = next((p for p in RUN_PROPERTIES if p.name == name), None)
    if prop is None or prop.check is None or prop.scope == "graph":
        return Claim(status="not re-checked", message=f"{name} is decided on the whole state graph; replay checked the steps, not the property")
    ctx = RunContext(protocol=rm.model.protocol, rules=rm.rules, bounds=rm.model.bounds, assignor=rm.model.assignor_name)
    if prop.scope == "state":
        found = prop.check(ctx, rm.model, states[fail])
    else:
        if fail == 0:
            return Claim(status="refuted", message=f"{name} is a property of a step, and step 0 is the start")
        action = trace.steps[fail].action
        step = rm.model.rebalance_step(states[fail - 1], action) if action.kind == "rebalance" else None
        found = prop.check(ctx, rm.model, states[fail - 1], action, states[fail], step)
    if found:
        message = found if isinstance(found, str) else prop.promise
        return Claim(status="confirmed", message=f"{name} fails at step {fail}: {message}")
    return Claim(status="refuted", message=f"{name} holds at step {fail}: the trace's claim is not reproduced")


def replay(trace: Trace | dict, *, assignor=None, rules: str | None = None, balance: str = "hard",
           assignor_name: str | None = None) -> ReplayReport:
    """Replay ``trace`` (decoded or its JSON object); see the module docstring.

    ``assignor`` replaces the trace's own (any callable ``RebalanceInput -> Assignment``: check
    your implementation against a stored trace), judged by ``rules`` where it answers differently;
    ``assignor_name`` names it in the report (default "the given assignor"). ``balance`` is
    :func:`rebalproof.solver.oracle.conforms`'s (``hard`` or ``achievable``).
    """
    if isinstance(trace, dict):
        trace = decode_trace(trace)
    if assignor is not None and assignor_name is None:
        assignor_name = "the given assignor"
    rm = model_for(trace.header, assignor=assignor, rules=rules, assignor_name=assignor_name)
    try:
        checks = [_check_start(rm, trace)]
        states = [trace.steps[0].state]
        if checks[0].how != "differs":
            for i, step in enumerate(trace.steps[1:], start=1):
                prev = states[-1]
                action = step.action
                if action is None:
                    checks.append(StepCheck(index=i, action=None, how="differs", detail="only step 0 may be the init step"))
                    break
                if action.kind == "rebalance":
                    check, nxt = _rebalance_step(rm, i, prev, action, step, balance)
                else:
                    nxt = rm.model.next_state(prev, action)
                    if nxt is None:
                        check = StepCheck(
                            index=i, action=action, how="differs",
                            detail=f"the action is not enabled in the state of step {i - 1}; {_disabled_reason(rm.model, prev, action)}",
                        )
                    else:
                        check, nxt = _compare(i, action, "exact", "", step.state, nxt)
                checks.append(check)
                if check.how == "differs":
                    break
                states.append(nxt)
        claim = _check_claim(rm, trace, states) if len(states) == len(trace.steps) else None
    finally:
        if rm.close is not None:
            rm.close()
    return ReplayReport(trace=trace, steps=tuple(checks), claim=claim, rules=rm.rules,
                        assignor=assignor_name if assignor is not None else None)


def decode_recorded(step) -> tuple:
    """``(view, assignment)`` of a rebalance step's record (either may be None)."""
    record = step.rebalance or {}
    view = decode_input(record["input"]) if record.get("input") else None
    answer = decode_assignment(record["assignment"], view) if record.get("assignment") and view is not None else None
    return view, answer

