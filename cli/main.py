"""The ``rebalproof`` command: a click group whose commands live one per module.

Exit codes (docs/DESIGN.md "Exit codes and errors"): 0 every property holds, 1 a property is violated (or an
assignor misbehaved: a finding), 2 bad usage or input. Bad input prints one line on stderr
saying what is wrong and how to fix it, never a traceback.
"""

from __future__ import annotations

import importlib
import sys

import click

from rebalproof import __version__
from rebalproof.errors import InputError

__all__ = ["main", "cli", "EXIT_OK", "EXIT_VIOLATED", "EXIT_USAGE"]

EXIT_OK, EXIT_VIOLATED, EXIT_USAGE = 0, 1, 2

# Each module defines one click command called ``command`` that returns its exit code (an int).
# Add a line to add a command.
_COMMAND_MODULES = (
    "rebalproof.cli.schema_cmd",
    "rebalproof.cli.assign_cmd",
    "rebalproof.cli.oracle_cmd",
    "rebalproof.cli.verify_cmd",
    "rebalproof.cli.optimal_cmd",
    "rebalproof.cli.check_cmd",
    "rebalproof.cli.show_cmd",
    "rebalproof.cli.replay_cmd",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rebalproof")
def cli():
    """Verify task-assignment and rebalance protocols (KIP-429 learners, KIP-441 warmups)."""


def _register() -> None:
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # not written yet: the command is simply absent
                continue
            raise
        cli.add_command(module.command)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, mapping :class:`InputError` to exit 2 with one line."""
    _register()
    try:
        code = cli.main(args=argv, prog_name="rebalproof", standalone_mode=False)
    except InputError as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_USAGE
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 130
    return code if isinstance(code, int) else EXIT_OK


def run() -> None:  # pragma: no cover - console script shim
    sys.exit(main())
