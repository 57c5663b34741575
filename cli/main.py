"""The ``rebalproof`` command: a click group whose commands live one per module.

Exit codes (docs/DESIGN.md "Exit codes and errors"): 0 no property violated (some may be inconclusive: the last line says so), 1 a property is violated (or an
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
# Add a line to add a command: its name, then its module. A module is imported when its command
# is run (or help lists the commands): ``check`` does not load the solver's z3 and networkx
# (20 MiB of resident memory before the first state).
_COMMAND_MODULES = {
    "schema": "rebalproof.cli.schema_cmd",
    "assign": "rebalproof.cli.assign_cmd",
    "oracle": "rebalproof.cli.oracle_cmd",
    "verify": "rebalproof.cli.verify_cmd",
    "optimal": "rebalproof.cli.optimal_cmd",
    "check": "rebalproof.cli.check_cmd",
    "show": "rebalproof.cli.show_cmd",
    "replay": "rebalproof.cli.replay_cmd",
}


class _LazyGroup(click.Group):
    """A group whose commands are imported when asked for (see :data:`_COMMAND_MODULES`)."""

    def list_commands(self, ctx):
        return sorted(name for name in _COMMAND_MODULES if self.get_command(ctx, name) is not None)

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)
        if command is None and name in _COMMAND_MODULES:
            command = _load(_COMMAND_MODULES[name])
            if command is not None:
                self.add_command(command, name)
        return command


def _load(module_name: str):
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:  # not written yet: the command is simply absent
            return None
        raise
    return module.command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rebalproof")
def cli():
    """Verify task-assignment and rebalance protocols (KIP-429 learners, KIP-441 warmups)."""


def _register() -> None:
    """Load every command now (the group loads each when it is asked for anyway)."""
    for name in _COMMAND_MODULES:
        cli.get_command(None, name)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, mapping :class:`InputError` to exit 2 with one line."""
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
