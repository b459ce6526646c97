"""The click application: the command group, its lazily imported subcommands, the exit codes.

Subcommand modules are imported only when their command runs, so that a hook that starts a fresh
process at every agent stop pays only for what it uses.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import click

from donegate.__about__ import __version__
from donegate.errors import InternalError, InvalidInput
from donegate.exitcodes import HELP_TABLE, ExitCode

# name -> "module:attribute" of a click command. Add a subcommand here and in its own module.
COMMANDS: dict[str, str] = {
    "verify": "donegate.cli.verify:verify",
    "collect": "donegate.cli.collect:collect",
    "schema": "donegate.cli.schema:schema",
    "gate": "donegate.cli.gate:gate",
    "receipts": "donegate.cli.receipts:receipts",
    "hook": "donegate.cli.hook:hook",
    "init": "donegate.cli.init:init",
    "accept": "donegate.cli.accept:accept",
    "doctor": "donegate.cli.doctor:doctor",
    "report": "donegate.cli.weekly:report",
    "ledger": "donegate.cli.ledger:ledger",
    "key": "donegate.cli.key:key",
    "mcp": "donegate.cli.mcp:mcp",
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when that subcommand is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise InternalError(f"{target} is not a click command")
        return command

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            # Kept from click, which takes every broken pipe for closed output and exits 1 (the
            # code of "refuted"), even one to a worker that died: run() tells them apart.
            raise _BrokenPipe from exc


class _BrokenPipe(Exception):
    """A command's broken pipe, carried past click to :func:`run` as its cause."""


@click.group(cls=LazyGroup, epilog=HELP_TABLE)
@click.version_option(__version__, prog_name="donegate")
def cli() -> None:
    """Check an AI agent's completion claim against the world.

    A Completion Claim (v0.1) lists what the agent changed and what was observed afterwards;
    donegate computes the verdict (verified, unverified or refuted) by the spec's six rules.
    """


def run(args: Sequence[str], obj: object = None) -> int:
    """Run the CLI on ``args`` and return its exit code, decided here for every command.

    ``obj`` is handed to the commands as click's context object (see :mod:`donegate.cli`).
    """
    args = list(args)
    try:
        result = cli.main(args, prog_name="donegate", standalone_mode=False, obj=obj)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return ExitCode.USAGE
    except click.Abort:
        click.echo("Aborted.", err=True)
        return ExitCode.USAGE
    except InvalidInput as exc:
        click.echo(f"donegate: invalid input: {exc}", err=True)
        return ExitCode.INVALID_INPUT
    except Exception as caught:  # the one boundary where anything becomes exit 5
        from donegate.cli.streams import output_closed

        error = (caught.__cause__ or caught) if isinstance(caught, _BrokenPipe) else caught
        if output_closed(error):
            return ExitCode.OUTPUT_CLOSED
        click.echo(f"donegate: internal error: {type(error).__name__}: {error}", err=True)
        return ExitCode.INTERNAL
    return int(result) if isinstance(result, int) else ExitCode.OK
