"""``rebalproof verify [SUITE.toml]``: the main job — the verification matrix, on Spark.

Two sections (docs/DESIGN.md "Commands"):

1. **Model checks.** Every ``[[check]]`` of the suite (default: the suite shipped with
   rebalproof, :data:`rebalproof.pipeline.suite.DEFAULT_SUITE`) is one Spark task: a protocol
   with an assignor explored breadth-first within its bounds by the local explorer, every run
   property judged. Verdicts are compared with the suite's expectations, so a known finding
   (seen again) is told apart from a regression.
2. **One rebalance at a time.** Each assignor of the suite's ``[rebalances]`` section (or of
   ``--assignor``) answers every leader view of the seed scenarios and ``--generated`` generated
   views; every per-assignment property is judged (:mod:`rebalproof.pipeline.rebalances`).

Outputs under ``--out`` (default ``out/verify``): ``results.json``, ``junit.xml``,
``report.html`` (self-contained, with charts and links to each counterexample) and
``traces/``. The console shows a progress bar on a terminal, then the tables (plain text off a
terminal: the same from run to run). Off a terminal (CI, ``> log 2>&1``), stderr gets a plain
line as each model check ends and as each section starts, with the time since the start
(:class:`_Lines`), so a run of many minutes is not silent; ``--quiet`` drops them. Stdout is
the same either way.

``--assignor SPEC`` (repeatable) verifies just those assignors: the per-rebalance section runs
them, and only the suite's checks with that very assignor run. ``--engine local`` runs the
checks in-process, without Spark.

Exit codes: 0 every outcome as expected, 1 an unexpected outcome (a regression, a known finding
gone, a changed promise, an inconclusive check, an error) or a finding about an assignor,
2 bad usage or a bad suite.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from rebalproof.cli.assign_cmd import DEFAULT_EXTERNAL_RULES, check_timeout
from rebalproof.cli.render import print_table
from rebalproof.errors import InputError
from rebalproof.model.codec import write_json_atomic
from rebalproof.pipeline.rebalances import (  # noqa: F401 - re-exported: the interim command's API
    SEED_MODULES,
    Row,
    Tally,
    generated_inputs,
    judge_row,
    run_matrix,
    seed_inputs,
)
from rebalproof.pipeline.suite import DEFAULT_SUITE, UNEXPECTED, load_suite
from rebalproof.properties import RULE_SETS

__all__ = ["command", "SEED_MODULES", "seed_inputs", "generated_inputs", "Tally", "run_matrix"]


class _Lines:
    """Progress as plain lines on stderr, for a log (stderr not a terminal): one as each model
    check ends (``verify: 3 of 59 model checks done: NAME, 4,590 states (0:41)``) and one as
    each section starts. The times are on stderr only: stdout stays the same from run to run."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.started = time.monotonic()
        self.done = 0

    def say(self, text: str) -> None:
        if self.enabled:
            elapsed = int(time.monotonic() - self.started)
            click.echo(f"verify: {text} ({elapsed // 60}:{elapsed % 60:02d})", err=True)

    def check_done(self, total: int, result: dict) -> None:
        self.done += 1
        what = f"error: {result['error']}" if result.get("error") else f"{_count(result.get('states', 0), 'state')}"
        self.say(f"{self.done} of {total} model checks done: {result['name']}, {what}")


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _progress(total: int):
    """A rich progress bar on stderr when it is a terminal; None otherwise (output stays deterministic)."""
    if total == 0 or not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("[bold]verify[/bold] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    return progress


def _run_model_checks(checks, *, engine: str, master: str | None, driver_memory: str, spark_logs: bool,
                      lines: _Lines) -> list[dict]:
    from rebalproof.pipeline.matrix import run_checks

    spark = None
    if checks and engine == "spark":
        from rebalproof.pipeline.session import spark_session

        lines.say(f"starting Spark ({master or 'local[*]'})")
        spark = spark_session(master=master, driver_memory=driver_memory, quiet=not spark_logs)
    if checks:
        lines.say(f"{_count(len(checks), 'model check')} to run {'as Spark tasks' if engine == 'spark' else 'in this process'}")
    progress = _progress(len(checks))
    if progress is None:
        return run_checks(checks, engine=engine, spark=spark,
                          on_result=(lambda result: lines.check_done(len(checks), result)) if lines.enabled else None)
    with progress:
        task = progress.add_task(f"{len(checks)} model checks", total=len(checks))

        def done(result: dict) -> None:
            status = "error" if result.get("error") else f"{result.get('states', 0):,} states"
            progress.console.print(f"  checked {result['name']}: {status}")
            progress.advance(task)

        return run_checks(checks, engine=engine, spark=spark, on_result=done)


def _check_rows(judged: list[dict]) -> list[list[str]]:
    rows = []
    for check in judged:
        if check.get("error"):
            rows.append([check["name"], "-", "-", "ERROR", check["error"]])
            continue
        notes = []
        for entry in sorted(check["properties"], key=lambda e: e["property"]):  # by name: the order README and tests give
            if entry["outcome"] == "expected finding":
                notes.append(f"{entry['property']} (known)")
            elif entry["outcome"] in UNEXPECTED:
                notes.append(f"{entry['property']}: {entry['outcome']}")
        result = "UNEXPECTED" if check["unexpected"] else ("expected findings" if check["expected_findings"] else "pass")
        rows.append([
            check["name"],
            f"{check['states']:,}",
            "complete" if check["complete"] else f"cut: {check['bound']}",
            result,
            ", ".join(notes),
        ])
    return rows


@click.command("verify")
@click.argument("suite_path", metavar="[SUITE.toml]", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("out/verify"),
              show_default=True, metavar="DIR", help="where results.json, junit.xml, report.html and traces/ go")
@click.option("--engine", type=click.Choice(["spark", "local"]), default="spark", show_default=True,
              help="run the model checks as Spark tasks, or in this process one after the other")
@click.option("--master", default=None, metavar="URL",
              help="Spark master: local[*] (default), local[N], spark://host:7077, yarn, k8s://...")
@click.option("--driver-memory", default="2g", show_default=True, metavar="SIZE", help="Spark driver memory")
@click.option("--spark-logs", is_flag=True, help="show Spark's own log messages (quiet by default)")
@click.option("--check", "only", multiple=True, metavar="NAME", help="run only the suite's check NAME (repeatable)")
@click.option("--assignor", "specs", multiple=True, metavar="SPEC",
              help="verify only this assignor (repeatable): its per-rebalance row and the suite's checks that use it")
@click.option("--rules", type=click.Choice(RULE_SETS), default=None,
              help=f"rule set for py: and exec: assignors in the per-rebalance section  [default: the suite's, else {DEFAULT_EXTERNAL_RULES}]")
@click.option("--generated", type=click.IntRange(min=0), default=None, metavar="N",
              help="how many generated views to add to the seed scenarios' views  [default: the suite's, 200]")
@click.option("--seed", type=int, default=None, help="seed of the generated views  [default: the suite's, 0]")
@click.option("--timeout", type=float, default=10.0, show_default=True, metavar="S",
              help="seconds an exec: assignor may take per view")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE",
              help="also write the per-rebalance results (with example inputs) to FILE")
@click.option("--finding-dir", type=click.Path(file_okay=False, path_type=Path), default=None, metavar="DIR",
              help="save findings about assignors (with their inputs) in DIR")
@click.option("--quiet", is_flag=True, help="no progress on stderr (off a terminal: a line as each model check ends)")
def command(suite_path, out_dir, engine, master, driver_memory, spark_logs, only, specs, rules, generated, seed, timeout,
            json_path, finding_dir, quiet) -> int:
    """Run the verification suite: model checks on Spark, and every assignor one rebalance at a time.

    Exit 0 when every verdict is as the suite expects, 1 on an unexpected one or a finding about
    an assignor, 2 on bad usage or a bad suite.
    """
    suite = load_suite(suite_path or DEFAULT_SUITE)
    checks = suite.checks
    if only:
        unknown = sorted(set(only) - {c.name for c in checks})
        if unknown:
            raise InputError(f"no check called {', '.join(unknown)} in suite '{suite.name}'; its checks are {', '.join(c.name for c in checks)}")
        checks = tuple(c for c in checks if c.name in only)
    if specs:
        checks = tuple(c for c in checks if c.assignor in specs)
    section = suite.rebalances
    rebalance_specs = tuple(specs) or section.assignors
    rules = rules or (section.rules if not specs else DEFAULT_EXTERNAL_RULES)
    generated = section.generated if generated is None else generated
    seed = section.seed if seed is None else seed
    timeout = check_timeout(timeout)

    # -- 1. model checks --------------------------------------------------------------------
    from rebalproof.pipeline.matrix import judge

    lines = _Lines(enabled=not quiet and not sys.stderr.isatty())
    results = _run_model_checks(checks, engine=engine, master=master, driver_memory=driver_memory, spark_logs=spark_logs,
                                lines=lines)
    judged = [judge(spec, result) for spec, result in zip(checks, results)]
    if judged:
        print_table(["check", "states", "exploration", "result", "notes"], _check_rows(judged),
                    title=f"suite {suite.name}: {len(judged)} model checks ({engine})")
        for check in judged:
            for entry in check.get("properties", []):
                if entry["outcome"] in UNEXPECTED:
                    click.echo(f"unexpected: {check['name']}: {entry['property']} is {entry['status']}, "
                               f"expected {entry['expected']} ({entry['outcome']}): {entry['message']}")
                elif entry["outcome"] == "expected finding":
                    click.echo(f"expected finding: {check['name']}: {entry['property']}: {entry['why']}")
            if check.get("error"):
                click.echo(f"unexpected: {check['name']}: the check could not run: {check['error']}")

    # -- 2. one rebalance at a time ---------------------------------------------------------
    rows, corpus_json, rebalance_unexpected, findings, violations = [], None, 0, 0, 0
    if rebalance_specs:
        seeds, seed_counts = seed_inputs()
        corpus = seeds + generated_inputs(generated, seed=seed)
        lines.say(f"one rebalance at a time: {_count(len(rebalance_specs), 'assignor')} on {_count(len(corpus), 'view')}")
        rows = run_matrix(rebalance_specs, corpus, rules=rules, timeout=timeout, finding_dir=finding_dir)
        properties = []
        for row in rows:
            for name in row.properties:
                if name not in properties:
                    properties.append(name)
        table = [["rules", *(row.rules for row in rows)]]
        for name in properties:
            table.append([name, *(row.properties[name].cell() if name in row.properties else "-" for row in rows)])
        table.append(["findings", *(str(row.findings) for row in rows)])
        sources = ", ".join(f"{n} from {m}" for m, n in seed_counts.items())
        print_table(["property", *(row.assignor for row in rows)], table,
                    title=f"{len(corpus)} views ({sources}, {generated} generated with seed {seed})")
        for row in rows:
            judgement = judge_row(row, section.known_for(row.assignor), section.not_promised_for(row.assignor))
            rebalance_unexpected += judgement["unexpected"]
            for name, outcome in judgement["outcomes"].items():
                if outcome == "regression":
                    example = row.properties[name].examples[0]
                    click.echo(f"violated: {row.assignor}: {name} on {example['label']}: {example['message']}")
                elif outcome == "fixed":
                    click.echo(f"unexpected: {row.assignor}: {name} is known to be violated but held on every view (fixed? update the suite)")
                elif outcome == "promise changed":
                    click.echo(f"unexpected: {row.assignor}: {name}: the rule set's promise differs from the suite's record (promise changed)")
                elif outcome == "expected finding":
                    click.echo(f"expected finding: {row.assignor}: {name}: {judgement['known'][name]}")
            for name, tally in row.properties.items():
                if not tally.witnessed:
                    click.echo(f"vacuous: {row.assignor}: {name} held only vacuously (its premise was never met)")
            for example in row.finding_examples[:1]:
                click.echo(f"finding: {row.assignor} on {example['label']}: {example['message']}")
            violations += sum(1 for o in judgement["outcomes"].values() if o == "regression")
            findings += row.findings
            row.judgement = judgement
        corpus_json = {"views": len(corpus), **seed_counts, "generated": generated, "seed": seed}
        if json_path is not None:
            write_json_atomic(json_path, {
                "corpus": corpus_json,
                "assignors": [row.to_json() for row in rows],
                "ok": rebalance_unexpected == 0,
            })

    # -- outputs ----------------------------------------------------------------------------
    check_unexpected = sum(c["unexpected"] for c in judged)
    ok = check_unexpected == 0 and rebalance_unexpected == 0
    report = {
        "suite": {"name": suite.name, "description": suite.description, "path": suite.path},
        "engine": {"kind": engine, "master": _master_of(engine, master)},
        "checks": judged,
        "rebalances": {
            "corpus": corpus_json,
            "rows": [dict(row.to_json(), judgement=row.judgement,
                          properties={n: dict(t, cell=row.properties[n].cell()) for n, t in row.to_json()["properties"].items()})
                     for row in rows],
        } if rows else None,
        "summary": {
            "checks": len(judged),
            "states": sum(c.get("states", 0) for c in judged),
            "unexpected": check_unexpected + rebalance_unexpected,
            "expected_findings": sum(c["expected_findings"] for c in judged),
            "assignors": len(rows),
        },
        "ok": ok,
    }
    from rebalproof.pipeline.report import write_report

    try:
        paths = write_report(out_dir, report)
    except OSError as exc:
        raise InputError(f"cannot write the report under '{out_dir}': {exc.strerror or exc}; check --out") from None
    click.echo(f"report: {paths['html']} (results.json, junit.xml, traces/ beside it)")
    verdict = "ok" if ok else "FAILED"
    click.echo(
        f"verify: {verdict}: {len(judged)} model checks, {report['summary']['expected_findings']} expected findings, "
        f"{check_unexpected} unexpected; {len(rows)} assignors one rebalance at a time, "
        f"{violations} promised properties violated, {findings} findings"
    )
    return 0 if ok else 1


def _master_of(engine: str, master: str | None) -> str | None:
    if engine != "spark":
        return None
    from rebalproof.pipeline.session import active_session

    spark = active_session()
    return spark.sparkContext.master if spark is not None else master
