"""``donegate init HOST``: install donegate's hooks for an agent in this repository."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from donegate import reach, statedir
from donegate.errors import InvalidInput
from donegate.exitcodes import ExitCode
from donegate.hooks import install as installer
from donegate.hooks.starter import write_starter


@click.command()
@click.argument("host", type=click.Choice(sorted(installer.HOSTS)))
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(),
    show_default=True,
    help="The repository to install into.",
)
@click.option("--uninstall", is_flag=True, help="Remove exactly donegate's hooks, nothing else.")
@click.option("--command", "command", help="The hook command to install (default: this donegate).")
def init(host: str, root: Path, uninstall: bool, command: str | None) -> int:
    """Gate HOST's stops in this repository (claude-code, codex, copilot, cursor, gemini-cli).

    Writes or merges the host's hook settings (.claude/settings.json, which VS Code's agent reads
    too, .codex/hooks.json, .github/hooks/donegate.json, .cursor/hooks.json, .gemini/settings.json),
    keeping the hooks already there, and writes a starter donegate.toml with the test command it
    detects, unless one exists. Running it again changes nothing; --uninstall removes exactly the
    entries it added.
    """
    try:
        return _init(host, root, uninstall, command)
    except OSError as exc:  # a root under a file, no permission, a full or read-only disk
        where = exc.filename or root
        raise InvalidInput(f"cannot install {host}'s hooks: {where}: {exc.strerror}") from None


def _init(host: str, root: Path, uninstall: bool, command: str | None) -> int:
    if uninstall:
        path = installer.uninstall(root, host)
        click.echo(
            f"removed donegate's hooks from {path}" if path else "nothing to remove", err=True
        )
        return ExitCode.OK
    command = command or installer.hook_command(host)
    path = installer.install(root, host, command)
    click.echo(f"installed donegate's {host} hooks in {path}", err=True)
    program = shlex.split(command)[0] if command.strip() else None
    exposed = reach.warning(root, statedir.resolve(), program)
    if exposed:
        click.echo(f"WARNING: {exposed}", err=True)
    starter = write_starter(root)
    if starter:
        click.echo(f"wrote {starter}: review the test command and the policy", err=True)
    else:
        click.echo("kept the existing donegate.toml", err=True)
    if host == "codex":
        click.echo("Codex runs project hooks only once trusted: open Codex, run /hooks.", err=True)
    click.echo("After your first agent turn here, run `donegate doctor`.", err=True)
    return ExitCode.OK
