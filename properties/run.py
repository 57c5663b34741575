"""Properties of runs of the group model, as named data (docs/DESIGN.md "Per run").

Each :class:`RunProperty` has a name, an expectation (``always`` / ``sometimes`` /
``eventually``), a one-line promise, which protocol+assignor pairs promise it, and a check of
one of three scopes:

- ``state``: a predicate on every reachable state (``always``) or a witness (``sometimes``);
- ``edge``: a predicate on every transition, e.g. on the assignment a rebalance computed;
- ``rebalance``: every distinct (leader view, answer) the exploration reaches, judged by the
  per-rebalance catalogue of the rule set in force and memoised
  (:mod:`rebalproof.properties.run_rebalance`; ``warmup-bound`` is one of them);
- ``graph``: evaluated on the explored state graph after exploration (liveness, cycles,
  measures; :mod:`rebalproof.properties.run_liveness`).

Every ``always`` property names a ``sometimes`` witness, so a vacuous pass shows up. Each
property's seed sentence and what a correct implementation can be forced to do (which it must
not count) are in :mod:`rebalproof.properties.run_justification`. A
property a pair does not promise is still evaluated and reported as *not promised*, never
skipped. Verdicts are three-valued (:mod:`rebalproof.properties.verdict`): a check whose
exploration was cut short by a bound is *inconclusive* with that bound, never *holds*.

Definitions (abstraction choices stated once, here):

- *stable*: no rebalance in progress and none needed; *settled*: stable, no probing rebalance
  scheduled, no learner waiting to rejoin, and no fair action enabled (nothing will ever change
  the assignment again without a membership event).
- a *decisive* rebalance is one whose assignor answer differs from what was decided before it
  (what members hold, with undelivered assignments counted as made) and which is not only a
  cooperative follow-up (the hand-over of an already decided move), nor only the realization
  of moves planned before: no copy where its member held none, no new warmup, no caught-up
  warmup left unpromoted (restores finish one at a time in the model, so the seed's one
  realizing rebalance may be split over several; see :func:`_realizes_only`).
- ``bounded-unavailability``: a rebalance that takes a stateful task from a member holding
  state for it (or about to receive it) and gives it to members all *less caught up* on it, or
  to nobody, is a *regressive* owner change, a violation where promised (cooperative + ``ha``):
  KIP-441 property 1, "The assignment algorithm is required to assign active stateful tasks to
  the most-caught-up-instances", and "If there is no such instance, then it assigns the active
  task to the instance that is closest to catching up". Owner changes forced by membership
  (the holder left, crashed or is leaving) or by the caught-up rule (the new owner is caught up:
  "the leader assigns active tasks only to instances that are ready to begin processing them
  immediately") are not the assignor's doing and never count; moves between equally behind
  members are allowed by property 1, and the seeds only say they *should* be avoided (property
  6: "may not be easy to guarantee"), so along every stretch during which nobody processes a
  task they are measured (``worst_unforced``), as are all owner-changing rounds
  (``worst_rounds``), never judged. See :func:`owner_change`.
- ``converges``: under weak fairness (restores finish, deliveries arrive, needed and scheduled
  rebalances happen) every run without membership change settles; for the KIP-441 rules the
  settled assignment is balanced and the decisive rebalances after one added instance are at
  most ``stateful tasks + 1`` (:func:`progress_bound`: every probing round moves some state);
  Kafka's convergence-test bound, ``ceil(stateful tasks / max_warmup_replicas) + 1``, is
  reported beside it (``rebalance_bound``), a pace the references keep but not a promise; the
  bound judged is ``progress_bound`` in the measure.
  Balance is counted per stream thread as the oracle's ``balanced`` counts it (KIP-441
  "Defining 'balance'", :mod:`rebalproof.properties.balanced`): a settled assignment that is
  not balanced is a violation only when a balanced assignment of these tasks over these
  capacities exists (mixed capacities can make instance and subtopology balance
  incompatible); undecided within the oracle's search budget makes ``converges``
  inconclusive. The rebalance bound does not read capacities: it counts tasks moved, one
  warmup each.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from rebalproof.errors import AssignorError
from rebalproof.model.assignment import Assignment
from rebalproof.model.balance import balanced_either, measure_balance
from rebalproof.model.budget import BudgetSpent
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_protocol import Protocol
from rebalproof.model.group_state import (
    CAUGHT_UP,
    FAIR_KINDS,
    MEMBERSHIP_KINDS,
    Action,
    is_quiescent,
    is_stable,
)
from rebalproof.model.names import sorted_ids
from rebalproof.model.ranking import NO_STATE, is_caught_up, lag_of, rank
from rebalproof.model.view import Member, RebalanceInput
from rebalproof.properties.balanced import balance_attainable
from rebalproof.properties.catalogue import PER_ASSIGNMENT
from rebalproof.properties.common import shown_as_owner, split_replicas
from rebalproof.properties.lag import rank_text
from rebalproof.properties.run_liveness import EdgeRanges, edge_array, fair_components, fair_cycle, longest_paths, nontrivial_sccs
from rebalproof.properties.run_rebalance import RebalanceJudge, judge_step, promised, promised_words, run_verdict
from rebalproof.properties.verdict import Status, Verdict

__all__ = [
    "RunContext",
    "RunProperty",
    "Discovery",
    "PropertyResult",
    "RunMonitor",
    "RUN_PROPERTIES",
    "UNAVAILABILITY_BOUND",
    "FORCED",
    "TIE",
    "REGRESSIVE",
    "owner_change",
    "property_names",
    "evaluate",
    "rebalance_bound",
    "progress_bound",
]

#: Regressive owner changes allowed (:func:`owner_change`) for the pairs that promise
#: ``bounded-unavailability``: none, KIP-441 property 1 is a "required" property. (Until 2026-11
#: the bound was 2 owner-changing rounds of any kind, which KIP-441's own rules break: a task
#: lost with its owner, then handed to the first member to catch up, changes owner 3 times.)
UNAVAILABILITY_BOUND = 0


@dataclass(frozen=True, kw_only=True)
class RunContext:
    """What decides which promises apply: the protocol, the assignor's rule set, the bounds."""

    protocol: Protocol
    rules: str | None  # "ha", "learner", "sticky", or None (an external assignor, no rule set)
    bounds: Bounds
    assignor: str = ""

    @property
    def pair(self) -> str:
        return f"{self.protocol.spec}+{self.assignor or self.rules or 'external'}"


@dataclass(frozen=True, kw_only=True)
class RunProperty:
    """A property of runs as named data."""

    name: str
    expectation: str  # "always" | "sometimes" | "eventually"
    scope: str  # "state" | "edge" | "graph"
    promise: str
    promised_by: str  # in words
    promised: Callable[[RunContext], bool]
    check: Callable | None = None  # scope-dependent, see the module docstring
    witness: str | None = None  # the sometimes-property that shows this one is not vacuous

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "expectation": self.expectation,
            "scope": self.scope,
            "promise": self.promise,
            "promised_by": self.promised_by,
            "witness": self.witness,
        }


@dataclass(frozen=True, kw_only=True)
class Discovery:
    """Where a property was decided: a state (and the last action), or a lasso's cycle."""

    property: str
    kind: str  # "safety" | "lasso" | "example" | "finding"
    state: int  # index of the last state (safety) or of the cycle's entry (lasso)
    action: Action | None = None  # a final action taken from ``state`` (edge properties)
    path: tuple[int, ...] = ()  # edges taken after ``state`` (a path), or the cycle (lasso)
    message: str = ""
    error: object = None  # the AssignorError of a finding


@dataclass(frozen=True, kw_only=True)
class PropertyResult:
    property: RunProperty
    verdict: Verdict
    discovery: Discovery | None = None


# -- checks -------------------------------------------------------------------------------
def _single_owner(ctx, model, s):
    seen: dict[str, str] = {}
    for m in s.members:
        for t in m.active:
            if t in seen:
                return f"task {t} is owned by {seen[t]} and {m.id} at once"
            seen[t] = m.id
    return None


def _no_lost_task(ctx, model, s):
    if not is_stable(s):
        return None
    owned = {t for m in s.members for t in m.active}
    lost = [t for t in model.task_ids if t not in owned]
    if lost:
        return f"stable with task(s) {', '.join(lost)} owned by nobody"
    return None


def _judged(name):
    def check(ctx, model, s, a, nxt, step):
        return judge_step(name, ctx.rules, step)

    check.__name__ = f"judged_{name}"
    return check


def _promised_per_rebalance(name):
    return lambda ctx: promised(name, ctx.rules)


def _moves(model, s, step):
    """``(task, holders before, actives after)`` for each task a rebalance hands to other members."""
    if step is None:
        return
    for t in model.task_ids:
        before = {m.id for m in s.members if t in m.active}
        after = set(step.assignment.actives_of(t))
        if before and after and before != after:
            yield t, before, after


def _task_moves(ctx, model, s, a, nxt, step):
    return any(True for _ in _moves(model, s, step))


def _ready_handover(ctx, model, s, a, nxt, step):
    """A stateful task active on a member when the rebalance starts goes only to a member ready for it.

    Seed 001 "Scale Up from Empty Group": "every task assignment during rebalance will adhere to
    the rule "if given task is currently active, reassignment must happen only to workers who are
    declared ready to serve this task."". *Currently active*: held as active in the state before
    the join, by any member (leaving ones too), as far as the leader's view can show it: the
    member reports it as active, or, having revoked it at the join because it is being learned,
    reports caught-up state for it in no role (what the view shows of such an owner; the
    per-rebalance ``learner-handover`` cannot tell it from old state on disk, the run can). An
    owner that revoked it while still restoring it shows as behind state in no role, which no
    assignor can tell from stale state: not judged. *Ready*: caught up on it in the leader's view
    (a ready learner, a caught-up standby, caught-up state held in no role). Kept by one of its
    owners, or handed over when its owner is gone (cut off, crashed, left): not judged.
    """
    if step is None:
        return False
    view = step.view
    for t, before, after in _moves(model, s, step):
        if not model.is_stateful(t) or before & after:
            continue
        shown = [o for o in sorted_ids(before) if view.has_member(o) and shown_as_owner(view, o, t)]
        if not shown:
            continue
        for n in sorted_ids(after):
            if view.has_member(n) and not is_caught_up(view, n, t):
                return (f"task {t}, active on {', '.join(shown)} when the rebalance starts, is given to {n}, "
                        f"which is not ready for it ({rank_text(rank(view, n, t))})")
    return False


def _warmup_assigned(ctx, model, s, a, nxt, step):
    """A rebalance gives a stateful task more replicas than its standbys: an extra copy, by count;
    under the learner rules also a new learner.

    Labels do not count (DESIGN "Labels"): Kafka sends its warmups as standbys, so a warmup is
    a replica beyond the first ``min(num_standby_replicas, members - 1)``, as ``warmup-bound``
    (which this witnesses) counts them. Under the learner rules a new copy in the ``warmup`` role
    (KIP-429's ``isLearner`` tag) on a member not leaving is an example too: an implementation
    whose learner fills a task's standby slot makes no extra copy by count, yet learns (red team
    6: its correct KIP-429 assignor left this witness undecided at every one-standby bound, so
    ``--require-complete`` failed it). A copy the member held as a standby and now learns counts
    as a new learner: seed 001 (KIP-429), "When performing learner assignment, we shall prioritize
    workers which currently have standby tasks that match learner assignment" (red team 9: its
    correct assignor, learners only for leaving members' tasks and always on their standby
    holders, left the witness undecided). A witness only adds examples: no label can fault anything.
    """
    if step is None:
        return False
    view = step.view
    if any(split_replicas(view, step.assignment, t)[1] for t in view.stateful_task_ids):
        return True
    if ctx.rules != "learner":
        return False
    for m, x in step.assignment.members:
        if not view.has_member(m) or view.member(m).leaving:
            continue
        learning = view.member(m).warmup
        if any(view.has_task(t) and view.task(t).stateful and t not in learning and t not in x.active for t in x.warmup):
            return True
    return False


def _warmup_promoted(ctx, model, s, a, nxt, step):
    """A rebalance hands an active task from a member holding it to one already hosting a copy of it.

    The copy is a warmup, a learner or a standby: labels do not count (DESIGN "Labels"), and
    KIP-441 moves a task by "assigning the task as a standby task to the destination instance,
    and then rebalancing once those tasks are up to date". A failover (nobody holds the task
    any more) is not a promotion.
    """
    for t, before, after in _moves(model, s, step):
        if any(m.id in after and m.id not in before and (t in m.standby or t in m.warmup) for m in s.members):
            return True
    return False


def _member_leaves(ctx, model, s, a, nxt, step):
    return len(nxt.members) < len(s.members) and a.kind != "crash"


def _scale_down_done(ctx, model, s, a, nxt, step):
    if a.kind not in ("deliver", "timeout"):
        return False
    return len(nxt.members) < len(s.members)


#: How a rebalance changes the owner of a task nobody processes (see :func:`owner_change`).
FORCED, TIE, REGRESSIVE = "forced", "tie", "regressive"


def owner_change(step, task, before, after, leaving) -> str | None:
    """Why a rebalance takes ``task`` from a member that held it, or None when it takes it from nobody.

    ``before`` are the members that held the task or were about to receive it (undelivered
    assignments counted as made), ``after`` those the delivered assignment gives it to, ranks
    are KIP-441's lag ranks in the leader's view. The change is

    - :data:`FORCED` (not the assignor's doing) when it only takes the task from a member that
      is leaving (KIP-429 v2 ``isLeaving``: a scale-down hands everything over) or has no state
      for it (nothing to lose), or gives it to a member caught up on it: "In each rebalance,
      the leader assigns active tasks only to instances that are ready to begin processing
      them immediately" (KIP-441). A task nobody present holds (its owner left or crashed, or
      revoked it for a hand-over) is placed, not moved: "Of course, the algorithm must also
      assign stateless tasks", and stateful ones all the more;
    - :data:`REGRESSIVE` when it gives the task to members all less caught up than a holder
      with state, or to nobody: KIP-441 property 1 requires actives "to the most-caught-up
      instances" and "If there is no such instance, then it assigns the active task to the
      instance that is closest to catching up";
    - :data:`TIE` when the new owner is as far from caught up as the holder: allowed by
      property 1 (both are "most caught-up"), against the goal "allow the prior owner of that
      task to keep it ... until the new owner gets caught up", which property 6 makes a
      "should" ("Depending on the implementation, this may not be easy to guarantee"), so a
      measure, never a violation.
    """
    view = step.view
    if not view.task(task).stateful:
        return None if not before else FORCED  # every member can process it at once (KIP-441: no lag)
    away = [m for m in before if m not in after]
    if not away:
        return None
    holders = [m for m in away if m not in leaving and lag_of(view, m, task) != NO_STATE]
    if not holders:
        return FORCED
    target = step.assignment.actives_of(task)
    if not target:
        return REGRESSIVE
    if all(is_caught_up(view, m, task) for m in target):
        return FORCED
    closest = min(rank(view, m, task) for m in target)
    holder = min(rank(view, m, task) for m in holders)
    if closest > holder:
        return REGRESSIVE
    return TIE if closest == holder else FORCED


def _kind_is(kind):
    def check(ctx, model, s, a, nxt, step):
        return a.kind == kind

    check.__name__ = f"kind_is_{kind}"
    return check


def _settles(ctx, model, s):
    return is_quiescent(s)


def _always(_ctx):
    return True


def _has_events(ctx):
    return ctx.bounds.events > 0


def _ha(ctx):
    return ctx.rules == "ha"


def _learning_rules(ctx):
    return ctx.rules in ("ha", "learner")


def _leaving(ctx):
    return ctx.protocol.leaving and ctx.bounds.events > 0


def _learner_rules(ctx):
    return ctx.rules == "learner"


def _unavailability_promised(ctx):
    # KIP-441 moves actives only to caught-up instances; KIP-429's learner design knowingly
    # trades availability ("sacrificing partial availability of the learner tasks"): a measure there
    return ctx.protocol.name == "cooperative" and ctx.rules == "ha"


RUN_PROPERTIES: tuple[RunProperty, ...] = (
    RunProperty(
        name="single-owner", expectation="always", scope="state",
        promise="at no moment do two members own (process) the same task, asynchronous revocation included",
        promised_by="every protocol with every assignor", promised=_always, check=_single_owner, witness="task-moves",
    ),
    RunProperty(
        name="no-lost-task", expectation="always", scope="state",
        promise="in every stable state each task has an active owner",
        promised_by="every protocol with every assignor", promised=_always, check=_no_lost_task, witness="settles",
    ),
    # every answer the exploration reaches, judged by the per-rebalance catalogue (run_rebalance)
    *(
        RunProperty(
            name=p.name, expectation="always", scope="rebalance", promise=f"{p.promise} (every answer reached)",
            promised_by=promised_words(p.name), promised=_promised_per_rebalance(p.name), check=_judged(p.name),
            witness="warmup-assigned" if p.name == "warmup-bound" else "task-moves",
        )
        for p in PER_ASSIGNMENT
    ),
    RunProperty(
        name="assignor-answers", expectation="always", scope="graph",
        promise="the assignor answers every rebalance with an assignment for its input",
        promised_by="every assignor", promised=_always, witness="settles",
    ),
    RunProperty(
        name="converges", expectation="eventually", scope="graph",
        promise="once membership stops changing, every fair run settles (KIP-441: balanced, within the progress bound)",
        promised_by="every protocol with every assignor (balance and the bound: ha)", promised=_always, witness="settles",
    ),
    RunProperty(
        name="no-shuffle-cycle", expectation="always", scope="graph",
        promise="no fair cycle of stable states with differing assignments and no membership change",
        promised_by="every protocol with every assignor", promised=_always, witness="task-moves",
    ),
    RunProperty(
        name="bounded-unavailability", expectation="always", scope="graph",
        promise="no rebalance gives a task to members less caught up on it than a member holding it (KIP-441 property 1); "
        "owner changes forced by membership or by a caught-up member are not counted",
        promised_by="cooperative with the ha rules", promised=_unavailability_promised,
        witness="task-moves",
    ),
    RunProperty(
        name="scale-down-completes", expectation="eventually", scope="graph",
        promise="every leaving member eventually shuts down (handed over, or cut off by the timeout)",
        promised_by="learner (v2 leaving members)", promised=_leaving, witness="scale-down-done",
    ),
    RunProperty(
        name="ready-handover", expectation="always", scope="edge",
        promise="a task active when a rebalance starts (revoked at its join or not) is kept by its owner or given "
        "to a member ready for it (caught up)",
        promised_by="learner rules", promised=_learner_rules, check=_ready_handover, witness="warmup-promoted",
    ),
    RunProperty(
        name="task-moves", expectation="sometimes", scope="edge",
        promise="an active task is handed to a different member", promised_by="every pair", promised=_always,
        check=_task_moves,
    ),
    RunProperty(
        name="settles", expectation="sometimes", scope="state",
        promise="a stable state with nothing scheduled is reached", promised_by="every pair", promised=_always,
        check=_settles,
    ),
    RunProperty(
        name="warmup-assigned", expectation="sometimes", scope="edge",
        promise="a rebalance assigns a warmup / learner (a replica beyond the standbys, by count; under the learner rules also a new learner)", promised_by="ha and learner rules",
        promised=_learning_rules, check=_warmup_assigned,
    ),
    RunProperty(
        name="warmup-promoted", expectation="sometimes", scope="edge",
        promise="a task moves to a member already hosting a copy of it (warmup, learner or standby)", promised_by="ha and learner rules",
        promised=_learning_rules, check=_warmup_promoted,
    ),
    RunProperty(
        name="member-leaves", expectation="sometimes", scope="edge",
        promise="a member leaves the group", promised_by="every pair with membership events",
        promised=_has_events, check=_member_leaves,
    ),
    RunProperty(
        name="leader-failover", expectation="sometimes", scope="edge",
        promise="the leader crashes and another member leads without its memory",
        promised_by="every pair with membership events", promised=_has_events, check=_kind_is("crash"),
    ),
    RunProperty(
        name="probing-rebalance", expectation="sometimes", scope="edge",
        promise="a probing rebalance happens", promised_by="ha rules", promised=_ha, check=_kind_is("probe"),
    ),
    RunProperty(
        name="learner-ready", expectation="sometimes", scope="edge",
        promise="a member with ready learners rejoins", promised_by="learner protocol",
        promised=lambda ctx: ctx.protocol.ready_rejoin, check=_kind_is("rejoin"),
    ),
    RunProperty(
        name="scale-down-done", expectation="sometimes", scope="edge",
        promise="a leaving member shuts down", promised_by="learner (v2 leaving members)", promised=_leaving,
        check=_scale_down_done,
    ),
)


def property_names() -> tuple[str, ...]:
    return tuple(p.name for p in RUN_PROPERTIES)


def rebalance_bound(bounds: Bounds) -> int:
    """Kafka's convergence-test bound: stateful tasks / max_warmup_replicas + 1 rebalances.

    Capacities do not change it: it counts the tasks that move (one warmup each, at most
    ``max_warmup_replicas`` per round), not the threads they move to. Reported as a measure
    (an assignor that uses its whole warmup budget keeps it); ``converges`` holds an assignor
    to :func:`progress_bound`."""
    stateful = bounds.subtopologies * bounds.partitions
    return math.ceil(stateful / max(bounds.max_warmups, 1)) + 1


def progress_bound(bounds: Bounds) -> int:
    """The decisive rebalances ``converges`` allows after one added instance: stateful tasks + 1.

    Every probing round must move some task's state (one warmup at least), and the last one
    realises the moves. ``max_warmup_replicas`` is a maximum (KIP-441: "setting the number high
    would allow the algorithm to assign all the desired movements in one shot"), not a pace an
    assignor must keep: one that moves one task at a time still improves balance "gradually
    ... over time"."""
    return bounds.subtopologies * bounds.partitions + 1


# -- the monitor --------------------------------------------------------------------------
_STABLE, _QUIESCENT, _LEAVING, _UNBALANCED, _UNDECIDED = 1, 2, 4, 8, 16


class RunMonitor:
    """Watches exploration for the run properties (an explorer :class:`Monitor`).

    Keeps per state a few flags, the id of its layout (stable states) and a bitmask of the
    tasks nobody processes; per edge whether it is a round / a decisive rebalance. State and
    edge properties are checked as states and edges are found, so the first discovery of a
    violation is at the least depth (BFS).
    """

    def __init__(self, ctx: RunContext, model, *, properties=RUN_PROPERTIES, stop_early: bool = False,
                 judge_worker: bool = False):
        self.ctx = ctx
        self.model = model
        self.properties = tuple(properties)
        self.stop_early = stop_early
        self.discoveries: dict[str, Discovery] = {}
        self.errors: list[tuple[int, object]] = []
        self.flags = bytearray()
        self.layout_id = array("I")
        self.unprocessed = array("Q")
        self.edge_weight = bytearray()
        self.edge_moved: dict[int, int] = {}  # rebalance edge -> bitmask of tasks whose owner it changes
        self.edge_unforced: dict[int, int] = {}  # ... of those, the changes nothing forced (ties and regressive)
        self._layouts: dict = {}
        self._state_checks = [p for p in self.properties if p.scope == "state" and p.check is not None]
        self._edge_checks = [p for p in self.properties if p.scope == "edge" and p.check is not None]
        self._open_edge_checks = list(self._edge_checks)  # those not discovered yet (see :meth:`_record`)
        self._ha = ctx.rules == "ha"
        self._judges_unavailability = any(p.name == "bounded-unavailability" for p in self.properties)
        judged = [p.name for p in self.properties if p.scope == "rebalance"]
        self.judge = RebalanceJudge(ctx.rules, judged) if judged else None
        # ``judge_worker``: the judge's verdicts on the second core, collected by :meth:`finish`
        # (:mod:`rebalproof.properties.run_judge_worker`); not when a verdict may stop the run
        self._deferred = None
        if judge_worker and self.judge is not None and not stop_early:
            from rebalproof.properties.run_judge_worker import JudgeWorker

            self._deferred = JudgeWorker(self.judge, model.view_from_key, self._judged_violation)
        # rebalances requested in quiescent states (GroupModel.requested_probes): judged, not
        # explored, under the rule sets promising ``fixpoint`` (sticky, eager, ha)
        self._requests = (self.judge is not None and "fixpoint" in judged and promised("fixpoint", ctx.rules)
                          and hasattr(model, "requested_probes"))
        self._stateful = [model.is_stateful(t) for t in model.task_ids]
        self._task_index = {t: i for i, t in enumerate(model.task_ids)}
        self._all_tasks = (1 << len(model.task_ids)) - 1
        self._attainable: dict = {}  # (capacity, leaving) per member -> balance_attainable
        self._config, self._tasks = ctx.bounds.config, ctx.bounds.tasks  # built once, shared by every view

    @property
    def requests_rebalances(self) -> bool:
        """True when :meth:`on_expand` judges a rebalance requested at every quiescent state: an
        engine's partial-order reduction then keeps every quiescent state
        (:func:`~rebalproof.model.group_por.ample_expand`'s ``keep_quiescent``)."""
        return self._requests

    def _record(self, name: str, discovery: Discovery) -> None:
        if name not in self.discoveries:
            self.discoveries[name] = discovery
            self._open_edge_checks = [p for p in self._edge_checks if p.name not in self.discoveries]

    def stop(self) -> bool:
        if not self.stop_early:
            return False
        return any(
            p.name in self.discoveries and p.expectation == "always" and p.promised(self.ctx) for p in self.properties
        )

    def on_state(self, idx, s) -> None:
        flags = 0
        if is_stable(s):
            flags |= _STABLE
            lay = tuple((m.id, m.active, m.standby, m.warmup) for m in s.members if m.active or m.standby or m.warmup)
            lid = self._layouts.setdefault(lay, len(self._layouts))
        else:
            lid = 0xFFFFFFFF
        if is_quiescent(s):
            flags |= _QUIESCENT
            if self._ha:
                flags |= self._balance_flag(s)
        if any(m.leaving for m in s.members):
            flags |= _LEAVING
        # the tasks nobody processes: every task but those some member owns and processes
        # (:func:`~rebalproof.model.group_state.processing`: owned, and caught up when stateful),
        # walking only the actives
        processed = 0
        index, stateful = self._task_index, self._stateful
        for m in s.members:
            for t in m.active:
                i = index.get(t)
                if i is not None and (not stateful[i] or m.lag(t) == CAUGHT_UP):
                    processed |= 1 << i
        mask = self._all_tasks & ~processed
        self.flags.append(flags)
        self.layout_id.append(lid)
        self.unprocessed.append(mask)
        for p in self._state_checks:
            if p.name in self.discoveries:
                continue
            result = p.check(self.ctx, self.model, s)
            if p.expectation == "always" and result:
                self._record(p.name, Discovery(property=p.name, kind="safety", state=idx, message=result))
            elif p.expectation == "sometimes" and result:
                self._record(p.name, Discovery(property=p.name, kind="example", state=idx, message=p.promise))

    def _balance_flag(self, s) -> int:
        """0 when the actives of ``s`` are balanced per thread (or no balanced assignment of these
        tasks over these capacities exists and the instances are within one, as ``balanced``
        judges an answer), :data:`_UNBALANCED` when one exists, :data:`_UNDECIDED` when the
        oracle's search could not tell (see the module docstring)."""
        capacity = self.model.capacity
        view = RebalanceInput(
            config=self._config,
            tasks=self._tasks,
            members=tuple(Member(id=m.id, capacity=capacity(m.id), leaving=m.leaving) for m in s.members),
        )
        assignment = Assignment.build({m.id: {"active": list(m.active)} for m in s.members})
        if balanced_either(view, assignment):
            return 0
        key = tuple((m.capacity, m.leaving) for m in view.members)
        if key not in self._attainable:
            self._attainable[key] = balance_attainable(view)
        attainable = self._attainable[key]
        if attainable is False:  # no layout balances every subtopology too: the instances must still be within one
            return 0 if measure_balance(view, assignment).active_either else _UNBALANCED
        return _UNBALANCED if attainable else _UNDECIDED

    def on_edge(self, e, src, s, a, nxt, dst) -> None:
        step = None
        weight = 0
        if a.kind == "rebalance":
            step = self.model.rebalance_step(s, a)
            # what was decided before this rebalance: holdings, with undelivered assignments as made
            decided_roles = {m.id: (m.active, m.standby, m.warmup) for m in s.members}
            decided_roles.update({x[0]: x[1:] for x in s.pending})
            pre = {m: r for m, r in decided_roles.items() if r[0] or r[1] or r[2]}
            delivered = {x[0]: x[1:] for x in step.delivered if x[1] or x[2] or x[3]}
            srt = self.model._sorted
            raw = {}
            for m_id, x in step.assignment.members:
                roles = (srt(x.active), srt(x.standby), srt(x.warmup))
                if any(roles):
                    raw[m_id] = roles
            if delivered != pre:
                weight |= 1
                moved = ties = regressive = 0
                leaving = {m.id for m in s.members if m.leaving}
                for i, t in enumerate(self.model.task_ids):
                    before = tuple(m for m, r in decided_roles.items() if t in r[0])
                    after = tuple(x[0] for x in step.delivered if t in x[1])
                    if before != after:
                        moved |= 1 << i
                        why = owner_change(step, t, before, after, leaving)
                        if why == TIE:
                            ties |= 1 << i
                        elif why == REGRESSIVE:
                            regressive |= 1 << i
                if moved:
                    self.edge_moved[e] = moved
                if ties | regressive:
                    self.edge_unforced[e] = ties | regressive
                if regressive and self._judges_unavailability and "bounded-unavailability" not in self.discoveries:
                    t = self.model.task_ids[(regressive & -regressive).bit_length() - 1]
                    holders = [m for m, r in decided_roles.items() if t in r[0] and not any(t in x[1] for x in step.delivered if x[0] == m)]
                    target = ", ".join(step.assignment.actives_of(t)) or "nobody"
                    self._record("bounded-unavailability", Discovery(
                        property="bounded-unavailability", kind="safety", state=src, action=a,
                        message=f"task {t} is taken from {', '.join(holders)} and given to {target}, less caught up on it",
                    ))
            if raw != pre and s.triggers != ("revoked",) and not _realizes_only(pre, raw, s):
                weight |= 2
            if self._deferred is not None:
                self._deferred.submit(self.model.step_key(s, a), a.choice, step, src, a)
            elif self.judge is not None:
                for name, message in self.judge.judge(e, self.model.step_key(s, a), a.choice, step):
                    self._judged_violation(name, message, src, a)
            if a.choice == 0 and a.lags is None and (self._deferred is not None or self.judge is not None):
                self._judge_behind_probes(e, src, s, a)
        self.edge_weight.append(weight)
        for p in self._open_edge_checks:
            result = p.check(self.ctx, self.model, s, a, nxt, step)
            if not result:
                continue
            kind = "safety" if p.expectation == "always" else "example"
            message = result if isinstance(result, str) else p.promise
            self._record(p.name, Discovery(property=p.name, kind=kind, state=src, action=a, message=message))

    def _judge_behind_probes(self, e: int, src: int, s, a: Action) -> None:
        """Judge the answers to the readings that spread behind copies apart
        (:meth:`~rebalproof.model.group_model.GroupModel.behind_probes`: judged, not explored),
        once per state, at its first canonical rebalance edge."""
        probes = getattr(self.model, "behind_probes", None)
        if probes is None:
            return
        try:
            asked = probes(s, a.leader)
        except AssignorError as error:  # a finding about the assignor, on the probe's own input
            self.on_assignor_error(src, s, error, Action("rebalance", leader=a.leader, lags=getattr(error, "reading", None)))
            return
        for probe in asked:
            step = self.model.rebalance_step(s, probe)
            if step is None:
                continue
            key = self.model.step_key(s, probe)
            if self._deferred is not None:
                self._deferred.submit(key, probe.choice, step, src, probe)
            else:
                for name, message in self.judge.judge(e, key, probe.choice, step, beside=True):
                    self._judged_violation(name, message, src, probe)

    def on_expand(self, idx, s, successors: int) -> None:
        """State ``idx`` is being expanded (``successors``: how many it has): judge the answers to
        a rebalance requested there (:meth:`~rebalproof.model.group_model.GroupModel.requested_probes`:
        judged, not explored) where the rules promise ``fixpoint`` -- the group's layout shown to
        the leader again with nothing changed, which no trigger of the model does but a probing
        rebalance. Every quiescent state, not only those meeting ``fixpoint``'s premise: red team
        13's assignors that swap stateless tasks, or hand a restoring active to the least loaded
        member, only when asked with nothing changed passed while only settled layouts were asked.

        Inside partial-order reduction's region too (:func:`~rebalproof.model.group_por.quiet`,
        after the last membership event): there the reduction keeps every quiescent state
        (:attr:`requests_rebalances`), so the views judged, and so every verdict, are the same
        with and without it. Asked only at the region's ends, red team 13's restoring-active
        bugs needed ``--events`` one wider than the defaults."""
        if not self._requests or not is_quiescent(s):
            return
        try:
            probes = self.model.requested_probes(s)
        except AssignorError as error:  # a finding about the assignor, on the requested view (or a reading of it)
            self.on_assignor_error(idx, s, error, Action("rebalance", requested=True, lags=getattr(error, "reading", None)))
            return
        for key, probe, step in probes:  # none where not enabled (no leader)
            self.judge.note_requested(key)  # counted here whether the judge runs here or on the second core
            if self._deferred is not None:
                self._deferred.submit(key, probe.choice, step, idx, probe)
            else:
                for name, message in self.judge.judge(-1, key, probe.choice, step, expanded=idx):
                    self._judged_violation(name, message, idx, probe)

    def _judged_violation(self, name: str, message: str, src: int, a: Action) -> None:
        self._record(name, Discovery(property=name, kind="safety", state=src, action=a, message=message))

    def finish(self) -> None:
        """Collect the verdicts judged on the second core (a no-op without ``judge_worker``; idempotent)."""
        if self._deferred is not None:
            self._deferred.finish()

    @property
    def helper_memory(self) -> tuple[int, int, int] | None:
        """The judge worker's memory when it ended (:mod:`rebalproof.model.helper_memory`), or None."""
        return self._deferred.memory if self._deferred is not None else None

    def on_assignor_error(self, idx, s, error, action: Action | None = None) -> None:
        """The assignor failed on the rebalance of state ``idx`` (``action``: a behind probe's, whose
        view the finding's trace then ends on; else the canonical one)."""
        self.errors.append((idx, error))
        self._record(
            "assignor-answers",
            Discovery(property="assignor-answers", kind="finding", state=idx, action=action or Action("rebalance"), message=str(error), error=error),
        )


def _realizes_only(pre: dict, raw: dict, s) -> bool:
    """True when the answer ``raw`` only realizes moves planned before (``pre``, what was decided):
    no member gets a copy of a task it held no copy of, no warmup is assigned anew, and no warmup
    left in the answer is already caught up (everything ready was realized). Seed 002: "Once these
    extra replicas are caught up, a subsequent assignment will make that the active (or a
    permanent standby) and unassign one of the prior active or standby tasks". With restores
    finishing one at a time, the one realizing rebalance of the seed's count ("the final one to
    realize the movements") is split over several; they realize one decision, so they are not
    decisive."""
    for m, (active, standby, warmup) in raw.items():
        before = pre.get(m, ((), (), ()))
        held = set(before[0]) | set(before[1]) | set(before[2])
        if any(t not in held for t in active + standby):
            return False
        if any(t not in before[2] for t in warmup):
            return False
        member = next((x for x in s.members if x.id == m), None)
        if member is not None and any(member.lag(t) == CAUGHT_UP for t in warmup):
            return False
    return True


# -- evaluation after exploration ---------------------------------------------------------
@dataclass
class _Graph:
    exp: object
    monitor: RunMonitor
    ranges: list
    sccs: list | None = None
    comps: list | None = None
    settled: set = field(default_factory=set)


def _action_table(exp, test) -> np.ndarray:
    """``test(action)`` for every action id, as a boolean array (index it by ``edge_act``)."""
    return np.fromiter((bool(test(a)) for a in exp.actions), dtype=bool, count=len(exp.actions))


def _per_edge_action(exp, test) -> np.ndarray:
    """``test(action of e)`` for every edge ``e``, as a boolean array."""
    if not len(exp.edge_act):
        return np.zeros(0, dtype=bool)
    return _action_table(exp, test)[edge_array(exp.edge_act)]


def _graph(exp, monitor) -> _Graph:
    g = _Graph(exp=exp, monitor=monitor, ranges=EdgeRanges(exp))
    # settled: expanded, and no edge of a fair kind leaves it
    fair = _per_edge_action(exp, lambda a: a.kind in FAIR_KINDS)
    src = edge_array(exp.edge_src)
    has_fair = np.zeros(exp.states, dtype=bool)
    has_fair[src[fair]] = True
    expanded = edge_array(exp.first_edge) >= 0
    g.settled = set(np.flatnonzero(expanded & ~has_fair).tolist())
    return g


def _components(g: _Graph):
    if g.comps is None:
        g.sccs = nontrivial_sccs(g.exp, g.ranges)
        g.comps = fair_components(g.exp, g.ranges, g.sccs)
    return g.comps


def _lasso(g: _Graph, name: str, comp, entry: int, must_visit=(), message="") -> Discovery:
    cycle = fair_cycle(g.exp, g.ranges, comp.nodes, entry, must_visit)
    return Discovery(property=name, kind="lasso", state=entry, path=tuple(cycle), message=message)


def _path_along(g: _Graph, start: int, step, component, comp_nodes_of) -> tuple[int, ...]:
    """Edges of the weighted longest path chosen by :func:`longest_paths` from ``start``."""
    from rebalproof.properties.run_liveness import _bfs_path

    edges = []
    here = start
    for _ in range(g.exp.states + 1):
        e = step.get(here)
        if e is None:
            break
        src = g.exp.edge_src[e]
        if src != here:
            edges += _bfs_path(g.exp, g.ranges, comp_nodes_of(component[here]), here, lambda n, w=src: n == w)
        edges.append(e)
        here = g.exp.edge_dst[e]
    return tuple(edges)


def _check_converges(ctx: RunContext, g: _Graph):
    exp, mon = g.exp, g.monitor
    measure = {}
    comps = _components(g)
    fair = [c for c in comps if c.fair]
    measure["fair_cycles"] = len(fair)
    measure["settled_states"] = len(g.settled)
    if fair:
        comp = fair[0]
        entry = min(comp.nodes)
        return Status.VIOLATED, (
            f"a fair run never settles: a cycle of {len(comp.nodes)} states without membership change"
        ), _lasso(g, "converges", comp, entry, message="never settles"), measure
    if ctx.rules == "ha":
        unbalanced = sorted(u for u in g.settled if mon.flags[u] & _UNBALANCED)
        measure["unbalanced_settled_states"] = len(unbalanced)
        if unbalanced:
            u = unbalanced[0]
            return Status.VIOLATED, "settles on an assignment that is not balanced (KIP-441 balance)", Discovery(
                property="converges", kind="safety", state=u, message="settled, not balanced"
            ), measure
    acts = exp.actions
    sources = sorted(
        {exp.edge_dst[e] for u in g.settled for e in g.ranges[u] if acts[exp.edge_act[e]].kind == "join"}
    )
    if sources:
        internal = _per_edge_action(exp, lambda a: a.kind not in MEMBERSHIP_KINDS)
        decisive = (np.frombuffer(bytes(mon.edge_weight), dtype=np.uint8) >> 1) & 1
        best, step, unbounded, component = longest_paths(exp, g.ranges, None, internal, decisive)
        worst_src = max(sources, key=lambda n: (best[n], -n))
        worst = best[worst_src]
        measure["worst_rebalances_after_join"] = "unbounded" if worst == float("inf") else int(worst)
        if ctx.rules == "ha":
            measure["rebalance_bound"] = rebalance_bound(ctx.bounds)  # Kafka's pace, reported
            bound = measure["progress_bound"] = progress_bound(ctx.bounds)  # the bound judged (red team 14: say which)
            if worst > bound:
                by_comp = {}
                for n, c in component.items():
                    by_comp.setdefault(c, set()).add(n)
                path = () if worst == float("inf") else _path_along(g, worst_src, step, component, by_comp.__getitem__)
                return Status.VIOLATED, (
                    f"{measure['worst_rebalances_after_join']} decisive rebalances after one added instance, "
                    f"more than the bound {bound} (one probing round per stateful task, and the final one)"
                ), Discovery(property="converges", kind="safety", state=worst_src, path=path, message="too many rebalances"), measure
    undecided = sum(1 for u in g.settled if mon.flags[u] & _UNDECIDED)
    if undecided:
        measure["undecided_balance_states"] = undecided
        return Status.INCONCLUSIVE, (
            f"{undecided} settled state(s) not balanced per thread, and whether a balanced assignment exists is "
            "undecided within the oracle's search budget"
        ), None, measure
    return None, None, None, measure


def _check_shuffle(ctx, g: _Graph):
    mon = g.monitor
    for comp in _components(g):
        if not comp.fair:
            continue
        stable = sorted(u for u in comp.nodes if mon.flags[u] & _STABLE)
        layouts = {mon.layout_id[u] for u in stable}
        if len(layouts) >= 2:
            entry = stable[0]
            other = next(u for u in stable if mon.layout_id[u] != mon.layout_id[entry])
            return Status.VIOLATED, (
                f"a fair cycle goes through {len(layouts)} different stable assignments without membership change"
            ), _lasso(g, "no-shuffle-cycle", comp, entry, (other,), message="endless shuffling"), {"shuffle_layouts": len(layouts)}
    return None, None, None, {}


def _worst_stretch(g: _Graph, moved: dict) -> tuple[float, str | None]:
    """The most rounds of ``moved`` (edge -> task bitmask) on one path along which the task
    stays unprocessed, and that task; ``inf`` when a cycle repeats them."""
    exp, mon = g.exp, g.monitor
    worst_all, worst_task = 0, None
    unprocessed = edge_array(mon.unprocessed)
    moved_edges = np.fromiter(moved.keys(), dtype=np.int64, count=len(moved))
    moved_masks = np.fromiter(moved.values(), dtype=np.uint64, count=len(moved))
    for i, t in enumerate(exp.model.task_ids):
        bit = np.uint64(1 << i)
        if not (moved_masks & bit).any():
            continue
        nodes = (unprocessed & bit) != 0
        weight = np.zeros(len(exp.edge_src), dtype=np.float64)
        weight[moved_edges[(moved_masks & bit) != 0]] = 1
        best, _, _, _ = longest_paths(exp, g.ranges, nodes, None, weight)
        top = best.largest(default=0)
        if top > worst_all:
            worst_all, worst_task = top, t
    return worst_all, worst_task


def _check_unavailability(ctx, g: _Graph):
    """Regressive owner changes (:func:`owner_change`), found edge by edge as the BFS goes, so
    the first is at the least depth; measured over every stretch during which nobody processes
    a task: ``worst_unforced`` (changes nothing forced: ties and regressive ones, which no seed
    sentence bounds) and ``worst_rounds`` (every owner-changing round, forced ones included)."""
    mon = g.monitor
    unforced, task = _worst_stretch(g, mon.edge_unforced)
    rounds, _ = _worst_stretch(g, mon.edge_moved)

    def shown(x):
        return "unbounded" if x == float("inf") else int(x)

    measure = {"worst_unforced": shown(unforced), "worst_rounds": shown(rounds), "bound": UNAVAILABILITY_BOUND}
    if task is not None:
        measure["task"] = task
    disc = mon.discoveries.get("bounded-unavailability")
    if disc is not None:
        return Status.VIOLATED, (
            f"{disc.message} (KIP-441: actives go to the most caught-up instances; "
            f"bound {UNAVAILABILITY_BOUND} such moves)"
        ), disc, measure
    return None, (
        f"no task is given to a member less caught up than its holder; while a task is unprocessed, at most "
        f"{shown(unforced)} owner changes nothing forced and {shown(rounds)} in all"
    ), None, measure


def _check_scale_down(ctx, g: _Graph):
    mon = g.monitor
    # red team 14: under other rule sets the verdict read as a contradiction of their "an assignor
    # may treat a leaving member as ordinary"; it is the pair's limit, which the message says
    why = "" if ctx.rules == "learner" else (
        f" (the {ctx.rules} rules let an assignor treat a leaving member as ordinary; this protocol waits for its "
        "actives to be taken away before it shuts down: a limit of this protocol with such an assignor, no rule broken)")
    for comp in _components(g):
        if comp.fair and any(mon.flags[u] & _LEAVING for u in comp.nodes):
            entry = min(comp.nodes)
            return Status.VIOLATED, "a leaving member stays forever in a fair cycle" + why, _lasso(
                g, "scale-down-completes", comp, entry, message="leaving member never shuts down"
            ), {}
    stuck = sorted(u for u in g.settled if mon.flags[u] & _LEAVING)
    if stuck:
        return Status.VIOLATED, "the group settles with a leaving member that never shuts down" + why, Discovery(
            property="scale-down-completes", kind="safety", state=stuck[0], message="leaving member stuck"
        ), {}
    return None, None, None, {}


def _check_assignor(ctx, g: _Graph):
    if g.monitor.errors:
        d = g.monitor.discoveries["assignor-answers"]
        return Status.VIOLATED, d.message.splitlines()[0], d, {"failed_rebalances": len(g.monitor.errors)}
    return None, None, None, {}


_GRAPH_CHECKS = {
    "converges": _check_converges,
    "no-shuffle-cycle": _check_shuffle,
    "bounded-unavailability": _check_unavailability,
    "scale-down-completes": _check_scale_down,
    "assignor-answers": _check_assignor,
}


def _never_happens(ctx: RunContext, witness: RunProperty) -> str:
    """Why a witness that the complete exploration never saw is *inconclusive*, not violated.

    It says the bounds are too small, not that the implementation is wrong: a correct assignor
    at ``--standbys 2`` over three instances has no warmup to make. What it witnesses was not
    exercised the way it names, so the verdict is undecided (the summary line says so), and the
    remedy is the user's: wider bounds.
    """
    relying = [q.name for q in RUN_PROPERTIES if q.witness == witness.name and q.promised(ctx)]
    said = f"never happens within the bounds (widen them): {witness.promise}"
    return f"{said}; it is the witness of {', '.join(relying)}" if relying else said


def evaluate(ctx: RunContext, exp, monitor: RunMonitor) -> list[PropertyResult]:
    """Verdicts for every property of ``monitor`` after ``exp`` finished (see the module docstring)."""
    results = []
    monitor.finish()
    graph = _graph(exp, monitor)
    complete = exp.complete and exp.errors == 0
    if not exp.complete:
        why = f"exploration cut short by the bound: {exp.bound}"
    elif exp.errors:
        why = f"the assignor failed on {exp.errors} state(s), not explored beyond"
    else:
        why = ""
    for p in monitor.properties:
        measure: dict = {}
        discovery = monitor.discoveries.get(p.name)
        if p.scope == "graph":
            try:
                if getattr(exp, "budget", None) is not None:
                    exp.budget.check()
                status, message, discovery, measure = _GRAPH_CHECKS[p.name](ctx, graph)
            except BudgetSpent as stop:  # the time limit or an interrupt: this check is not done
                status, message, discovery, measure = Status.INCONCLUSIVE, f"analysis cut short: {stop.reason}", None, {}
            if status is None:
                if p.name == "bounded-unavailability" and not complete:
                    status, message = Status.INCONCLUSIVE, why
                elif complete:
                    status, message = Status.HOLDS, message or p.promise
                else:
                    status, message = Status.INCONCLUSIVE, why
        elif p.scope == "rebalance":
            status, message, measure = run_verdict(monitor.judge, p.name, discovery, complete=complete, why=why)
        elif p.expectation == "always":
            if discovery is not None:
                status, message = Status.VIOLATED, discovery.message
            elif complete:
                status, message = Status.HOLDS, p.promise
            else:
                status, message = Status.INCONCLUSIVE, why
        else:  # sometimes
            if discovery is not None:
                status, message = Status.HOLDS, f"example found: {p.promise}"
            elif complete:
                status, message, measure = Status.INCONCLUSIVE, _never_happens(ctx, p), {"examples": 0}
            else:
                status, message = Status.INCONCLUSIVE, why
        if not p.promised(ctx):
            if p.expectation == "sometimes":
                observed = "happens" if status is Status.HOLDS else "never happens" if measure.get("examples") == 0 else status.value
                measure = {}
            else:
                observed = status.value + (f": {message}" if status is Status.VIOLATED else "")
            message = f"not promised (only {p.promised_by}); observed: {observed}"
            status = Status.NOT_PROMISED
        results.append(PropertyResult(property=p, verdict=Verdict(property=p.name, status=status, message=message, measure=measure), discovery=discovery))
    return results
