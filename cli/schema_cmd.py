"""``rebalproof schema input|assignment``: print the contract's JSON Schema (draft 2020-12).

The schema says the shape; ``rebalproof oracle`` also checks what a schema cannot (unknown
ids, a member left out). See :mod:`rebalproof.model.schema`.
"""

from __future__ import annotations

import json

import click

from rebalproof.model.schema import SCHEMAS

__all__ = ["command"]


@click.command("schema")
@click.argument("which", type=click.Choice(sorted(SCHEMAS)), metavar="input|assignment")
def command(which: str) -> int:
    """Print the JSON Schema of a RebalanceInput (input) or an Assignment (assignment)."""
    click.echo(json.dumps(SCHEMAS[which], indent=2))
    return 0
