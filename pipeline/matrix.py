"""The verification matrix: a suite's model checks, one Spark task each, gathered into one table.

:func:`run_check` is the task: it resolves the assignor, runs the local explorer and the run
properties (:func:`rebalproof.properties.run_check.check_model`) and returns plain JSON data —
verdicts, measures, exploration statistics and the counterexample traces — so that a task's
result pickles small and reads the same on every executor. A task never raises: a check that
could not run comes back with an ``error`` (reported as an unexpected outcome).

:func:`run_checks` submits one single-task Spark job per check from a pool of driver threads,
so checks run ``cores`` at a time and each result is reported as soon as it is in
(``on_result``); results come back in suite order whatever the order they finished in.
``engine="local"`` runs the same function in-process, one check after the other.

:func:`judge` compares a check's verdicts with the suite's expectations
(:func:`rebalproof.pipeline.suite.classify`).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Callable

from rebalproof.pipeline.suite import UNEXPECTED, CheckSpec, classify

__all__ = ["run_check", "run_checks", "judge", "observed_status"]


def run_check(spec: CheckSpec) -> dict:
    """Run one check of a suite; plain JSON data out (see the module docstring)."""
    started = time.perf_counter()
    out = {"name": spec.name, "spec": spec.to_json(), "error": None}
    try:
        from rebalproof.model.group_assignor import resolve_for_model
        from rebalproof.model.group_bounds import Bounds
        from rebalproof.model.group_protocol import parse_protocol
        from rebalproof.properties.run import rebalance_bound
        from rebalproof.properties.run_check import check_model

        proto = parse_protocol(spec.protocol)
        with resolve_for_model(spec.assignor) as resolved:
            bounds = Bounds(**{"boundary_lags": resolved.default_boundary_lags, **dict(spec.bounds)})
            rules = resolved.rules if spec.rules is None else (None if spec.rules == "none" else spec.rules)
            symmetry = resolved.symmetry_for(spec.symmetry)
            result = check_model(
                protocol=proto,
                assignor=resolved.assignor,
                assignor_name=resolved.name,
                rules=rules,
                bounds=bounds,
                symmetry=symmetry,
                max_seconds=spec.time_limit,
                por=spec.por,
            )
        exp = result.exploration
        out.update(
            protocol=proto.spec,
            assignor=resolved.name,
            rules=rules,
            symmetry=bool(result.symmetry),
            por={"enabled": bool(exp.por), "reduced_expansions": exp.reduced},
            complete=bool(exp.complete and not exp.errors),
            bound=exp.bound,
            states=exp.states,
            edges=len(exp.edge_src),
            depth=exp.stats.depth,
            assignor_calls=getattr(result, "calls", 0),
            rebalance_bound=rebalance_bound(bounds),
            properties=[
                {
                    **r.verdict.to_json(),
                    "expectation": r.property.expectation,
                    "scope": r.property.scope,
                    "promise": r.property.promise,
                    "promised_by": r.property.promised_by,
                }
                for r in result.results
            ],
            traces=dict(result.traces),
        )
    except Exception as exc:  # a finding about the check, reported, never a crash of the job
        out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
    out["seconds"] = round(time.perf_counter() - started, 3)
    return out


def _run_on_spark(spark, spec: CheckSpec) -> dict:
    context = spark.sparkContext
    context.setJobDescription(f"rebalproof verify: {spec.name}")
    return context.parallelize([spec], 1).map(run_check).collect()[0]


def run_checks(
    specs: tuple[CheckSpec, ...],
    *,
    engine: str = "spark",
    spark=None,
    on_result: Callable[[dict], None] | None = None,
) -> list[dict]:
    """Run every check (Spark tasks, or in-process with ``engine="local"``); results in suite order."""
    results: dict[str, dict] = {}
    if engine == "local":
        for spec in specs:
            results[spec.name] = run_check(spec)
            if on_result is not None:
                on_result(results[spec.name])
    else:
        with ThreadPoolExecutor(max_workers=max(1, len(specs)), thread_name_prefix="verify") as pool:
            futures = {pool.submit(_run_on_spark, spark, spec): spec for spec in specs}
            for future in as_completed(futures):
                spec = futures[future]
                try:
                    result = future.result()
                except Exception as exc:  # the task itself failed (executor lost, ...): reported
                    result = {"name": spec.name, "spec": spec.to_json(), "seconds": 0.0,
                              "error": f"the Spark task failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
                results[spec.name] = result
                if on_result is not None:
                    on_result(result)
    return [results[spec.name] for spec in specs]


def observed_status(entry: dict) -> str:
    """The status a property showed, with "not promised" kept (what the suite expectations name)."""
    return entry["status"]


def judge(spec: CheckSpec, result: dict) -> dict:
    """Add each property's expectation and outcome to a check's result, and the check's outcome."""
    judged = dict(result)
    if result.get("error"):
        judged["outcome"] = "error"
        judged["unexpected"] = 1
        judged["expected_findings"] = 0
        return judged
    entries = []
    for entry in result["properties"]:
        expected = spec.expect(entry["property"], entry["status"])
        outcome = classify(entry["status"], expected)
        entries.append({**entry, "expected": expected.status, "why": expected.why, "outcome": outcome})
    judged["properties"] = entries
    judged["unexpected"] = sum(e["outcome"] in UNEXPECTED for e in entries)
    judged["expected_findings"] = sum(e["outcome"] == "expected finding" for e in entries)
    judged["outcome"] = "unexpected" if judged["unexpected"] else ("expected findings" if judged["expected_findings"] else "pass")
    return judged
