"""``donegate doctor``: whether the gate is in place in this repository, and has fired."""

from __future__ import annotations

from pathlib import Path

import click

from donegate import statedir
from donegate.exitcodes import ExitCode


@click.command()
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(),
    show_default=True,
    help="The repository to examine.",
)
@click.option("--no-run", is_flag=True, help="Do not run the configured checks.")
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where donegate keeps state; default $DONEGATE_STATE_DIR, else ~/.local/state/donegate.",
)
def doctor(root: Path, no_run: bool, state_dir: Path | None) -> int:
    """Check that donegate's gate works here: hooks installed; hooks that can fire (Codex: the
    project and its hooks trusted in $CODEX_HOME; Copilot CLI and Gemini CLI: a trusted folder)
    told from hooks that have not fired yet (the last call seen per host); the agent confined by
    its host's sandbox, which cannot write donegate's state; donegate.toml valid and accepted,
    the checks runnable with a readable report, the state directory writable.

    Exits 0 only when everything holds, else 3; each problem comes with the command that fixes it.
    """
    from donegate.hooks.doctor import Doctor, report
    from donegate.session.workspace import workspace_root

    top = workspace_root(root)
    findings = Doctor(top, statedir.resolve(state_dir), run_checks=not no_run).findings()
    healthy = report(findings, lambda line: click.echo(line, err=True))
    return ExitCode.OK if healthy else ExitCode.UNVERIFIED
