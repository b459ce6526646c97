"""``donegate init HOST``: install donegate's hooks for an agent in this repository."""

from __future__ import annotations

import os
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
    detects, unless one exists. It turns on the host's own sandbox where the host has one in a
    project file (Claude Code: sandbox, no unsandboxed fallback, file tools denied donegate's
    state; Codex: workspace-write in .codex/config.toml; Gemini CLI: tool sandboxing) and says
    whether the agent is now confined. Running it again changes nothing; --uninstall removes
    exactly the entries it added.
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
    _say_confinement(host, root)
    if host in TRUST:
        click.echo(TRUST[host], err=True)
    click.echo("After your first agent turn here, run `donegate doctor`.", err=True)
    return ExitCode.OK


# The hosts' trust gates: until the person passes them, the hooks just installed cannot fire.
TRUST = {
    "codex": "Codex runs this project's hooks and reads its .codex/config.toml only in a trusted "
    "project, with trusted hooks: open Codex here, trust the project, run /hooks.",
    "copilot": "Copilot CLI loads repository hooks only in a trusted folder: start copilot here "
    "and trust the folder for future sessions.",
    "gemini-cli": "Gemini CLI exits 55 in an untrusted folder and reads no project settings "
    "there: run gemini here and trust the folder.",
}


def _say_confinement(host: str, root: Path) -> None:
    """Whether the host's sandbox now confines the agent, and keeps it out of donegate's state."""
    from donegate.hooks.confinement import sandbox_of
    from donegate.hooks.doctor import CONFINE_FIX, STATE_FIX

    sandbox = sandbox_of(host, root, os.environ)
    state = statedir.resolve()
    if sandbox is None:
        click.echo(
            f"{host}: the agent is not known to be confined; to confine it: {CONFINE_FIX[host]}",
            err=True,
        )
    elif sandbox.reaches(state):
        click.echo(
            f"WARNING: {sandbox.text} lets the agent write donegate's state {state}: {STATE_FIX}",
            err=True,
        )
    else:
        click.echo(f"{host}: the agent is confined: {sandbox.text}", err=True)
