"""``rebalproof optimal INPUT.json``: the optimal reference assignment, with a proof per objective.

Prints the objectives (``imbalance``, ``spread``, ``moves``, ``restore``, ``warmups``, most
important first; :mod:`rebalproof.solver.objectives`), each with its value, the proven lower
bound and how it is proven (``flow-cut``: a Hall-type certificate checked by arithmetic;
``flow-duals``: min-cost flow potentials; ``z3-unsat``: the next-better bound is unsatisfiable;
``arithmetic``; ``fixpoint``), then the assignment in the contract's JSON.

Exit 0 when the answer is proven optimal; 1 when no assignment keeps the rules (``infeasible``,
with why) or ``--timeout`` passed first (``inconclusive``: the best answer found and the bounds
proven so far are printed, never a silent guess); 2 on bad input.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from rebalproof.cli.render import format_assignment, print_table
from rebalproof.model.codec import decode_input, encode_assignment, read_json
from rebalproof.solver.optimize import ENGINES, optimal
from rebalproof.solver.result import OPTIMAL
from rebalproof.solver.rules import RULE_SETS

__all__ = ["command"]


@click.command("optimal")
@click.argument("input_path", metavar="INPUT.json", type=click.Path(path_type=Path))
@click.option("--rules", type=click.Choice(tuple(RULE_SETS)), default="ha", show_default=True,
              help="whose hard rules the answer keeps: ha (KIP-441), learner (KIP-429), sticky or eager")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None, metavar="S",
              help="seconds; past it the answer is INCONCLUSIVE with the best found and the proven bounds")
@click.option("--engine", type=click.Choice(ENGINES), default="flow", show_default=True,
              help="flow (certificates, Z3 where flow cannot express the problem) or z3 (staged reference)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object instead of the tables")
def command(input_path: Path, rules: str, timeout: float | None, engine: str, as_json: bool) -> int:
    """The optimal assignment for the rebalance in INPUT.json, with a proof of optimality.

    Exit 0 when proven optimal, 1 when infeasible or inconclusive (timeout), 2 on bad input.
    """
    view = decode_input(read_json(input_path, what="input"))
    result = optimal(view, rules, timeout=timeout, engine=engine)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return 0 if result.status == OPTIMAL else 1
    head = {"optimal": "OPTIMAL (proven)", "inconclusive": "INCONCLUSIVE", "infeasible": "INFEASIBLE"}[result.status]
    click.echo(f"{head} under the {rules} rules in {result.seconds:.2f} s (engine {result.engine})" + (f": {result.reason}" if result.reason else ""))
    for note in result.notes:
        click.echo(f"note: {note}")
    if result.assignment is not None:
        print_table(
            ["objective", "value", "lower bound", "method", "proof"],
            [[b.name, str(b.value), str(b.lower), b.method, b.proof] for b in result.objectives],
        )
        click.echo(format_assignment(encode_assignment(result.assignment)))
    return 0 if result.status == OPTIMAL else 1
