"""Benchmark of the Spark exploration engines against the in-process ones, in one run.

Prints, for the same models:

- states/s of the local engine (the group model's explorer, and the toy reference BFS) and of
  the Spark engine on ``local[1]`` and ``local[2]`` (every level on Spark, and the default
  hybrid that expands small levels in the driver), with ratios to the local engine;
- Spark's fixed cost per BFS level, measured on a chain (one state per level);
- the size of a checkpoint of the group model's exploration.

Run it on an otherwise idle machine: ``.venv/bin/python bench/spark.py`` (``--json FILE`` also
writes the figures). Figures are context, not targets (SPARK-NOTES.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path


def _timed(fn):
    started = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - started


def _group_model(events: int):
    from rebalproof.model.assignors import builtin
    from rebalproof.model.group_bounds import Bounds
    from rebalproof.model.group_model import GroupModel
    from rebalproof.model.group_protocol import protocol
    from rebalproof.properties.run import RunContext

    info = builtin("learner")
    bounds = Bounds(instances=3, initial=2, events=events)
    model = GroupModel(protocol=protocol("learner"), bounds=bounds, assignor=info.make(), assignor_name="learner")
    return model, RunContext(protocol=model.protocol, rules=info.rules, bounds=bounds, assignor="learner")


def _fresh(model):
    """The same model without the assignor memo a previous run filled (a fair comparison)."""
    import pickle

    return pickle.loads(pickle.dumps(model))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2, help="membership events of the group model (2: ~20k states)")
    parser.add_argument("--chain", type=int, default=60, help="levels of the chain that measures the fixed cost per level")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)

    from rebalproof.model.explorer import explore
    from rebalproof.pipeline.bfs import Checkpointing, explore_distributed
    from rebalproof.pipeline.groupbfs import explore_spark
    from rebalproof.pipeline.session import spark_session, stop_session
    from rebalproof.pipeline.space import explore_reference
    from rebalproof.pipeline.toymodels import Chain, Counters
    from rebalproof.properties.run import RunMonitor

    figures: dict = {}
    rows: list[tuple[str, str, int, float]] = []

    model, ctx = _group_model(args.events)
    local, seconds = _timed(lambda: explore(_fresh(model), monitor=RunMonitor(ctx, model)))
    rows.append(("group model", "local explorer", local.states, seconds))
    toy = Counters()
    reference, toy_seconds = _timed(lambda: explore_reference(toy))
    rows.append(("toy counters", "in-process reference", reference.states, toy_seconds))
    chain = Chain(length=args.chain)

    for master in ("local[1]", "local[2]"):
        stop_session()
        spark = spark_session(master=master)
        spark.sparkContext.parallelize(range(8), 2).map(lambda x: x).collect()  # warm the workers
        explore_distributed(Chain(length=5), spark=spark)  # and the job path
        for label, below in (("every level on Spark", 0), ("hybrid (small levels in driver)", 1000)):
            fresh = _fresh(model)
            result, seconds = _timed(lambda: explore_spark(fresh, monitor=RunMonitor(ctx, fresh), spark=spark, local_below=below))
            assert result.states == local.states and result.parent == local.parent, "the engines disagree"
            rows.append(("group model", f"spark {master}, {label}", result.states, seconds))
        result, seconds = _timed(lambda: explore_distributed(toy, spark=spark))
        assert result == reference, "the engines disagree"
        rows.append(("toy counters", f"spark {master}", result.states, seconds))
        result, seconds = _timed(lambda: explore_distributed(chain, spark=spark, partitions=1))
        per_level = seconds / (args.chain + 1)
        figures[f"fixed_cost_per_level_{master}"] = per_level
        if master == "local[2]":  # the size of a checkpoint holding (nearly) the whole exploration
            with tempfile.TemporaryDirectory() as directory:
                fresh = _fresh(model)
                explore_spark(fresh, monitor=RunMonitor(ctx, fresh), spark=spark, local_below=0,
                              checkpoint=Checkpointing(directory=directory, every_levels=1, every_seconds=None))
                figures["checkpoint_bytes"] = sum(p.stat().st_size for p in Path(directory).rglob("*") if p.is_file())
                figures["checkpoint_states"] = local.states
                figures["checkpoint_edges"] = len(local.edge_src)
    stop_session()

    base = {name: next(s for n, e, _, s in rows if n == name and ("local" in e or "reference" in e)) for name in ("group model", "toy counters")}
    out = sys.stdout
    out.write(f"{'model':<13} {'engine':<44} {'states':>8} {'seconds':>8} {'states/s':>9} {'vs local':>8}\n")
    for name, engine, states, seconds in rows:
        ratio = base[name] / seconds
        out.write(f"{name:<13} {engine:<44} {states:>8,} {seconds:>8.2f} {states / seconds:>9,.0f} {ratio:>7.2f}x\n")
        figures.setdefault("runs", []).append({"model": name, "engine": engine, "states": states, "seconds": round(seconds, 3)})
    for master in ("local[1]", "local[2]"):
        out.write(f"Spark fixed cost per BFS level ({master}, chain of {args.chain} one-state levels): "
                  f"{figures[f'fixed_cost_per_level_{master}']:.3f} s\n")
    out.write(f"checkpoint of the group model ({figures['checkpoint_states']:,} states, {figures['checkpoint_edges']:,} edges, "
              f"every level): {figures['checkpoint_bytes'] / 1e6:.2f} MB "
              f"({figures['checkpoint_bytes'] / figures['checkpoint_states']:.0f} bytes/state)\n")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
