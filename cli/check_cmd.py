"""``rebalproof check``: model-check a member-side protocol with an assignor within bounds.

Explores every interleaving of joins, leaves, crashes, leader fail-over, restore progress,
probing rebalances and member-level assignment deliveries inside the bounds (breadth-first, so
a counterexample is a shortest one) and prints one verdict per run property: holds / violated
/ inconclusive (with the bound that cut exploration short) / not promised. Each counterexample
is written as a ``rebalproof-trace/1`` JSON trace under ``--trace-dir`` (atomically).

Exit codes: 0 no promised property is violated (inconclusive ones are listed; with
``--require-complete`` they give 1), 1 a promised property is violated, 2 bad usage or input.

An external assignor (``py:``/``exec:``) is judged by the ``ha`` rules unless ``--rules`` says
otherwise (``--rules none``: only what every assignor must do), as in ``oracle`` and ``assign``.
Its answers are memoised per leader view; the report counts the external calls against the
distinct states explored.

``--symmetry auto`` (the default for ``py:``/``exec:``; built-ins keep ``declared``) first
samples equivariance of the assignor: on renamings of instances and tasks of leader views of
reachable states (the first BFS levels), the answer to a renamed view must be the renamed
answer, up to automorphism (:mod:`rebalproof.symmetry`). If it held on every sample, the
exploration is reduced by symmetry and says so; then every leader view the reduced exploration
reached is asked under every renaming the reduction merges by (each distinct renamed view
once), which is what makes the reduction sound. If a renaming breaks it (sampled
first or checked after), the renaming is shown with both answers as the ``equivariance``
finding (not promised by any protocol, so it does not change the exit code) and the model is
explored without reduction (answers already asked are kept).

Honest limits: ``--time-limit S`` bounds the whole command, analysis included (exploration stops
at :data:`~rebalproof.model.budget.EXPLORE_SHARE` of it, the graph checks at the limit; what is
not decided is inconclusive). SIGINT / SIGTERM stop it the same way with a partial report --
states, depth, every violation already found with its trace, the rest inconclusive -- and exit 1
if a violation was found, else 130; a second signal stops at once. When stderr is not a
terminal a progress line comes every 10 s (``--quiet``: none).

Bounds come from flags or from ``--scenario FILE.toml`` (bounds only: numbers, booleans and the
``protocol``/``assignor`` names; flags given on the command line win). ``--capacities 1,2,2``
gives the stream threads of ``I1, I2, ...`` (a shorter list repeats its last value; default 1):
every leader view carries them, balance is judged per thread, and symmetry reduction only merges
instances of equal capacity.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import signal
import sys
from pathlib import Path

import click

from rebalproof.cli.render import print_finding, print_table, summary_line
from rebalproof.errors import AssignorError, InputError
from rebalproof.model.budget import Budget
from rebalproof.model.explore_progress import ProgressDisplay
from rebalproof.model.group_assignor import SYMMETRY_MODES, resolve_for_model
from rebalproof.model.group_bounds import BOUND_FIELDS, Bounds, load_scenario
from rebalproof.model.group_protocol import parse_protocol
from rebalproof.properties.common import plural
from rebalproof.properties.run_check import check_model
from rebalproof.properties.verdict import Status
from rebalproof.traces.format import write_trace
from rebalproof.traces.render_text import warm_start_note

__all__ = ["command", "trace_path"]

_RULES = ("ha", "learner", "sticky", "eager", "none")


def trace_path(directory: Path, protocol: str, assignor: str, prop: str) -> Path:
    """``DIR/<protocol>+<assignor>--<property>.json`` with unsafe characters replaced."""
    stem = re.sub(r"[^A-Za-z0-9_.+=-]+", "_", f"{protocol}+{assignor}--{prop}")[:180]
    return directory / f"{stem}.json"


def _describe_path(trace: dict, limit: int = 40) -> list[str]:
    steps = trace["steps"]
    lines = []
    cycle = trace.get("cycle_start")
    for i, step in enumerate(steps[1:], start=1):
        a = step["action"]
        words = " ".join(str(a[k]) for k in ("kind", "member", "task") if k in a)
        if a.get("leader"):
            words += f" (leader {a['leader']})"
        if a.get("kind") == "rebalance" and a.get("choice"):
            words += f" choice {a['choice']}"
        if a.get("lags"):
            words += f" (lags: {a['lags']})"
        if a.get("requested"):
            words += " (requested in a quiescent group)"
        mark = "  <- cycle starts after this step" if cycle is not None and i == cycle else ""
        lines.append(f"  {i:3}. {words}{mark}")
    if len(lines) > limit:
        lines = lines[: limit // 2] + [f"  ... {len(lines) - limit} more steps ..."] + lines[-limit // 2 :]
    return lines


@contextlib.contextmanager
def _stop_on_signals(budget: Budget):
    """While the check runs, SIGINT / SIGTERM record an interrupt in ``budget`` (a partial report
    follows); a second one stops at once (KeyboardInterrupt, exit 130)."""

    def handler(signum, frame):
        if budget.interrupted is not None:
            raise KeyboardInterrupt
        budget.interrupt(signal.Signals(signum).name)

    previous = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: signals keep their handlers
        pass
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _with_budget(callback):
    """Give the command a :class:`~rebalproof.model.budget.Budget` started now (``--time-limit``)
    and record SIGINT / SIGTERM in it while the command runs."""

    @functools.wraps(callback)
    def wrapper(**options):
        time_limit = options.get("time_limit")
        if time_limit is not None and not time_limit > 0:
            raise InputError(f"--time-limit must be more than 0 seconds, got {time_limit:g}")
        budget = Budget(seconds=time_limit)
        with _stop_on_signals(budget):
            return callback(budget, **options)

    return wrapper


@click.command("check")
@click.option("--protocol", "protocol_spec", default=None, metavar="NAME[:OPT=BOOL,...]",
              help="eager | cooperative | learner, with options (cooperative:early_handover=true, "
                   "learner:partial_rebalance=true,scale_down_timeout=true)  [default: cooperative]")
@click.option("--assignor", "spec", default=None, metavar="SPEC",
              help="built-in (ha, sticky, eager, learner:version=1), learner-naive[:learners_to=any|new], "
                   "round-robin, balanced-choices (nondeterministic, equivariant), py:module:function or exec:COMMAND  [default: ha]")
@click.option("--rules", type=click.Choice(_RULES), default=None,
              help="the rule set the assignor is judged by (default: a built-in's own; ha for py:/exec:; "
                   "none: only what every assignor must do)")
@click.option("--scenario", type=click.Path(path_type=Path), default=None, metavar="FILE.toml",
              help="bounds from a TOML file (flags win)")
@click.option("--instances", type=int, default=None, help="pool of instance ids  [default: 3]")
@click.option("--initial", type=int, default=None, help="members at the start  [default: 2]")
@click.option("--subtopologies", type=int, default=None, help="[default: 2]")
@click.option("--partitions", type=int, default=None, help="partitions per subtopology  [default: 2]")
@click.option("--stateless", type=int, default=None, help="stateless tasks (one more subtopology)  [default: 0]")
@click.option("--standbys", type=int, default=None, help="num_standby_replicas  [default: 1]")
@click.option("--max-warmups", "max_warmups", type=int, default=None, help="max_warmup_replicas  [default: 2]")
@click.option("--acceptable-recovery-lag", "recovery_lag", type=int, default=None, metavar="OFFSETS",
              help="acceptable_recovery_lag of the views the assignor is shown (a caught-up copy reports 0, or this with "
                   "--boundary-lags; a behind one this + 1)  [default: 10000, KIP-441's]")
@click.option("--events", type=int, default=None, help="membership events (join, leave, crash, mark-leaving)  [default: 2]")
@click.option("--depth", type=int, default=None, help="BFS depth bound  [default: none]")
@click.option("--max-states", "max_states", type=int, default=None, help="stop after this many distinct states")
@click.option("--aging/--no-aging", default=None, help="state of copies no longer hosted ages and is cleaned up  [default: on]")
@click.option("--boundary-lags/--no-boundary-lags", "boundary_lags", default=None,
              help="rebalances may also report caught-up lags at exactly acceptable_recovery_lag, the seed's "
                   "boundary  [default: on for py:/exec: assignors, off for built-ins]")
@click.option("--capacities", default=None, metavar="C1,C2,...",
              help="stream threads per instance of the pool, in order (I1, I2, ...); a shorter list repeats its "
                   "last value, e.g. 1,2 gives I1 one thread and every later instance two  [default: 1]")
@click.option("--first-id", "first_id", type=int, default=None, metavar="N",
              help="number the instances from I<N> (e.g. 8: I8, I9, I10, whose string order differs from their "
                   "natural order: shows an assignor that mixes the two)  [default: 1]")
@click.option("--start", type=click.Choice(["warm", "cold"]), default=None,
              help="warm: a settled group, every copy caught up; cold: nothing held, no state (a far larger space, "
                   "every copy restoring from nothing: start it at small bounds, e.g. --subtopologies 1)  [default: warm]")
@click.option("--symmetry", type=click.Choice(SYMMETRY_MODES), default=None,
              help="reduce by renaming instances and partitions: auto = when sampled renamings show the assignor "
                   "equivariant (a name-dependent answer is reported), declared = when the assignor declares it, "
                   "on = always, off = never  [default: auto for py:/exec:, declared otherwise]")
@click.option("--symmetry-seed", "symmetry_seed", type=int, default=0, show_default=True, metavar="N",
              help="seed of --symmetry auto's sampled views and renamings")
@click.option("--por", type=click.Choice(["on", "off"]), default="on", show_default=True,
              help="partial-order reduction: one order of the steps that commute where no rebalance can follow "
                   "(identical verdicts); off explores every interleaving, to compare")
@click.option("--timeout", type=float, default=10.0, show_default=True, metavar="S", help="per call of an exec: assignor")
@click.option("--time-limit", "time_limit", type=float, default=None, metavar="S",
              help="bound the whole command, analysis included, to S seconds (what is not decided is inconclusive)")
@click.option("--trace-dir", "trace_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="write counterexample traces here")
@click.option("--dot", "dot_path", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="write the explored graph of stable states as Graphviz DOT, the first counterexample highlighted")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              help="explore in this process, or level by level on Spark (identical counts and verdicts)")
@click.option("--master", default=None, metavar="URL", help="with --engine spark: the Spark master  [default: local[*]]")
@click.option("--spark-partitions", "spark_partitions", type=int, default=None, metavar="N",
              help="with --engine spark: partitions of each level")
@click.option("--checkpoint-dir", "checkpoint_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="with --engine spark: write the visited set and frontier here (Parquet) as it goes")
@click.option("--checkpoint-every", "checkpoint_every", type=int, default=None, metavar="LEVELS",
              help="with --checkpoint-dir: every this many BFS levels  [default: every 5 minutes]")
@click.option("--resume", "resume_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="with --engine spark: continue an exploration from its checkpoint directory")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON on stdout")
@click.option("--progress", is_flag=True, help="progress lines on stderr every 2 s when it is not a terminal  [default: every 10 s]")
@click.option("--quiet", is_flag=True, help="no progress on stderr")
@click.option("--require-complete", is_flag=True, help="exit 1 when a verdict is inconclusive")
@_with_budget
def command(budget, protocol_spec, spec, rules, scenario, instances, initial, subtopologies, partitions, stateless,
            standbys, max_warmups, recovery_lag, events, depth, max_states, aging, boundary_lags, capacities, first_id, start, symmetry, symmetry_seed, por,
            timeout, time_limit,
            trace_dir, dot_path, engine, master, spark_partitions, checkpoint_dir, checkpoint_every, resume_dir,
            as_json, progress, quiet, require_complete):
    """Model-check a rebalance protocol with an assignor (exit 0 ok, 1 violated, 2 bad usage, 130 interrupted)."""
    values = {}
    if scenario is not None:
        values.update(load_scenario(scenario))
    flags = dict(instances=instances, initial=initial, subtopologies=subtopologies, partitions=partitions,
                 stateless=stateless, standbys=standbys, max_warmups=max_warmups, acceptable_recovery_lag=recovery_lag,
                 events=events, depth=depth,
                 max_states=max_states, aging=aging, start=start, capacities=capacities, boundary_lags=boundary_lags,
                 first_id=first_id)
    values.update({k: v for k, v in flags.items() if v is not None})
    protocol_spec = protocol_spec or values.pop("protocol", None) or "cooperative"
    values.pop("protocol", None)
    spec = spec or values.pop("assignor", None) or "ha"
    values.pop("assignor", None)
    if not timeout > 0:
        raise InputError(f"--timeout must be more than 0 seconds, got {timeout:g}")
    proto = parse_protocol(protocol_spec)
    explorer = _engine(engine, master=master, partitions=spark_partitions, checkpoint_dir=checkpoint_dir,
                       checkpoint_every=checkpoint_every, resume_dir=resume_dir)
    with resolve_for_model(spec, timeout=timeout) as resolved:
        values.setdefault("boundary_lags", resolved.default_boundary_lags)
        bounds = Bounds(**{k: v for k, v in values.items() if k in BOUND_FIELDS})
        chosen_rules = resolved.rules if rules is None else (None if rules == "none" else rules)
        symmetry = symmetry or resolved.default_symmetry
        use_symmetry = resolved.symmetry_for(symmetry)
        with ProgressDisplay(force=progress, quiet=quiet, label=f"check {proto.spec}+{resolved.name}") as display:
            try:
                result = check_model(
                    protocol=proto,
                    assignor=resolved.assignor,
                    assignor_name=resolved.name,
                    rules=chosen_rules,
                    bounds=bounds,
                    symmetry=use_symmetry,
                    symmetry_seed=symmetry_seed,
                    progress=display if display.enabled else None,
                    explorer=explorer,
                    budget=budget,
                    por=por == "on",
                )
            except AssignorError as error:  # before any state: the warm start asks the assignor to settle the group
                return _failed_before_exploring(error, trace_dir, as_json)
    written = {}
    if trace_dir is not None:
        for name, trace in result.traces.items():
            path = trace_path(trace_dir, proto.spec, resolved.name, name)
            try:
                write_trace(path, trace)
            except OSError as exc:
                raise InputError(f"cannot write the trace to '{path}': {exc.strerror or exc}; check --trace-dir") from None
            written[name] = str(path)
    if dot_path is not None:
        from rebalproof.traces.dot import write_dot

        shown = next((r.discovery for r in result.violated if r.discovery is not None and r.discovery.kind in ("safety", "lasso")), None)
        write_dot(dot_path, result.exploration, shown)
    code = result.exit_code(require_complete=require_complete)
    if budget.interrupted is not None:
        code = 1 if result.violated else 130
    if as_json:
        report = result.to_json()
        report["interrupted"] = budget.interrupted
        report["traces"] = written
        report["exit_code"] = code
        report["symmetry_mode"] = symmetry
        report["assignor_calls"]["external"] = resolved.external
        report["assignor_calls"]["line"] = result.calls_line(external=resolved.external)
        error = _first_finding(result)
        if error is not None:  # the shape of a finding before any state (_failed_before_exploring)
            from rebalproof.cli.assign_cmd import finding_json

            report["finding"] = finding_json(error)
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return code
    _print_report(result, written, external=resolved.external)
    if budget.interrupted is not None:
        sys.stdout.write(f"interrupted by {budget.interrupted}: a partial report (exit {code})\n")
        sys.stdout.flush()
    return code


def _engine(engine, *, master, partitions, checkpoint_dir, checkpoint_every, resume_dir):
    """The exploration engine: the local explorer, or the Spark one with its options."""
    if engine == "local":
        if master or partitions or checkpoint_dir or checkpoint_every or resume_dir:
            raise InputError("--master, --spark-partitions, --checkpoint-dir, --checkpoint-every and --resume go with --engine spark")
        from rebalproof.model.explorer import explore

        return explore
    if checkpoint_every is not None and checkpoint_every < 1:
        raise InputError(f"--checkpoint-every must be at least 1 level, got {checkpoint_every}")
    if resume_dir is not None and not resume_dir.is_dir():
        raise InputError(f"--resume: '{resume_dir}' is not a checkpoint directory; give the --checkpoint-dir of the run to continue")
    from rebalproof.pipeline.groupbfs import spark_explorer

    return spark_explorer(
        master=master,
        partitions=partitions,
        checkpoint_dir=str(checkpoint_dir) if checkpoint_dir else None,
        checkpoint_every_levels=checkpoint_every,
        resume=str(resume_dir) if resume_dir else None,
    )


def _first_finding(result):
    """The assignor's misbehaviour the ``assignor-answers`` counterexample ends on (None: it answered every rebalance)."""
    return next((r.discovery.error for r in result.results if r.discovery is not None and r.discovery.error is not None), None)


def _failed_before_exploring(error: AssignorError, trace_dir: Path | None, as_json: bool) -> int:
    """The assignor failed while the warm start settled the group, before any state: a finding
    (exit 1), saved under ``--trace-dir`` when given, never a crash."""
    from rebalproof.cli.assign_cmd import finding_json, save_finding

    saved = str(save_finding(error, trace_dir)) if trace_dir is not None else None
    if as_json:
        report = {"finding": finding_json(error), "saved": saved, "complete": False, "exit_code": 1,
                  "bound_hit": "the assignor failed while settling the warm start"}
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("the assignor failed while settling the warm start, before any state was explored "
                         "(try --start cold to explore from an empty group)\n")
        sys.stdout.flush()
        print_finding(error, saved=saved, file=sys.stdout)
    return 1


def _symmetry_words(result) -> str:
    auto = result.symmetry_check
    if auto is None:
        return f"symmetry {'on' if result.symmetry else 'off'}"
    if auto.reduce and auto.status is Status.INCONCLUSIVE:
        return "symmetry auto: on (equivariance not verified on every view before the time limit)"
    if auto.reduce:
        return "symmetry auto: on (equivariance held on every view reached, under every renaming)"
    return f"symmetry auto: off (equivariance {auto.status.value})"


def _por_words(result) -> str:
    """``partial-order reduction on (N expansions by an ample set)`` or ``... off`` (and why, when it switched itself off)."""
    exp = result.exploration
    if not getattr(exp, "por", False):
        return "partial-order reduction off" + (f" ({result.por_off})" if result.por_off else "")
    return f"partial-order reduction on ({exp.reduced:,} expansions by an ample set)"


def _print_report(result, written: dict, *, external: bool = False) -> None:
    exp = result.exploration
    ctx = result.ctx
    out = sys.stdout
    out.write(f"check {ctx.pair} (rules: {ctx.rules or 'none'}), {_symmetry_words(result)}, {_por_words(result)}\n")
    b = ctx.bounds
    out.write(
        f"bounds: {b.instances} instances ({b.initial} initial"
        f"{'' if b.first_id == 1 else f'; ids {b.member_ids[0]} to {b.member_ids[-1]}'}), {b.subtopologies}x{b.partitions} stateful"
        f"{f' + {b.stateless} stateless' if b.stateless else ''} tasks, {b.standbys} standby, "
        f"max {b.max_warmups} warmups, "
        f"{'' if b.acceptable_recovery_lag == Bounds().acceptable_recovery_lag else f'acceptable_recovery_lag {b.acceptable_recovery_lag}, '}"
        f"{b.events} membership events"
        f"{f', depth {b.depth}' if b.depth is not None else ''}{', aging' if b.aging else ''}"
        f"{', boundary lags' if b.boundary_lags else ''}, {b.start} start"
        f"{'' if b.capacities == (1,) else f', capacities {b.describe_capacities()} threads'}\n"
    )
    auto = result.symmetry_check
    if auto is not None:
        out.write(f"equivariance ({auto.calls} assignor calls, seed {auto.seed}): {auto.message}\n")
        if auto.reduce:
            out.write("exploring with symmetry reduction: states that differ by a renaming of instances and partitions are one\n")
        else:
            out.write("exploring without symmetry reduction\n")
    if exp.complete and not exp.errors:
        out.write("exploration complete\n")
    else:
        out.write(f"exploration INCOMPLETE: {exp.bound or 'the assignor failed on some states'}; verdicts without a counterexample are inconclusive\n")
    rows = []
    for r in result.results:
        v = r.verdict
        detail = v.message
        if v.measure:
            detail += " [" + ", ".join(f"{k}={val}" for k, val in v.measure.items()) + "]"
        rows.append([r.property.name, r.property.expectation, v.status.value, detail])
    if auto is not None:
        v = auto.to_verdict()
        rows.append([v.property, "always", v.status.value, v.message])
    out.flush()
    print_table(["property", "expect", "status", "details"], rows)
    for r in result.results:
        trace = result.traces.get(r.property.name)
        if trace is None or r.verdict.status is not Status.VIOLATED:
            continue
        kind = "lasso (prefix + cycle)" if trace["kind"] == "lasso" else plural(len(trace["steps"]) - 1, "step")
        out.write(f'\nDiscovered "{r.property.name}" counterexample, {kind}: {trace.get("message", "")}\n')
        note = warm_start_note(trace)
        out.write("\n".join(([f"  {note}"] if note else []) + _describe_path(trace)) + "\n")
        error = r.discovery.error if r.discovery is not None else None
        if error is not None and error.input_json is not None:  # "the input below": what the leader sent at the last step
            out.write("  input: " + json.dumps(error.input_json, separators=(",", ":")) + "\n")
        if r.property.name in written:
            out.write(f"trace: {written[r.property.name]}\n")
    out.write(f"\n{exp.stats.describe()}\n")
    boundary = result.boundary_line()
    if boundary is not None:
        out.write(boundary + "\n")
    requested = result.requested_line()
    if requested is not None:
        out.write(requested + "\n")
    out.write(summary_line([r.verdict for r in result.results]) + f"; {result.calls_line(external=external)}\n")
    out.flush()
