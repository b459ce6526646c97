"""``donegate accept [PATH...]``: a person accepts content an agent wrote.

Until accepted, a protected test, a runner file, ``donegate.toml`` or a host's hook settings whose
content an agent wrote judge nothing: a check run over them does not count, in this session and
every later one.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from donegate import statedir
from donegate.exitcodes import ExitCode


@click.command()
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--yes", "-y", is_flag=True, help="Accept without asking (the diff is still shown).")
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where donegate keeps state; default $DONEGATE_STATE_DIR, else ~/.local/state/donegate.",
)
def accept(paths: tuple[str, ...], yes: bool, state_dir: Path | None) -> int:
    """Accept what an agent wrote at PATH (default: everything still the agent's).

    Shows the diff of each file against HEAD first, then records who accepted it and when. A
    path that is not a regular file (a symlink, a FIFO, a device), cannot be read, or is larger
    than 64 MiB is refused, with the reason (exit 4); the others are accepted as usual.
    Accepting is a person's act: run from an agent's tool call it refuses, and an acceptance the
    agent made anyway is withdrawn at its next stop.
    """
    from donegate.session.accept import Acceptance, agent_shell, visible
    from donegate.session.workspace import person

    shell = agent_shell()
    if shell is not None:
        click.echo(
            f"donegate accept: refused: ${shell} says an agent's tool call runs this command; "
            "accepting what an agent wrote is a person's act.",
            err=True,
        )
        return ExitCode.USAGE
    fresh = statedir.absent(state_dir)
    acceptance = Acceptance(statedir.ensure(state_dir), Path.cwd())
    if fresh:  # inside a box that hides the real one, nothing here is the person's record
        click.echo(f"donegate accept: {statedir.made_here(acceptance.layout.state_dir)}", err=True)
    found = acceptance.candidates(paths)
    for item in found:
        if item.refused:
            click.echo(f"donegate accept: refused {visible(item.path)}: {item.refused}", err=True)
    chosen = [item for item in found if not item.refused]
    # A path that could not be accepted is an input rejected (4), whatever became of the others.
    done = ExitCode.INVALID_INPUT if len(chosen) < len(found) else ExitCode.OK
    if not found:
        click.echo("donegate accept: nothing to accept: no content here is an agent's.", err=True)
    if not chosen:
        return done
    for item in chosen:
        sys.stdout.write(item.diff)
    names = ", ".join(visible(item.path) for item in chosen)
    if not yes and not click.confirm(f"Accept {names}?", default=False, err=True):
        click.echo("donegate accept: nothing accepted.", err=True)
        return ExitCode.USAGE
    acceptance.accept(chosen, person())
    click.echo(f"donegate accept: accepted {names} as {person()}.", err=True)
    return done
