"""One model check end to end: model -> exploration -> run properties -> verdicts and traces.

:func:`check_model` is what ``rebalproof check`` and the manifest replay call. It builds the
:class:`~rebalproof.model.group_model.GroupModel`, explores it breadth-first
(:func:`~rebalproof.model.explorer.explore`), evaluates :data:`~rebalproof.properties.run.RUN_PROPERTIES`
and builds a ``rebalproof-trace/1`` trace (:mod:`rebalproof.traces.format`) for every
discovered violation.

Symmetry reduction is used only when asked: ``symmetry=True`` (the caller decided the assignor
allows it) or ``symmetry="auto"``: first sample equivariance of the assignor on leader views of
reachable states (:func:`~rebalproof.model.group_symmetry.auto_symmetry`), reduce only if it held;
after a reduced exploration, check every view it reached under every renaming the reduction
merges by (:func:`~rebalproof.model.group_symmetry.verify_reached`: what makes the reduction
sound) and, if that breaks it, explore again without reduction.

A :class:`~rebalproof.model.budget.Budget` (``budget=``) bounds the whole check: exploration
stops when it is spent (time limit, SIGINT / SIGTERM) and so do the graph checks, whose
verdicts are then inconclusive; violations already found keep their traces. The peak RSS in
the statistics is taken at the end, after the analysis, children included.

The result counts the assignor's calls: views answered by the assignor (each a call of a
deterministic external one) against distinct states, and look-ups answered from the memo.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

from rebalproof.model.budget import Budget
from rebalproof.model.explorer import Exploration, Limits, _peak_rss, explore
from rebalproof.model.group_assignor import MemoChooser
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_model import GroupModel
from rebalproof.model.helper_memory import own_peak, peak_with_helpers
from rebalproof.model.group_symmetry import AutoSymmetry, ReachedCheck, auto_symmetry
from rebalproof.model.group_protocol import Protocol
from rebalproof.properties.run import RUN_PROPERTIES, Discovery, PropertyResult, RunContext, RunMonitor, evaluate
from rebalproof.properties.run_rebalance import REBALANCE_NAMES, judge_step, promised
from rebalproof.properties.verdict import Status
from rebalproof.traces.format import build_trace

__all__ = ["CheckResult", "check_model", "POR_OFF_UNDER_BOUNDS"]

#: Why partial-order reduction switches itself off when a depth or state bound is set.
POR_OFF_UNDER_BOUNDS = (
    "a depth or state bound is set: a reduced run reaches some states deeper or later, "
    "so a violation within the bound could fall outside it"
)


@dataclass(kw_only=True)
class CheckResult:
    """Verdicts, traces (property name -> trace JSON) and the exploration of one check."""

    ctx: RunContext
    exploration: Exploration
    results: list[PropertyResult]
    traces: dict = field(default_factory=dict)
    symmetry: bool = False
    #: what ``symmetry="auto"`` found (None when not asked)
    symmetry_check: AutoSymmetry | None = None
    #: views answered by the assignor during the check (memo misses)
    calls: int = 0
    #: look-ups answered from the memo
    memo_hits: int = 0
    #: why partial-order reduction was asked for and switched off (None: it was not)
    por_off: str | None = None
    #: distinct views of rebalances requested in quiescent states, judged, not explored
    #: (:meth:`~rebalproof.model.group_model.GroupModel.requested_probes`); None where not asked
    requested_views: int | None = None

    @property
    def boundary_lags(self) -> dict | None:
        """With ``Bounds.boundary_lags``: ``{"views": asked, "answered_otherwise": n}`` (see
        :meth:`GroupModel.boundary_summary`); None without."""
        if not self.ctx.bounds.boundary_lags:
            return None
        asked, otherwise = self.exploration.model.boundary_summary()
        return {"views": asked, "answered_otherwise": otherwise, "behind_views": self.exploration.model.behind_summary()}

    def boundary_line(self) -> str | None:
        """What boundary lags did, in one line (None without them)."""
        b = self.boundary_lags
        if b is None:
            return None
        head = f"boundary lags: {b['views']:,} views also asked with caught-up copies at acceptable_recovery_lag"
        if not b["answered_otherwise"]:
            head += "; every one answered as with those copies at lag 0"
        else:
            head += f"; {b['answered_otherwise']:,} answered otherwise (explored as more rebalance steps)"
        if b["behind_views"]:
            head += f"; {b['behind_views']:,} with behind copies spread apart (judged, not explored)"
        return head

    def requested_line(self) -> str | None:
        """What the rebalances requested in quiescent states showed, in one line (None where none were asked)."""
        if not self.requested_views:
            return None
        return (f"requested rebalances: {self.requested_views:,} views of quiescent states also asked with nothing changed "
                "(judged, not explored)")

    def calls_line(self, *, external: bool = False) -> str:
        """``N external calls for M distinct states (memo hits H)``."""
        what = "external calls" if external else "assignor calls"
        return f"{self.calls:,} {what} for {self.exploration.states:,} distinct states (memo hits {self.memo_hits:,})"

    def result(self, name: str) -> PropertyResult:
        return next(r for r in self.results if r.property.name == name)

    def status(self, name: str) -> Status:
        return self.result(name).verdict.status

    @property
    def violated(self) -> list[PropertyResult]:
        return [r for r in self.results if r.verdict.status is Status.VIOLATED]

    @property
    def inconclusive(self) -> list[PropertyResult]:
        return [r for r in self.results if r.verdict.status is Status.INCONCLUSIVE]

    def exit_code(self, *, require_complete: bool = False) -> int:
        """1 when a promised property is violated (or, with ``require_complete``, inconclusive); else 0."""
        if self.violated:
            return 1
        if require_complete and self.inconclusive:
            return 1
        return 0

    def to_json(self) -> dict:
        exp = self.exploration
        return {
            "protocol": self.ctx.protocol.spec,
            "assignor": self.ctx.assignor,
            "rules": self.ctx.rules,
            "bounds": self.ctx.bounds.to_json(),
            "symmetry": self.symmetry,
            "por": {"enabled": exp.por, "reduced_expansions": exp.reduced,
                    **({"switched_off": self.por_off} if self.por_off else {})},
            "complete": exp.complete and exp.errors == 0,
            "bound_hit": exp.bound,
            "statistics": exp.stats.to_json(),
            "assignor_calls": {
                "calls": self.calls,
                "distinct_states": exp.states,
                "memo_hits": self.memo_hits,
                "equivariance_check_calls": self.symmetry_check.calls if self.symmetry_check else 0,
            },
            **({"symmetry_check": self.symmetry_check.to_json()} if self.symmetry_check else {}),
            **({"boundary_lags": self.boundary_lags} if self.ctx.bounds.boundary_lags else {}),
            **({"requested_views": self.requested_views} if self.requested_views is not None else {}),
            "properties": [
                dict(r.verdict.to_json(), expectation=r.property.expectation, promise=r.property.promise)
                for r in self.results
            ],
        }


def judge_warm_start(ctx: RunContext, steps, results: list[PropertyResult]) -> list[PropertyResult]:
    """The per-rebalance properties judged on the answers that built the warm start too.

    The warm start is the group as the assignor settled it from an empty group
    (:meth:`GroupModel.settle`): real rebalances, but before step 0, so the exploration's judge
    never sees them, and a bug in an assignor's answer to an empty group would hide there (only
    ``--start cold`` reaches those views, at a far larger space). A promised property that holds
    (or is undecided) over the exploration and breaks on one of those answers is violated, at
    step 0, with the first such answer's words; nothing else changes (counts, witnesses).
    """
    if not steps:
        return results
    out = []
    for r in results:
        name = r.property.name
        if name in REBALANCE_NAMES and promised(name, ctx.rules) and r.verdict.status in (Status.HOLDS, Status.INCONCLUSIVE):
            broken = [m for m in (judge_step(name, ctx.rules, step) for step in steps) if m]
            if broken:
                said = f"an answer that built the warm start (before step 0) breaks it: {broken[0]}"
                verdict = replace(r.verdict, status=Status.VIOLATED, message=said,
                                  measure={**r.verdict.measure, "warm_start_answers_violating": len(broken)})
                r = PropertyResult(property=r.property, verdict=verdict,
                                   discovery=Discovery(property=name, kind="safety", state=0, message=said))
        out.append(r)
    return out


class _EquivarianceWatch:
    """A reduced run's budget that also checks the views it reached under every renaming
    (:class:`~rebalproof.model.group_symmetry.ReachedCheck`) each time their number doubles
    (from :data:`WATCH_FROM`): where the assignor turns out to depend on names, the reduced run
    stops there, so the exploration in full that follows has the time limit's rest, not what
    a whole reduced run left of it. Decided by counts of views, never by the clock: the same
    steps on every run. Everything else is the command's budget's (None: no limit)."""

    def __init__(self, reached: ReachedCheck, model: GroupModel, budget: Budget | None):
        self.reached, self.model, self.budget = reached, model, budget
        self.done = 0  # views handed to the check so far
        self.next = WATCH_FROM

    def step(self, *, max_views: int | None = None, pause_at: int | None = None) -> AutoSymmetry:
        """Check the views asked since the last step; the result over all of them."""
        reached = self.model.views_asked_with_ids(self.done)
        self.done += len(reached)
        return self.reached.add(reached, budget=self.budget, max_views=max_views, pause_at=pause_at)

    def explore_spent(self) -> str | None:
        reason = None if self.budget is None else self.budget.explore_spent()
        if reason is not None:
            return reason
        if self.model.views_asked_count() >= self.next:
            self.next = 2 * self.model.views_asked_count()
            # no more renamed views than the check at the end may ask now (its cap only grows with the calls)
            if not self.step(pause_at=_check_cap(self.model)).reduce:
                return "the assignor's answers depend on names (symmetry reduction dropped)"
        return None

    def spent(self) -> str | None:
        return None if self.budget is None else self.budget.spent()

    def check(self) -> None:
        if self.budget is not None:
            self.budget.check()

    def __getattr__(self, name):  # the rest of a Budget's interface
        if self.budget is None:
            raise AttributeError(name)
        return getattr(self.budget, name)


#: The reduced run's views are first checked under renamings once this many were asked.
WATCH_FROM = 256


def _check_cap(model: GroupModel) -> int:
    """The renamed views the check of a reduced run may ask: twice the views the run asked (and 1,000)."""
    return max(1000, 2 * model._chooser.calls)


def check_model(
    *,
    protocol: Protocol,
    assignor,
    bounds: Bounds,
    assignor_name: str = "assignor",
    rules: str | None = None,
    symmetry: bool | str = False,
    symmetry_seed: int = 0,
    properties=RUN_PROPERTIES,
    progress=None,
    stop_early: bool = False,
    max_seconds: float | None = None,
    explorer=explore,
    budget: Budget | None = None,
    por: bool = False,
) -> CheckResult:
    """Check ``protocol`` with ``assignor`` within ``bounds``; see the module docstring.

    ``explorer`` is the engine: :func:`rebalproof.model.explorer.explore` in this process, or a
    drop-in with the same signature and result such as
    :func:`rebalproof.pipeline.groupbfs.spark_explorer` (``check --engine spark``). ``por``
    explores with partial-order reduction (:mod:`rebalproof.model.group_por`; ``rebalproof check``
    turns it on unless ``--por off``): the same verdicts, fewer interleavings where no rebalance
    can follow. It switches itself off under a depth or state bound (:data:`POR_OFF_UNDER_BOUNDS`):
    a reduced run reaches some states deeper or later, so a violation within the bound could fall
    outside it; the result says so (``por_off``).
    """
    if symmetry not in (True, False, "auto"):
        raise ValueError(f"symmetry must be True, False or 'auto', got {symmetry!r}")
    sym_check = None
    if symmetry == "auto":
        inner = assignor.inner if isinstance(assignor, MemoChooser) else assignor  # check what a memo wraps
        sym_check = auto_symmetry(
            lambda: GroupModel(protocol=protocol, bounds=bounds, assignor=inner, assignor_name=assignor_name),
            inner,
            seed=symmetry_seed,
        )
        symmetry = sym_check.reduce
    model = GroupModel(protocol=protocol, bounds=bounds, assignor=assignor, assignor_name=assignor_name)
    ctx = RunContext(protocol=protocol, rules=rules, bounds=bounds, assignor=assignor_name)
    local = explorer is explore  # the judge on the second core: the local engine only
    monitor = RunMonitor(ctx, model, properties=properties, stop_early=stop_early, judge_worker=local)
    limits = Limits(max_depth=bounds.depth, max_states=bounds.max_states, max_seconds=max_seconds, budget=budget)
    por_off = None
    if por and (bounds.depth is not None or bounds.max_states is not None):
        por, por_off = False, POR_OFF_UNDER_BOUNDS
    engine = explorer if not por else functools.partial(explorer, por=True)
    if local and not symmetry:  # a built-in's answers computed ahead on the second core
        model.answers_ahead()
    watch = None
    if sym_check is not None and sym_check.reduce:
        model.record_ids()  # for the check of the reduced run (verify_reached)
        watch = _EquivarianceWatch(ReachedCheck(sym_check, inner, classes=model.capacity_classes), model, budget)
        limits = replace(limits, budget=watch)
    try:
        exp = engine(model, symmetry=symmetry, limits=limits, monitor=monitor, progress=progress)
    finally:
        ahead_memory = model.close_answers_ahead()
    if watch is not None:
        limits = replace(limits, budget=budget)
        # the check may ask at most twice the views the reduced run asked (and 1,000): past that,
        # exploring in full is the cheaper sound run
        sym_check = watch.step(max_views=_check_cap(model))
        if not sym_check.reduce:  # a view deep in the reduced space broke it: explore again in full
            symmetry = False
            # the same memo: views the reduced exploration asked are not asked again, calls add up
            model = GroupModel(protocol=protocol, bounds=bounds, assignor=model._chooser, assignor_name=assignor_name)
            monitor.finish()  # the reduced run's judge worker ends
            monitor = RunMonitor(ctx, model, properties=properties, stop_early=stop_early, judge_worker=local)
            exp = engine(model, symmetry=False, limits=limits, monitor=monitor, progress=progress)
    exp.budget = budget  # any engine: the analysis stops when the budget is spent
    note = getattr(progress, "note", None)
    if note is not None:
        note(f"explored {exp.states:,} distinct states, {exp.stats.edges:,} transitions, depth {exp.stats.depth}; "
             "checking the properties of the graph")
    results = judge_warm_start(ctx, model.warm_start_steps(), evaluate(ctx, exp, monitor))
    traces = {}
    for r in results:
        failed = r.verdict.status is Status.VIOLATED or (
            r.verdict.status is Status.NOT_PROMISED and "observed: violated:" in r.verdict.message
        )
        if failed and r.discovery is not None and r.property.expectation != "sometimes":
            traces[r.property.name] = build_trace(
                exp,
                r.discovery,
                protocol=protocol.spec,
                assignor=assignor_name,
                bounds=bounds,
                config_json={
                    "num_standby_replicas": bounds.standbys,
                    "acceptable_recovery_lag": bounds.acceptable_recovery_lag,
                    "max_warmup_replicas": bounds.max_warmups,
                },
            )
    chooser = model._chooser
    # after the analysis too; helper processes counted by their private memory (they share the rest)
    with_helpers = peak_with_helpers(own_peak(), [monitor.helper_memory, ahead_memory])
    exp.stats.peak_rss_bytes = max(exp.stats.peak_rss_bytes, _peak_rss() if with_helpers is None else with_helpers)
    requested = len(monitor.judge.requested) if monitor.judge is not None and monitor._requests else None
    return CheckResult(ctx=ctx, exploration=exp, results=results, traces=traces, symmetry=symmetry,
                       symmetry_check=sym_check, calls=chooser.calls, memo_hits=chooser.hits, por_off=por_off,
                       requested_views=requested)
