"""Write the golden traces of the seeds' scenarios (``traces/seeds/*.json``) from ``model/seeds*.py``.

Run ``python -m rebalproof.traces.make_seeds`` to regenerate them (the output is deterministic;
``--check`` exits 1 when a stored file differs from what would be written). Every file is
replayed by ``tests/test_traces_seeds.py``.

Each scenario is a script of the group model's actions, run through the model
(:class:`~rebalproof.model.group_model.GroupModel`) from the seed's "Group stable state":

- membership and progress are the model's actions, named as the seed narrates them
  (``join``, ``crash``, ``leave``, ``mark-leaving``, ``restore``, ``rejoin``, ``probe``);
- every rebalance takes **the seed's own answer** (``expected`` of
  :mod:`rebalproof.model.seeds429` / :mod:`rebalproof.model.seeds441`), applied by the
  model's member side (join revocations, hand-over, delivery). Replay then says for each
  whether the assignor gives the same answer (exact) or another one that the rules also allow
  (the seed's free choice). A rebalance the seed does not show (a cooperative follow-up that
  hands over a revoked task) takes the assignor's own answer;
- every delivery is its own step (the seeds do not show deliveries; the text form folds them).

What the model cannot say the way the seed says it, and how each script says it instead
(see also each trace's ``comment``):

- "New member S2, S3 joins the group", "Member S3, S4 join the group": one ``join`` per member,
  then one rebalance (a rebalance starts when the leader runs it, after both joined);
- "S2 and S3 are ready immediately after the assignment": a learner's copy is created *behind*
  on delivery (the model's 2-step lag abstraction), so "immediately" is one ``restore`` per
  learner task right after the delivery, then ``rejoin``;
- "New member S4 joins the group, at the same time S1 crash": ``join`` then ``crash`` before
  the rebalance (the model has no simultaneity; the order does not change the leader's view);
- a leaving member that "will shutdown itself upon new assignment" leaves on its delivery and
  the model then needs one more rebalance for its departure: the seeds stop before it, so do the
  traces (their last state has that rebalance due).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from rebalproof.model.assignment import Assignment
from rebalproof.model.codec import encode_assignment, encode_input, write_json_atomic
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import parse_protocol
from rebalproof.model.group_state import BEHIND, CAUGHT_UP, Action, GroupState, MemberState
from rebalproof.model.view import Task
from rebalproof.traces.format import FORMAT, encode_state
from rebalproof.traces.replay import NamedBounds, resolve_trace_assignor

__all__ = ["GOLDEN_DIR", "GOLDEN_NAMES", "golden_path", "golden_paths", "build_all", "build", "main"]

GOLDEN_DIR = Path(__file__).resolve().parent / "seeds"


# -- a small script language --------------------------------------------------------------------
@dataclass(frozen=True)
class Do:
    """One model action (not a rebalance)."""

    action: Action
    comment: str = ""


@dataclass(frozen=True)
class Rebalance:
    """A rebalance with the seed's answer (None: the assignor's own), its heading and comment."""

    answer: Assignment | None = None
    title: str = ""
    comment: str = ""
    leader: str | None = None


@dataclass(frozen=True)
class DeliverAll:
    """Deliver the assignment of the rebalance in progress to every member, in id order."""


def do(kind: str, member: str | None = None, task: str | None = None, comment: str = "") -> Do:
    return Do(Action(kind, member=member, task=task), comment)


@dataclass(frozen=True, kw_only=True)
class Scenario:
    name: str
    title: str
    source: dict
    protocol: str
    assignor: str
    tasks: tuple[Task, ...]
    pool: tuple[str, ...]
    bounds: Bounds
    start: GroupState
    script: tuple
    comment: str = ""
    start_comment: str = ""
    extra: dict = field(default_factory=dict)


def _member(mid: str, active=(), standby=(), warmup=(), *, behind=(), order=None) -> MemberState:
    held = tuple(active) + tuple(standby) + tuple(warmup)
    lags = tuple(sorted(((t, BEHIND if t in behind else CAUGHT_UP) for t in held), key=lambda p: order[p[0]]))
    return MemberState(id=mid, active=tuple(active), standby=tuple(standby), warmup=tuple(warmup), lags=lags)


def _start(layout, *, tasks, leader, memory, spawned, behind=()) -> GroupState:
    order = {t.id: i for i, t in enumerate(tasks)}
    members = tuple(
        _member(mid, *roles, behind=behind_of, order=order)
        for mid, roles, behind_of in ((m, r, dict(behind).get(m, ())) for m, r in layout)
    )
    return GroupState(members=members, leader=leader, memory=memory, spawned=spawned, events=0)


def _model(sc: Scenario, assignor) -> GroupModel:
    bounds = NamedBounds(sc.bounds, tasks=sc.tasks, pool=sc.pool)
    return GroupModel(protocol=parse_protocol(sc.protocol), bounds=bounds, assignor=assignor, assignor_name=sc.assignor)


class _Given:
    def __init__(self, answer):
        self.answer = answer

    def __call__(self, view):
        return self.answer


def build(sc: Scenario) -> dict:
    """The trace JSON of one scenario (see the module docstring)."""
    assignor, _, close = resolve_trace_assignor(sc.assignor)
    try:
        model = _model(sc, assignor)
        state = sc.start
        step0 = {"action": {"kind": "init"}, "state": encode_state(state)}
        if sc.start_comment:
            step0["comment"] = sc.start_comment
        steps = [step0]
        for move in sc.script:
            if isinstance(move, DeliverAll):
                for entry in tuple(state.pending):
                    state = _apply(model, state, Action("deliver", member=entry[0]), steps, "")
                continue
            if isinstance(move, Do):
                state = _apply(model, state, move.action, steps, move.comment)
                continue
            action = Action("rebalance", leader=move.leader)
            computed = model.rebalance_step(state, action)
            if computed is None:
                raise RuntimeError(f"{sc.name}: no rebalance is enabled after step {len(steps) - 1}")
            answer = move.answer if move.answer is not None else computed.assignment
            nxt = _model(sc, _Given(answer)).next_state(state, action)
            step = {
                "action": action.to_json(),
                "state": encode_state(nxt),
                "rebalance": {"input": encode_input(computed.view), "assignment": encode_assignment(answer)},
            }
            if move.title:
                step["title"] = move.title
            if move.comment:
                step["comment"] = move.comment
            steps.append(step)
            state = nxt
    finally:
        if close is not None:
            close()
    out = {
        "format": FORMAT,
        "protocol": sc.protocol,
        "assignor": sc.assignor,
        "config": {
            "num_standby_replicas": sc.bounds.standbys,
            "acceptable_recovery_lag": sc.bounds.acceptable_recovery_lag,
            "max_warmup_replicas": sc.bounds.max_warmups,
        },
        "tasks": [{"id": t.id, "stateful": t.stateful} for t in sc.tasks],
        "bounds": sc.bounds.to_json(),
        "kind": "scenario",
        "pool": list(sc.pool),
        "title": sc.title,
        "source": dict(sc.source),
    }
    if sc.comment:
        out["comment"] = sc.comment
    out.update(sc.extra)
    out["steps"] = steps
    return out


def _apply(model, state, action, steps, comment) -> GroupState:
    nxt = model.next_state(state, action)
    if nxt is None:
        enabled = ", ".join(a.describe() for a in model.actions(state))
        raise RuntimeError(f"{action.describe()} is not enabled after step {len(steps) - 1}; enabled: {enabled}")
    step = {"action": action.to_json(), "state": encode_state(nxt)}
    if comment:
        step["comment"] = comment
    steps.append(step)
    return nxt


# -- KIP-429 (seeds 001 / 000) -------------------------------------------------------------------
def _kip429() -> list[Scenario]:
    from rebalproof.model import seeds429 as s

    def tasks(n):
        return tuple(Task(id=f"T{i}") for i in range(1, n + 1))

    def pool(n):
        return tuple(f"S{i}" for i in range(1, n + 1))

    def rb(r, *, answer=True, leader=None, extra=""):
        parts = [p for p in (r.note, f"Free choice: {r.free_choice}." if r.free_choice else "", extra) if p]
        return Rebalance(answer=r.expected if answer else None, title=r.title, comment=" ".join(parts), leader=leader)

    def source(sc):
        return {"seed": sc.seed, "section": sc.section, "title": sc.title}

    def spec(sc):
        return f"learner:version={sc.learner_version}"

    def initial(sc):
        return tuple((m, (tuple(actives),)) for m, actives in sc.initial)

    out = []

    sc = s.scenario("scale-up")
    r = sc.rebalances
    t5 = tasks(5)
    out.append(Scenario(
        name="kip429-scale-up", title="Scale Up Running Application", source=source(sc),
        protocol="learner", assignor=spec(sc), tasks=t5, pool=pool(5),
        bounds=Bounds(instances=5, initial=3, subtopologies=5, partitions=1, standbys=0, events=2),
        start=_start(initial(sc), tasks=t5, leader="S1", memory=("S1", "S2", "S3"), spawned=3),
        comment=sc.note,
        script=(
            do("join", "S4"), rb(r[0]), DeliverAll(),
            do("join", "S5"), rb(r[1]), DeliverAll(),
            do("restore", "S4", "T1"), do("rejoin", "S4"), rb(r[2]), DeliverAll(),
            do("restore", "S5", "T3"), do("rejoin", "S5"), rb(r[3]), DeliverAll(),
        ),
    ))

    sc = s.scenario("scale-up-from-empty")
    r = sc.rebalances
    out.append(Scenario(
        name="kip429-scale-up-from-empty", title="Scale Up from Empty Group", source=source(sc),
        protocol="learner", assignor=spec(sc), tasks=t5, pool=pool(3),
        bounds=Bounds(instances=3, initial=1, subtopologies=5, partitions=1, standbys=0, events=3),
        start=GroupState(members=(), leader=None, memory=None, spawned=0, events=0),
        start_comment="'Group empty state: unassigned tasks [T1, T2, T3, T4, T5]': no member, no leader yet "
        "(bounds.initial is not used: a scenario trace starts from its step 0).",
        comment=sc.note + " The seed writes the assignment lines of its first two rounds without the leading tab.",
        script=(
            do("join", "S1"),
            rb(r[0], leader="S1", extra="The first member to join leads (the model elects it at the rebalance); with no memory of a last round previous_members is absent rather than empty, which changes nothing here: nobody owns a task."),
            DeliverAll(),
            do("join", "S2"), do("join", "S3"), rb(r[1]), DeliverAll(),
            do("restore", "S2", "T3", comment="'S2 and S3 are ready immediately after the assignment': restored at once."),
            do("restore", "S2", "T4"), do("rejoin", "S2"),
            do("restore", "S3", "T5"), do("rejoin", "S3"),
            rb(r[2]), DeliverAll(),
        ),
    ))

    sc = s.scenario("scale-down")
    r = sc.rebalances
    out.append(Scenario(
        name="kip429-scale-down", title="Scale Down Running Application", source=source(sc),
        protocol="learner", assignor=spec(sc), tasks=t5, pool=pool(3),
        bounds=Bounds(instances=3, initial=3, subtopologies=5, partitions=1, standbys=0, events=1),
        start=_start(initial(sc), tasks=t5, leader="S1", memory=("S1", "S2", "S3"), spawned=3),
        comment=sc.note,
        script=(
            do("mark-leaving", "S2", comment="'Scaling down the application, S2 will be leaving.'"),
            rb(r[0]), DeliverAll(),
            do("restore", "S3", "T4"), do("rejoin", "S3"), rb(r[1]), DeliverAll(),
            do("restore", "S1", "T3"), do("rejoin", "S1"), rb(r[2]),
            DeliverAll(),
        ),
        extra={},
    ))

    sc = s.scenario("host-swap")
    r = sc.rebalances
    t4 = tasks(4)
    out.append(Scenario(
        name="kip429-host-swap", title="Online Host Swapping", source=source(sc),
        protocol="learner", assignor=spec(sc), tasks=t4, pool=pool(4),
        bounds=Bounds(instances=4, initial=2, subtopologies=4, partitions=1, standbys=0, events=4),
        start=_start(initial(sc), tasks=t4, leader="S1", memory=("S1", "S2"), spawned=2),
        comment=sc.note,
        script=(
            do("join", "S3"), do("join", "S4"), rb(r[0]), DeliverAll(),
            do("mark-leaving", "S1"), do("mark-leaving", "S2"), rb(r[1]), DeliverAll(),
            do("restore", "S3", "T1"), do("restore", "S3", "T2"), do("restore", "S4", "T3"), do("restore", "S4", "T4"),
            do("rejoin", "S3"), do("rejoin", "S4"),
            rb(r[2], extra="The seed's answer lines show 'S1(assigned: [], revoked: [], learning: [])' and the same for S2, "
               "although both joined with 'revoked: [T1, T2]' / 'revoked: [T3, T4]' and get nothing back; in every other "
               "round a revoked task not given back stays in the answer's revoked list, so the text form shows "
               "'S1(assigned: [], revoked: [T1, T2], learning: [])'."),
            DeliverAll(),
        ),
    ))

    sc = s.scenario("leader-crash-during-scaling")
    r = sc.rebalances
    out.append(Scenario(
        name="kip429-leader-crash-during-scaling", title="Leader Transfer During Scaling", source=source(sc),
        protocol="learner", assignor=spec(sc), tasks=t5, pool=pool(4),
        bounds=Bounds(instances=4, initial=3, subtopologies=5, partitions=1, standbys=0, events=2),
        start=_start(initial(sc), tasks=t5, leader="S1", memory=("S1", "S2", "S3"), spawned=3),
        comment=sc.note,
        script=(
            do("join", "S4"), rb(r[0]), DeliverAll(),
            do("crash", "S1"),
            rb(r[1], leader="S2", extra="The seed writes 'S3(assigned: [T5, T2], ...)'; ids are kept sorted, so the text form shows [T2, T5]."),
            DeliverAll(),
        ),
    ))

    sc = s.scenario("leader-crash-before-scaling")
    r = sc.rebalances
    out.append(Scenario(
        name="kip429-leader-crash-before-scaling", title="Leader Transfer Before Scaling", source=source(sc),
        protocol="learner", assignor=spec(sc), tasks=t5, pool=pool(4),
        bounds=Bounds(instances=4, initial=3, subtopologies=5, partitions=1, standbys=0, events=2),
        start=_start(initial(sc), tasks=t5, leader="S1", memory=("S1", "S2", "S3"), spawned=3),
        comment=sc.note + " The result is skewed on purpose: S2 keeps four tasks and S4 gets none, which version 1.0 "
        "admits (the learner rules do not promise balance); the seed: 'Now the group reaches balance, although the "
        "eventual load is skewed.'",
        script=(
            do("join", "S4", comment="'New member S4 joins the group, at the same time S1 crash.': join, then crash."),
            do("crash", "S1"),
            rb(r[0], leader="S2"), DeliverAll(),
        ),
    ))
    return out


# -- KIP-441 (seed 002) ------------------------------------------------------------------------------
def _kip441() -> list[Scenario]:
    from rebalproof.model import seeds441 as s

    out = []
    t3 = tuple(Task(id=f"T{i}") for i in range(1, 4))
    t4 = tuple(Task(id=f"T{i}") for i in range(1, 5))
    pool = ("I1", "I2", "I3")
    seed = "002_7432b538f26ac9fe.txt"

    def rb(r, *, extra=""):
        return Rebalance(answer=r.expected, title=r.title, comment=" ".join(p for p in (r.note, extra) if p))

    r = s.rounds("scaling-out")
    out.append(Scenario(
        name="kip441-scaling-out", title="Scaling Out", source={"seed": seed, "section": "Example Scenarios", "title": r[0].section},
        protocol="cooperative", assignor="ha", tasks=t3, pool=pool,
        bounds=Bounds(instances=3, initial=2, subtopologies=3, partitions=1, standbys=1, max_warmups=2, events=1),
        start=_start((("I1", (("T1", "T3"), ("T2",))), ("I2", (("T2",), ("T1", "T3")))), tasks=t3, leader="I1", memory=("I1", "I2"), spawned=2),
        start_comment="Initial State; standbys caught up.",
        script=(
            do("join", "I3"), rb(r[0]), DeliverAll(),
            do("restore", "I3", "T1", comment="'-- I3 finishes catching up, another rebalance is triggered --'"),
            do("restore", "I3", "T3"), do("probe"),
            rb(r[1]), DeliverAll(),
            Rebalance(title="Second Rebalance (stable state), follow-up", comment="'Note that following KIP-429, the second rebalance will technically itself be composed of two rebalance since we are revoking the active task T3 from I1.' The follow-up hands T3 to I3."),
            DeliverAll(),
        ),
    ))

    layout = (("I1", (("T1", "T4"), ("T3",))), ("I2", (("T2",), ("T1", "T4"))), ("I3", (("T3",), ("T2",))))
    r = s.rounds("scaling-in-1")
    out.append(Scenario(
        name="kip441-scaling-in-1", title="Scaling In (Pt. 1 - standbys in sync)", source={"seed": seed, "section": "Example Scenarios", "title": r[0].section},
        protocol="cooperative", assignor="ha", tasks=t4, pool=pool,
        bounds=Bounds(instances=3, initial=3, subtopologies=4, partitions=1, standbys=1, max_warmups=2, events=1),
        start=_start(layout, tasks=t4, leader="I2", memory=("I1", "I2", "I3"), spawned=3),
        start_comment="Initial State; the standbys are in sync (caught up). I2 leads, so I1 is brought down without a leader fail-over (the leader's view keeps previous_members, as seeds441 reads it).",
        script=(
            do("leave", "I1", comment="'-- One instance (I1) is brought down --'"),
            rb(r[0]), DeliverAll(),
            Rebalance(title="First Rebalance, follow-up", comment="'(note that as of KIP-429 the first rebalance technically consists of two rebalances as an active task is being revoked)': the follow-up hands T2 to I3."),
            DeliverAll(),
        ),
    ))

    behind = (("I1", ("T3",)), ("I2", ("T1", "T4")), ("I3", ("T2",)))
    r = s.rounds("scaling-in-2")
    out.append(Scenario(
        name="kip441-scaling-in-2", title="Scaling In (Pt. 2 - standbys lag nontrivially)", source={"seed": seed, "section": "Example Scenarios", "title": r[0].section},
        protocol="cooperative", assignor="ha", tasks=t4, pool=pool,
        bounds=Bounds(instances=3, initial=3, subtopologies=4, partitions=1, standbys=1, max_warmups=2, events=1),
        start=_start(layout, tasks=t4, leader="I2", memory=("I1", "I2", "I3"), spawned=3, behind=behind),
        start_comment="Initial State; the standbys lag by more than acceptable_recovery_lag (behind). I2 leads.",
        script=(
            do("leave", "I1", comment="'-- One instance (I1) is brought down --'"),
            rb(r[0]), DeliverAll(),
            do("restore", "I2", "T1", comment="I2 restores the tasks it now processes (the seed's second view has I2 caught up on T1, T2, T4)."),
            do("restore", "I2", "T4"),
            do("restore", "I3", "T4", comment="'-- I3 finishes restoring T4 --'"),
            do("probe"),
            rb(r[1]), DeliverAll(),
            Rebalance(title="Second Rebalance (stable state), follow-up", comment="The hand-over of T4 from I2 to I3 takes a follow-up rebalance (cooperative protocol)."),
            DeliverAll(),
        ),
    ))
    return out


def scenarios() -> list[Scenario]:
    return _kip429() + _kip441()


GOLDEN_NAMES = (
    "kip429-scale-up",
    "kip429-scale-up-from-empty",
    "kip429-scale-down",
    "kip429-host-swap",
    "kip429-leader-crash-during-scaling",
    "kip429-leader-crash-before-scaling",
    "kip441-scaling-out",
    "kip441-scaling-in-1",
    "kip441-scaling-in-2",
)


def golden_path(name: str) -> Path:
    """The stored golden trace called ``name`` (see :data:`GOLDEN_NAMES`)."""
    return GOLDEN_DIR / f"{name}.json"


def golden_paths() -> tuple[Path, ...]:
    return tuple(golden_path(n) for n in GOLDEN_NAMES)


def build_all() -> dict[str, dict]:
    return {sc.name: build(sc) for sc in scenarios()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the golden traces of the seeds' scenarios.")
    parser.add_argument("--check", action="store_true", help="exit 1 if a stored trace differs from what would be written")
    parser.add_argument("--out", type=Path, default=GOLDEN_DIR)
    args = parser.parse_args(argv)
    stale = []
    for name, trace in build_all().items():
        path = args.out / f"{name}.json"
        text = json.dumps(trace, indent=1) + "\n"
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
            continue
        write_json_atomic(path, trace, indent=1)
        print(f"wrote {path}")
    if stale:
        print("stale golden traces (run python -m rebalproof.traces.make_seeds): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
