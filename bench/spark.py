"""Benchmark of ``check --engine spark`` against the local engine, in one run (#11 item 5).

Runs the same ``rebalproof check`` command three times, each in a fresh process: ``--engine
local``, ``--engine spark --master local[1]`` and ``--engine spark --master local[2]``, and prints
for each the whole command's wall time, the exploration's, the CPU time of the whole process
tree (driver, Spark's JVM, its Python workers: the figure to compare on a shared machine), the
driver's peak RSS (the Python process that builds the result) when the exploration returns and
at the end of the command (the analysis of the graph comes after exploring), and the JVM's, with the ratios
within this run: Spark against local, ``local[2]`` against ``local[1]``, and #11's targets
(``local[2]`` at least 1.6x faster than ``local[1]``, within 1.5x of the local engine's wall
time). For the Spark runs, where the exploration's time went: CPU inside the tasks, wall time
waiting for Spark's jobs, merging levels in the driver, small levels expanded in the driver,
asking the visited set (once partitioned on Spark, one job a level), and from which level the
visited set was partitioned on Spark.
The three reports must be identical (statistics but timings, every property's verdict and
trace); the machine's load average is printed before and after, since other jobs inflate wall
times.

Run: ``.venv/bin/python bench/spark.py [check options]`` (default: the 1,429,939-state learner
model of tests/manifest.toml, ``--protocol learner:partial_rebalance=true --assignor learner
--events 3 --por off``, about 3 minutes of CPU per engine; ``--small`` for the 96,752-state
cooperative+ha one); ``--json FILE`` also writes the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

#: The default model: a million states and more (#11 judges Spark there, where fixed costs amortise).
DEFAULT_CHECK = ["--protocol", "learner:partial_rebalance=true", "--assignor", "learner", "--events", "3", "--por", "off"]
#: ``--small``: cooperative + ha, 4 instances (3 at the start), 2 events (96,752 states without symmetry).
SMALL_CHECK = ["--instances", "4", "--initial", "3", "--events", "2", "--symmetry", "off"]
ENGINES = (("local", []), ("spark local[1]", ["--engine", "spark", "--master", "local[1]"]),
           ("spark local[2]", ["--engine", "spark", "--master", "local[2]"]))


def _tree_cpu(root: int) -> float:
    """CPU seconds (user + system) of the live descendants of ``root`` (from /proc)."""
    children: dict[int, list[int]] = {}
    stats: dict[int, tuple[float, float]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        stats[pid] = (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    total, todo = 0.0, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        total += stats.get(pid, 0.0)
        todo.extend(children.get(pid, []))
    return total


def _peak_rss_of(pid: int) -> int:
    """VmHWM (peak resident set) of a live process, bytes; 0 if unknown."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def child(argv: list[str]) -> None:
    """One engine's run in this process; prints one JSON line of figures."""
    from rebalproof.cli.main import main
    from rebalproof.model import explorer
    from rebalproof.pipeline import groupbfs

    spark_stats = {}
    exploring = {}
    explore_spark, explore_local = groupbfs.explore_spark, explorer.explore

    def recorded(*args, **kwargs):  # the Spark run's own figures (not part of the report)
        exp = explore_spark(*args, **kwargs)
        spark_stats.update(exp.spark_stats)
        exploring["peak_rss"] = _peak_rss_of(os.getpid())
        return exp

    def recorded_local(*args, **kwargs):
        exp = explore_local(*args, **kwargs)
        exploring["peak_rss"] = _peak_rss_of(os.getpid())
        return exp

    groupbfs.explore_spark, explorer.explore = recorded, recorded_local
    started = time.perf_counter()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", *argv, "--json"])
    wall = time.perf_counter() - started
    own = resource.getrusage(resource.RUSAGE_SELF)
    figures = {"code": code, "wall": wall, "driver_cpu": own.ru_utime + own.ru_stime,
               "driver_peak_rss": own.ru_maxrss * 1024, "jvm_peak_rss": 0, "children_cpu": _tree_cpu(os.getpid())}
    from rebalproof.pipeline.session import active_session

    spark = active_session()
    if spark is not None:
        figures["jvm_peak_rss"] = _peak_rss_of(spark.sparkContext._gateway.proc.pid)
    figures["spark"] = spark_stats
    figures["explore_peak_rss"] = exploring.get("peak_rss", 0)  # the driver's peak when the exploration returned
    figures["report"] = json.loads(out.getvalue())
    sys.__stdout__.write(json.dumps(figures) + "\n")


def _comparable(report: dict) -> dict:
    """The report without what may differ between engines and runs (timings, memory, engine)."""
    out = dict(report)
    stats = dict(out.pop("statistics", {}))
    for key in ("seconds", "states_per_second", "peak_rss_bytes", "bytes_per_state", "assignor_calls"):
        stats.pop(key, None)  # costs, not results (each Spark worker has its own assignor memo)
    out["statistics"] = stats
    for key in ("assignor_calls",):
        out.pop(key, None)
    return out


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    parser.add_argument("--small", action="store_true", help="the 96,752-state model instead of the million-state one")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args, check = parser.parse_known_args(argv)
    if check[:1] == ["--"]:
        check = check[1:]
    if args.child:
        child(check)
        return 0
    check = check or (SMALL_CHECK if args.small else DEFAULT_CHECK)
    print(f"check {' '.join(check)}: each engine in a fresh process; load average before: {_load()}")
    rows = []
    for label, engine in ENGINES:
        done = subprocess.run([sys.executable, __file__, "--child", "--", *check, *engine],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            print(f"{label}: the run failed (exit {done.returncode})")
            return 1
        figures = json.loads(lines[-1])
        figures["label"] = label
        rows.append(figures)
    base, one = rows[0], rows[1]
    same = all(_comparable(r["report"]) == _comparable(base["report"]) for r in rows[1:])
    states = base["report"]["statistics"]["distinct_states"]
    print(f"{'engine':<15} {'states':>10} {'explore s':>9} {'command s':>9} {'CPU s':>7} {'explore RSS':>11} {'driver RSS':>10} "
          f"{'JVM RSS':>8} {'vs local':>8} {'vs local[1]':>11}")
    for r in rows:
        stats = r["report"]["statistics"]
        cpu = r["driver_cpu"] + r["children_cpu"]
        print(f"{r['label']:<15} {stats['distinct_states']:>10,} {stats['seconds']:>9.1f} {r['wall']:>9.1f} {cpu:>7.1f} "
              f"{r['explore_peak_rss'] / 2**20:>7.0f} MiB {r['driver_peak_rss'] / 2**20:>6.0f} MiB {r['jvm_peak_rss'] / 2**20:>4.0f} MiB "
              f"{r['wall'] / base['wall']:>7.2f}x {one['wall'] / r['wall'] if r is not base else float('nan'):>10.2f}x")
    for r in rows[1:]:
        sp = r["spark"]
        print(f"{r['label']}: tasks {sp['task_seconds']:.1f} s CPU in {sp['partitions']} partitions, waiting for Spark jobs "
              f"{sp['job_seconds']:.1f} s, merging levels in the driver {sp['merge_seconds']:.1f} s, small levels in the driver "
              f"{sp['driver_seconds']:.1f} s, asking the visited set {sp['resolve_seconds']:.1f} s; levels {sp['spark_levels']} on "
              f"Spark, {sp['driver_levels']} in the driver; visited set "
              + (f"partitioned on Spark from level {sp['visited_partitioned_at']}" if sp.get("visited_partitioned_at") is not None
                 else "in the driver throughout"))
    two = rows[2]
    print(f"#11 targets: local[2] {one['wall'] / two['wall']:.2f}x faster than local[1] (target 1.6x): "
          f"{'met' if one['wall'] / two['wall'] >= 1.6 else 'NOT met'}; local[2] at {two['wall'] / base['wall']:.2f}x the local "
          f"engine's wall time (target 1.5x): {'met' if two['wall'] / base['wall'] <= 1.5 else 'NOT met'}")
    print(f"identical reports (states, edges, depth, every verdict and trace): {same}; exit {base['code']}; "
          f"driver peak RSS per state: local {base['driver_peak_rss'] / states:,.0f} B, "
          f"spark local[2] {rows[2]['driver_peak_rss'] / states:,.0f} B; load average after: {_load()}")
    if args.json is not None:
        for r in rows:
            r.pop("report")
        args.json.write_text(json.dumps({"check": check, "states": states, "identical": same, "runs": rows}, indent=2) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
