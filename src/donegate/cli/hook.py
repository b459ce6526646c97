"""``donegate hook HOST``: what a host's hook runs (see :mod:`donegate.hooks.run`)."""

from __future__ import annotations

from pathlib import Path

import click

from donegate.hooks import ADAPTERS
from donegate.hooks.run import run_hook


@click.command()
@click.argument("host", type=click.Choice(sorted(ADAPTERS)))
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where session state and receipts live (default: $DONEGATE_STATE_DIR, then "
    "~/.local/state/donegate).",
)
def hook(host: str, state_dir: Path | None) -> int:
    """Handle one HOST hook call: the payload on stdin, the answer on stdout.

    Session start and prompts pin the session's baseline; tool calls are journalled; a stop is
    decided by the gate over the workspace's writes and donegate's own checks. Installed by
    `donegate init HOST`; whatever fails inside donegate, the agent is let go and told why.
    """
    return run_hook(host, state_dir)
