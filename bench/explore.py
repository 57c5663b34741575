"""Explorer benchmark: throughput, memory per state, symmetry reduction, and BFS against random simulation.

Run: ``python bench/explore.py [--runs 2000] [--seed 429] [--only scale|check|por]``. Everything is
measured in the same run, on this machine, and printed with ratios:

0. **Scale (#11)**: ``rebalproof check --partitions 3`` (cooperative + ``ha``, 127,852 states
   with partial-order reduction) as a whole command -- wall time and peak RSS of the process
   (``os.wait4``), against the same command on the previous core in the same run
   (``bench/baseline_core.py``: networkx flows and liveness graphs, Fraction quota boxes,
   fingerprints joined on every call, a dict as the visited set, every distinct view judged, the
   BFS queue of state objects, ``ha`` asked about every distinct view),
   with equal verdicts checked; and the explorer alone with a memoised trivial assignor (round-robin,
   4 instances, 2x3 tasks, 2 events, first 200,000 states; and 5 instances, first 1,000,000
   states, for the memory of a million-state run), current and previous core: distinct states
   per CPU second and per wall second, bytes per stored state, whole-process peak RSS (bytes per
   state: the process's maximum over the states); and a model of 1,033,724 states (5 instances,
   2x3 stateful and 2 stateless tasks, 2 events, no ageing) explored completely by the explorer
   alone, without and with partial-order reduction: exploring time, CPU, peak RSS, the reduction.
   CPU seconds (``os.wait4``, the helper processes on the second core included) are printed
   beside wall time: on a shared machine they are the figure to compare.

1. **Throughput and memory**: ``cooperative`` + ``ha`` at the default bounds (3 instances,
   2x2 tasks, 1 standby, 2 membership events): distinct states/s and bytes per stored state
   (fingerprint dict, parent links and edge arrays), peak RSS.
2. **Symmetry reduction**: the same model (``cooperative`` + ``balanced-choices``, an
   equivariant nondeterministic assignor, cold start, 4 instances, 3 tasks) explored with and
   without reduction by renaming instances and partitions: distinct states, time, ratio.
3. **Time to the first counterexample**, BFS (stopping at the first violation of the property)
   against a random-simulation baseline in the style of Kafka's convergence test (random
   membership events, then the group runs; ``N`` runs from the seed, each a random walk of at
   most 60 steps, at most 60 s in all; non-convergence is declared as that test does, when a
   run exceeds an iteration limit of rebalances, here 20, without settling). Targets: the
   broken cooperative hand-over (``single-owner``) with round-robin and with ``ha`` (where a
   move needs a warmup, its restore and a probing rebalance first) and the naive learner's
   endless shuffling (``converges``). The baseline reports how many runs it needed (or that it found nothing in
   ``N``), BFS the length of its (shortest) counterexample.
4. **Partial-order reduction (#11 item 2)**: every row of tests/manifest.toml (rows marked slow
   and rows of more than ``--por-up-to`` states left out unless asked) explored with and without
   POR in the same run: distinct states, CPU seconds, the ratio of states, and whether every
   verdict and every counterexample kind is the same. ``--only por`` runs this part alone;
   ``--por-rows NAME,...`` picks rows by name (slow ones included), e.g. the partitions-3 tier.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rebalproof.model.assignors import builtin  # noqa: E402
from rebalproof.model.group_bounds import Bounds  # noqa: E402
from rebalproof.model.group_model import GroupModel  # noqa: E402
from rebalproof.model.group_protocol import protocol  # noqa: E402
from rebalproof.model.group_state import MEMBERSHIP_KINDS, is_quiescent  # noqa: E402
from rebalproof.model.toy_assignors import BalancedChoices, NaiveLearner, RoundRobin  # noqa: E402
from rebalproof.properties.run import RUN_PROPERTIES  # noqa: E402
from rebalproof.properties.run_check import check_model  # noqa: E402


HERE = Path(__file__).resolve().parent


def _timed_command(argv: list[str], *, err: list | None = None) -> tuple[float, float, int, str, int]:
    """(wall seconds, CPU seconds, peak RSS bytes, stdout, exit code) of one command in a child process
    (its stderr appended to ``err`` when given, else dropped).

    CPU seconds (user + system, from ``os.wait4``) are what to compare on a shared machine:
    wall time grows with the other processes' load, CPU time much less.
    """
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL if err is None else subprocess.PIPE, text=True)
    out = proc.stdout.read()
    if err is not None:
        err.append(proc.stderr.read())
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return time.perf_counter() - started, cpu, usage.ru_maxrss * 1024, out, proc.returncode


def _verdicts(out: str) -> list[str]:
    """The report without its timing line (what must be equal between the two cores)."""
    return [line for line in out.splitlines() if "distinct states," not in line and "collision probability" not in line]


_ALONE = """
import json
import sys
from rebalproof.model.explorer import Limits, explore
from rebalproof.model.group_bounds import Bounds
from rebalproof.model.group_model import GroupModel
from rebalproof.model.group_protocol import protocol
from rebalproof.model.toy_assignors import RoundRobin
if sys.argv[1] == "previous":
    sys.path.insert(0, sys.argv[2])
    import baseline_core
    baseline_core.install()
bounds, limit, por = json.loads(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "por"
model = GroupModel(protocol=protocol("cooperative"), bounds=Bounds(**bounds), assignor=RoundRobin(), assignor_name="round-robin")
exp = explore(model, limits=Limits(max_states=limit or None), por=por)
st = exp.stats
print(st.states, st.seconds, st.bytes_per_state, st.assignor_calls, int(exp.complete))
"""

#: ``rebalproof`` in this interpreter, its own CPU seconds (without its helpers') on stderr last.
_OWN_CPU = (
    "import resource, sys\n"
    "from rebalproof.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "own = resource.getrusage(resource.RUSAGE_SELF)\n"
    "sys.stderr.write(f'own-cpu {own.ru_utime + own.ru_stime}\\n')\n"
    "sys.exit(code)\n"
)

#: The explorer-alone runs against the previous core: (title, bounds, states explored).
_ALONE_RUNS = (
    ("4 instances (3 initial), 2x3 tasks, 2 events, first 200,000 states", dict(instances=4, initial=3, partitions=3, events=2), 200_000),
    ("5 instances (4 initial), 2x3 tasks, 2 events, first 1,000,000 states (the model has more than 1,600,000)",
     dict(instances=5, initial=4, partitions=3, events=2), 1_000_000),
)
#: A model of more than a million states explored completely (#11: "at least 1,000,000 distinct
#: states (with POR off) explored completely in at most 60 s and 1 GiB; with POR on, the reduction
#: factor printed"): the explorer alone, round-robin, without and with partial-order reduction.
_COMPLETE = ("5 instances (4 initial), 2x3 stateful and 2 stateless tasks, 2 events, no ageing of unhosted state",
             dict(instances=5, initial=4, partitions=3, stateless=2, events=2, aging=False))


def scale() -> None:
    scale_check()
    scale_alone()


def scale_check() -> None:
    """``check --partitions 3`` as a whole command, current and previous core (``--only check``)."""
    print("0. scale (#11): check --partitions 3 (cooperative + ha) as a whole command, current core vs the previous one")
    print(f"   load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    command = ["check", "--partitions", "3", "--quiet"]
    rebalproof = [sys.executable, "-c", _OWN_CPU]
    err: list = []
    now_s, now_cpu, now_rss, now_out, now_code = _timed_command(rebalproof + command, err=err)
    own_cpu = float(err[0].split("own-cpu ")[-1].split()[0])
    old_s, old_cpu, old_rss, old_out, old_code = _timed_command([sys.executable, str(HERE / "baseline_core.py")] + command[:-1])
    same = _verdicts(now_out) == _verdicts(old_out) and now_code == old_code
    print(f"   current: {now_s:.1f}s wall, {now_cpu:.1f}s CPU, peak RSS {now_rss / 2**20:.0f} MiB; "
          f"previous core: {old_s:.1f}s wall, {old_cpu:.1f}s CPU, peak RSS {old_rss / 2**20:.0f} MiB")
    print(f"   ratio: {old_cpu / now_cpu:.1f}x less CPU, {old_s / now_s:.1f}x less wall time, {old_rss / now_rss:.1f}x less memory; "
          f"same report: {same} (exit {now_code})")
    for line in now_out.splitlines():
        if "distinct states," in line:
            print(f"   current report: {line}")
    print(f"   the checking process alone: {own_cpu:.1f}s CPU, its helpers on the second core {now_cpu - own_cpu:.1f}s: "
          f"with both cores free the wall time is about the larger (plus waits)")
    met = now_s <= 6.0 and now_rss <= 200e6
    print(f"   #11 target (whole command at most 6 s wall and 200 MB): {'met' if met else 'NOT met'} "
          f"({now_s:.1f}s, {now_rss / 1e6:.0f} MB; CPU counts the helper processes on the second core too)")
    print(f"   load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


def scale_alone() -> None:
    """The explorer alone: throughput and memory, current and previous core, and a complete
    million-state model with and without partial-order reduction."""
    for title, bounds, limit in _ALONE_RUNS:
        print(f"   explorer alone, memoised trivial assignor (round-robin), {title}")
        for which in ("current", "previous"):
            states, seconds, cpu, rss, per_state, calls, _ = _alone(which, bounds, limit)
            print(f"   {which}: {states:,} distinct states, {states / cpu:,.0f} distinct states per CPU second "
                  f"({states / seconds:,.0f} per wall second), {per_state:.0f} bytes per stored state, "
                  f"peak RSS {rss / 2**20:.0f} MiB ({rss / states:,.0f} bytes per state, whole process), {calls:,} assignor calls")
    title, bounds = _COMPLETE
    print(f"   explored completely, explorer alone, memoised trivial assignor (round-robin), {title}")
    runs = {}
    for por in (False, True):
        states, seconds, cpu, rss, per_state, calls, complete = runs[por] = _alone("current", bounds, 0, por=por)
        print(f"   POR {'on' if por else 'off'}: {states:,} distinct states, complete: {complete}, {seconds:.1f}s exploring "
              f"({cpu:.1f}s CPU of the whole process), peak RSS {rss / 2**20:.0f} MiB, {calls:,} assignor calls")
    print(f"   partial-order reduction: {runs[False][0] / runs[True][0]:.2f}x fewer states, "
          f"{runs[False][1] / runs[True][1]:.2f}x less exploring time")


def _alone(which: str, bounds: dict, limit: int, *, por: bool = False):
    """(states, exploring seconds, CPU seconds, peak RSS bytes, bytes per stored state, assignor
    calls, complete) of the explorer alone on ``bounds`` in a fresh process (``limit`` 0: no limit)."""
    argv = [sys.executable, "-c", _ALONE, which, str(HERE), json.dumps(bounds), str(limit), "por" if por else "full"]
    _, cpu, rss, out, code = _timed_command(argv)
    if code != 0:
        raise SystemExit(f"the explorer-alone run on {bounds} exited {code}")
    states, seconds, per_state, calls, complete = out.split()
    return int(states), float(seconds), cpu, rss, float(per_state), int(calls), complete == "1"


def throughput() -> None:
    print("1. throughput and memory: cooperative + ha, default bounds")
    result = check_model(protocol=protocol("cooperative"), assignor=builtin("ha").make(), assignor_name="ha", rules="ha", bounds=Bounds())
    st = result.exploration.stats
    print(f"   {st.describe()}")
    print(f"   exploration alone: {st.states_per_second:,.0f} distinct states/s, {st.bytes_per_state:.0f} bytes per stored state")


def symmetry() -> None:
    print("2. symmetry reduction: cooperative + balanced-choices (equivariant), cold start, 4 instances (3 initial), 1x3 tasks, 1 event")
    bounds = Bounds(instances=4, initial=3, subtopologies=1, partitions=3, standbys=0, events=1, start="cold")
    rows = []
    for sym in (False, True):
        t0 = time.perf_counter()
        r = check_model(protocol=protocol("cooperative"), assignor=BalancedChoices(), assignor_name="balanced-choices", bounds=bounds, symmetry=sym)
        rows.append((sym, r.exploration.states, time.perf_counter() - t0, [x.verdict.status for x in r.results]))
    (_, n0, t0, v0), (_, n1, t1, v1) = rows
    print(f"   without: {n0} states in {t0:.2f}s; with: {n1} states in {t1:.2f}s; "
          f"reduction {n0 / n1:.1f}x states, {t0 / t1:.1f}x time; same verdicts: {v0 == v1}")


def _bfs_first(proto, assignor, bounds, prop: str):
    props = tuple(p for p in RUN_PROPERTIES if p.name == prop)
    t0 = time.perf_counter()
    r = check_model(protocol=proto, assignor=assignor, assignor_name="x", bounds=bounds, properties=props, stop_early=prop == "single-owner")
    seconds = time.perf_counter() - t0
    trace = r.traces.get(prop)
    steps = None if trace is None else len(trace["steps"]) - 1
    return seconds, r.status(prop).value, steps, r.exploration.states


def _random_runs(model: GroupModel, prop: str, runs: int, seed: int, max_steps: int = 60, iteration_limit: int = 20,
                 max_seconds: float = 60.0):
    """Kafka-convergence-test style: random events, random interleavings; first run that shows ``prop`` failing."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    for run in range(1, runs + 1):
        if time.perf_counter() - t0 > max_seconds:
            return None, time.perf_counter() - t0
        state = model.init_states()[0]
        rebalances = 0
        for step in range(1, max_steps + 1):
            actions = model.actions(state)
            if not actions:
                break
            membership = [a for a in actions if a.kind in MEMBERSHIP_KINDS]
            internal = [a for a in actions if a.kind not in MEMBERSHIP_KINDS]
            pool = membership if membership and rng.random() < 0.2 else (internal or membership)
            action = rng.choice(pool)
            state = model.next_state(state, action)
            if action.kind == "rebalance":
                rebalances += 1
            if prop == "single-owner":
                owned = [t for m in state.members for t in m.active]
                if len(owned) != len(set(owned)):
                    return (run, step), time.perf_counter() - t0
            elif prop == "converges":
                if rebalances > iteration_limit and not is_quiescent(state):
                    return (run, step), time.perf_counter() - t0
                if is_quiescent(state) and not any(a.kind not in MEMBERSHIP_KINDS for a in actions):
                    break
    return None, time.perf_counter() - t0


def first_counterexample(runs: int, seed: int) -> None:
    print(f"3. time to the first counterexample: BFS vs random simulation ({runs} runs max, seed {seed})")
    cases = [
        ("broken cooperative hand-over + round-robin", "single-owner", protocol("cooperative", early_handover=True), RoundRobin(),
         Bounds(instances=4, initial=2, subtopologies=2, partitions=2, standbys=1, events=2)),
        ("broken cooperative hand-over + ha", "single-owner", protocol("cooperative", early_handover=True), builtin("ha").make(),
         Bounds()),
        ("naive learner shuffling", "converges", protocol("learner"), NaiveLearner(learners_to="any"),
         Bounds(instances=3, initial=2, subtopologies=1, partitions=2, standbys=1, events=2)),
    ]
    for title, prop, proto, assignor, bounds in cases:
        bfs_s, status, steps, states = _bfs_first(proto, assignor, bounds, prop)
        model = GroupModel(protocol=proto, bounds=bounds, assignor=assignor)
        run, sim_s = _random_runs(model, prop, runs, seed)
        found = f"found in run {run[0]} (at step {run[1]}) after {sim_s:.2f}s" if run else f"nothing in {runs} runs ({sim_s:.2f}s)"
        ratio = f"{sim_s / bfs_s:.1f}x" if run else f">{sim_s / bfs_s:.1f}x (not found)"
        print(f"   {title} ({prop}): BFS {status} in {bfs_s:.2f}s ({states} states, counterexample {steps} steps); "
              f"random simulation {found}; simulation/BFS time {ratio}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=429)
    parser.add_argument("--only", choices=["scale", "check", "por"], default=None,
                        help="run only this part (check: the whole-command figure of part 0 alone)")
    parser.add_argument("--por-up-to", type=int, default=50_000, metavar="STATES",
                        help="POR part: manifest rows of at most this many states (without POR)")
    parser.add_argument("--por-rows", default=None, metavar="NAME,...", help="POR part: these manifest rows only")
    args = parser.parse_args(argv)
    if args.only == "por":
        partial_order(args.por_up_to, args.por_rows)
        return 0
    if args.only == "check":
        scale_check()
        return 0
    scale()
    if args.only == "scale":
        return 0
    throughput()
    symmetry()
    first_counterexample(args.runs, args.seed)
    partial_order(args.por_up_to, args.por_rows)
    return 0


def partial_order(up_to: int, names: str | None) -> None:
    """States with and without partial-order reduction for the manifest rows, measured in this run."""
    import resource
    import tomllib

    sys.path.insert(0, str(HERE.parent / "tests"))
    from test_manifest import run_row  # the manifest's own runner: the row's protocol, assignor, bounds, rules

    rows = tomllib.loads((HERE.parent / "tests" / "manifest.toml").read_text())["model"]
    if names:
        wanted = set(names.split(","))
        rows = [r for r in rows if r["name"] in wanted]
    else:
        rows = [r for r in rows if not r.get("slow") and r["states"] <= up_to]
    print(f"4. partial-order reduction: {len(rows)} manifest rows with and without POR (CPU seconds of this process)")
    total = {True: 0, False: 0}
    for row in rows:
        got = {}
        for por in (False, True):
            cpu = resource.getrusage(resource.RUSAGE_SELF)
            result, _ = run_row(row, por=por)
            after = resource.getrusage(resource.RUSAGE_SELF)
            seconds = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
            verdicts = {r.property.name: r.verdict.status.value for r in result.results}
            kinds = {n: t["kind"] for n, t in result.traces.items()}
            got[por] = (result.exploration.states, seconds, verdicts, kinds, result.exploration.reduced)
            total[por] += result.exploration.states
        (n0, s0, v0, k0, _), (n1, s1, v1, k1, red) = got[False], got[True]
        same = "same verdicts" if (v0, k0) == (v1, k1) else "VERDICTS DIFFER"
        print(f"   {row['name']}: {n0:,} -> {n1:,} states ({n0 / n1:.2f}x, {red:,} ample expansions), "
              f"{s0:.1f}s -> {s1:.1f}s CPU, {same}")
    if rows:
        print(f"   all rows: {total[False]:,} -> {total[True]:,} states ({total[False] / total[True]:.2f}x)")


if __name__ == "__main__":
    sys.exit(main())
