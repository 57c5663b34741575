"""Time to a proven optimum: rebalproof's default engine vs OR-tools CP-SAT vs a greedy heuristic.

Run: ``python bench/solver.py [--families unequal,leaving] [--sizes 10x50,...] [--seeds 3] [--cap 60]``. OR-tools is a
benchmark-only extra (``pip install -e '.[bench]'``); without it the CP-SAT column says so.

Inputs (deterministic from ``--seed``): N instances x T tasks, 1 standby, ``ha`` rules.
Subtopologies of 10 partitions (70% stateful), a skewed prior assignment over the previous
instances, ~10% new instances with no state, ~5% previous instances gone; the owner of a
stateful task is caught up (lag 0), its standby caught up 70% of the time, other previous
instances hold stale state 20% of the time. Capacities 1.

The cluster families (``--families unequal,leaving``, the default) are :func:`cluster`'s:
capacities 1/2/4, log-normal subtopology sizes, mixed lags, and for ``leaving`` one leaving
member and 2 standbys.

Ours is :func:`rebalproof.solver.optimal` as the CLI runs it: tiny inputs enumerated, then flows
with certificates (pairs no layout in the instance box can use left out), Benders over
per-subtopology boxes where the floors do not meet with equal capacities (a Z3 master), the
box-choice model with unequal capacities or leaving members (LP multipliers re-checked by
arithmetic, layouts by a flow or SCIP; the proof column says which objective took SCIP's word). OR-tools' CP-SAT
module is imported before any clock runs. All three solve the same
lexicographic problem (:mod:`rebalproof.solver.objectives`, ``ha`` hard rules). CP-SAT is
staged (one solve per objective, each fixed at its optimum before the next), on the natural
model with the obvious pruning (actives only on allowed hosts), one worker. "TO" = no proof
within the cap. The greedy column is the objective gap of a sticky greedy (keep each active on
its owner when allowed, else the least loaded allowed host).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rebalproof.model.names import subtopology_of  # noqa: E402
from rebalproof.model.ranking import is_caught_up  # noqa: E402
from rebalproof.model.view import Config, Member, RebalanceInput, Task  # noqa: E402
from rebalproof.solver.objectives import OBJECTIVES, evaluate  # noqa: E402
from rebalproof.solver.optimize import optimal  # noqa: E402
from rebalproof.solver.placement import place_standbys  # noqa: E402
from rebalproof.solver.rules import Facts, violations  # noqa: E402

SIZES = ((3, 6), (10, 50), (20, 200), (50, 500), (100, 1000))


def generate(instances: int, tasks: int, *, seed: int, standbys: int = 1) -> RebalanceInput:
    """A deterministic KIP-441-style view (see the module doc)."""
    rng = random.Random(f"{seed}:{instances}x{tasks}")
    subs = max(2, tasks // 10)
    task_list = []
    stateful_sub = {s: rng.random() < 0.7 for s in range(subs)}
    for i in range(tasks):
        s = i % subs
        task_list.append(Task(id=f"{s}_{i // subs}", stateful=stateful_sub[s]))
    new = max(1 if instances >= 3 else 0, round(instances * 0.10))
    gone = max(1 if instances >= 10 else 0, round(instances * 0.05))
    ids = [f"I{i + 1}" for i in range(instances + gone)]
    previous = ids[: instances - new] + ids[instances:]  # the gone ones were there last round
    present = ids[:instances]
    weight = {m: 1.0 / (1 + k) ** 0.7 for k, m in enumerate(previous)}
    held = {m: {"active": [], "standby": [], "lags": {}} for m in ids}
    for t in task_list:
        owner = rng.choices(previous, weights=[weight[m] for m in previous])[0]
        held[owner]["active"].append(t.id)
        if t.stateful:
            held[owner]["lags"][t.id] = 0
            spare = rng.choice([m for m in previous if m != owner]) if len(previous) > 1 else None
            if spare:
                held[spare]["standby"].append(t.id)
                held[spare]["lags"][t.id] = rng.randint(0, 8000) if rng.random() < 0.7 else rng.randint(20000, 100000)
            for m in previous:
                if m not in (owner, spare) and rng.random() < 0.2:
                    held[m]["lags"][t.id] = rng.randint(50000, 500000)
    members = tuple(Member(id=m, active=tuple(held[m]["active"]), standby=tuple(held[m]["standby"]), lags=held[m]["lags"]) for m in present)
    return RebalanceInput(config=Config(num_standby_replicas=standbys), tasks=tuple(task_list), members=members, previous_members=tuple(previous))


FAMILIES = ("equal", "unequal", "leaving")
"""Benchmark families: ``equal`` (the original generator above), ``unequal`` (capacities 1/2/4,
scale-out), ``leaving`` (unequal, one leaving member, 2 standbys); see :func:`cluster`."""


def cluster(instances: int, tasks: int, *, seed: int, leaving: bool) -> RebalanceInput:
    """A cluster people run: capacities 1/2/4, log-normal subtopology sizes (~30% stateless), mixed lags.

    ~10% of the instances are new (no state). Each stateful task's owner is caught up (lag 0);
    its previous standbys (1, or 2 with ``leaving``) report a lag drawn from four kinds alike:
    caught up (0), within ``acceptable_recovery_lag`` (1..10000), beyond it (20000..500000), or no
    state at all; other previous instances keep stale state 15% of the time. With ``leaving``,
    the previous instance holding the most actives is leaving (KIP-429 "isLeaving") and
    ``num_standby_replicas`` is 2. Deterministic from ``seed``.
    """
    rng = random.Random(f"cluster:{seed}:{instances}x{tasks}:{leaving}")
    sizes, left, s = [], tasks, 0
    while left > 0:
        size = min(left, max(1, round(rng.lognormvariate(math.log(6), 0.9))))
        sizes.append(size)
        left -= size
    task_list = []
    for s, size in enumerate(sizes):
        stateful = rng.random() >= 0.3
        task_list += [Task(id=f"{s}_{p}", stateful=stateful) for p in range(size)]
    ids = [f"I{i + 1}" for i in range(instances)]
    new = max(1, round(instances * 0.10))
    previous = ids[: instances - new]
    caps = {m: rng.choice((1, 2, 4)) for m in ids}
    standbys = 2 if leaving else 1
    weight = {m: caps[m] * rng.uniform(0.3, 1.7) for m in previous}
    held = {m: {"active": [], "standby": [], "lags": {}} for m in ids}
    for t in task_list:
        owner = rng.choices(previous, weights=[weight[m] for m in previous])[0]
        held[owner]["active"].append(t.id)
        if not t.stateful:
            continue
        held[owner]["lags"][t.id] = 0
        others = [m for m in previous if m != owner]
        spares = rng.sample(others, min(standbys, len(others)))
        for spare in spares:
            held[spare]["standby"].append(t.id)
            kind = rng.randrange(4)
            if kind < 3:
                held[spare]["lags"][t.id] = (0, rng.randint(1, 10000), rng.randint(20000, 500000))[kind]
        for m in others:
            if m not in spares and rng.random() < 0.15:
                held[m]["lags"][t.id] = rng.randint(20000, 500000)
    gone = max(previous, key=lambda m: (len(held[m]["active"]), m)) if leaving else None
    members = tuple(
        Member(id=m, capacity=caps[m], leaving=m == gone, active=tuple(held[m]["active"]), standby=tuple(held[m]["standby"]), lags=held[m]["lags"])
        for m in ids
    )
    return RebalanceInput(config=Config(num_standby_replicas=standbys), tasks=tuple(task_list), members=members, previous_members=tuple(previous))


def instance(family: str, instances: int, tasks: int, *, seed: int) -> RebalanceInput:
    """The input of ``family`` at that size and seed."""
    if family == "equal":
        return generate(instances, tasks, seed=seed)
    return cluster(instances, tasks, seed=seed, leaving=family == "leaving")


def greedy(view: RebalanceInput, facts: Facts):
    """Sticky greedy: keep an allowed owner, else the least loaded allowed host; standbys as the solver places them."""
    load = {m: 0 for m in view.member_ids}
    host = {}
    for t in sorted(view.task_ids, key=lambda t: (not view.task(t).stateful, len(facts.active_hosts[t]))):
        options = facts.active_hosts[t]
        owner = facts.owner.get(t)
        m = owner if owner in options else min(options, key=lambda m: (load[m], m))
        host[t] = m
        load[m] += 1
    return place_standbys(view, facts, host)


def cpsat(view: RebalanceInput, facts: Facts, cap: float):
    """Staged CP-SAT on the natural model; (seconds, status, values or None)."""
    from ortools.sat.python import cp_model

    started = time.monotonic()
    model = cp_model.CpModel()
    x, y = {}, {}
    for t in view.task_ids:
        for m in facts.active_hosts[t]:
            x[t, m] = model.NewBoolVar(f"a[{t},{m}]")
        model.AddExactlyOne(x[t, m] for m in facts.active_hosts[t])
        if view.task(t).stateful and facts.required:
            for m in facts.eligible[t]:
                y[t, m] = model.NewBoolVar(f"s[{t},{m}]")
                if (t, m) in x:
                    model.AddBoolOr([x[t, m].Not(), y[t, m].Not()])
            model.Add(sum(y[t, m] for m in facts.eligible[t]) == facts.required)
    staying = facts.staying
    n = len(view.tasks)
    caps = {m: view.member(m).capacity for m in staying}
    d = math.lcm(*set(caps.values())) if caps else 1

    def spread_of(tasks, tag):
        """The objectives' imbalance by capacity: least K with a level p/D, D*n_m <= p*c_m <= D*(n_m + K)."""
        level, k = model.NewIntVar(0, d * n, f"p{tag}"), model.NewIntVar(0, n, f"k{tag}")
        for m in staying:
            count = sum(x[t, m] for t in tasks if (t, m) in x)
            model.Add(d * count <= level * caps[m])
            model.Add(level * caps[m] <= d * (count + k))
        return k

    subs: dict[str, list] = {}
    for t in view.task_ids:
        subs.setdefault(subtopology_of(t), []).append(t)
    objectives = {
        "imbalance": spread_of(view.task_ids, "all"),
        "spread": sum(spread_of(ts, s) for s, ts in subs.items()),
        "moves": sum(1 - x[t, o] if (t, o) in x else 1 for t, o in facts.owner.items()),
        "restore": sum(v for (t, m), v in x.items() if view.task(t).stateful and not is_caught_up(view, m, t))
        + sum(v for (t, m), v in y.items() if not is_caught_up(view, m, t)),
    }
    values = {}
    for name in ("imbalance", "spread", "moves", "restore"):
        left = cap - (time.monotonic() - started)
        if left <= 0:
            return time.monotonic() - started, "TO", None
        model.Minimize(objectives[name])
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = left
        solver.parameters.num_workers = 1
        status = solver.Solve(model)
        if status != cp_model.OPTIMAL:
            return time.monotonic() - started, "TO", None
        values[name] = round(solver.ObjectiveValue())
        model.Add(objectives[name] == values[name])
    values["warmups"] = 0
    return time.monotonic() - started, "optimal", values


def _methods(result) -> str:
    """How spread and moves were bounded (``lp-dual``, ``option-lp``, ``lp-tree`` and ``flow-*`` are checked by rebalproof; ``scip`` and ``benders`` take a solver's word)."""
    return ", ".join(result.bound(n).method for n in ("spread", "moves"))


def _most(seconds) -> str:
    seconds = list(seconds)
    return f"{max(seconds):.1f}" if seconds else "-"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", default="unequal,leaving", help=f"comma-separated, of {', '.join(FAMILIES)}")
    parser.add_argument("--sizes", default="10x50,20x200,50x500,100x1000")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per family and size (441, 442, ...)")
    parser.add_argument("--cap", type=float, default=60.0, help="seconds per solver per instance")
    parser.add_argument("--seed", type=int, default=441)
    parser.add_argument("--no-cpsat", action="store_true", help="skip the CP-SAT column")
    args = parser.parse_args(argv)
    try:
        from ortools.sat.python import cp_model  # noqa: F401  (imported once, before any clock runs: it loads pandas, ~1 s)

        have_cpsat = not args.no_cpsat
    except ImportError:
        have_cpsat = False
    from rebalproof.model.codec import encode_assignment, encode_input
    from rebalproof.oracle import check

    print("family | size | seed | ours s | ours status | spread (value / bound) | moves (value / bound) | proof (spread, moves) | oracle | CP-SAT s | CP-SAT status | agree", flush=True)
    summary = []
    for family in args.families.split(","):
        for size in args.sizes.split(","):
            n, t = (int(v) for v in size.split("x"))
            rows = []
            for seed in range(args.seed, args.seed + args.seeds):
                view = instance(family, n, t, seed=seed)
                facts = Facts(view, "ha")
                started = time.monotonic()
                ours = optimal(view, "ha", timeout=args.cap)
                ours_s = time.monotonic() - started
                ok = ours.assignment is not None and check(encode_input(view), encode_assignment(ours.assignment), rules="ha").ok
                if have_cpsat:
                    cp_s, cp_status, cp_values = cpsat(view, facts, args.cap)
                else:
                    cp_s, cp_status, cp_values = float("nan"), "skipped", None
                agree = "-" if cp_values is None or ours.status != "optimal" else ("yes" if cp_values == ours.values else f"NO {cp_values}")
                spread, moves = ours.bound("spread"), ours.bound("moves")
                rows.append((ours, ours_s, ok, cp_s, cp_status, agree))
                print(" | ".join((family, size, str(seed), f"{ours_s:.1f}", ours.status, f"{spread.value} / {spread.lower}", f"{moves.value} / {moves.lower}", _methods(ours), "accepted" if ok else "REJECTED",
                                  f"{cp_s:.1f}", cp_status, agree)), flush=True)
            summary.append((family, size, rows))
    print()
    print("| family | size | rebalproof proven | of which SCIP's word | max s (proven) | INCONCLUSIVE spread gap | oracle | CP-SAT proven | CP-SAT max s | agree |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for family, size, rows in summary:
        proven = [r for r in rows if r[0].status == "optimal"]
        cp = [r for r in rows if r[4] == "optimal"]
        gaps = [f"{r[0].bound('spread').value} vs {r[0].bound('spread').lower}" for r in rows if r[0].status != "optimal"]
        agree = "yes" if all(r[5] in ("yes", "-") for r in rows) else "NO"
        word = sum(1 for r in proven if "scip" in _methods(r[0]))
        print(f"| {family} | {size} | {len(proven)}/{len(rows)} | {word} | {_most(r[1] for r in proven)} | {', '.join(gaps) or '-'} | "
              f"{sum(r[2] for r in rows)}/{len(rows)} accepted | {len(cp)}/{len(rows)} | {_most(r[3] for r in cp)} | {agree} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
