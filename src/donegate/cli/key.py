"""``donegate key show``: this machine's signing key's public half (made on first use)."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.group()
def key() -> None:
    """The Ed25519 key that signs receipts and evidence."""


@key.command()
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the key lives; default $DONEGATE_STATE_DIR, else ~/.local/state/donegate.",
)
def show(state_dir: Path | None) -> int:
    """Print the public key (PEM) on stdout, for another machine's --trust-key; its id on stderr."""
    from donegate.signing.keys import signing_key

    signer = signing_key(state_dir)
    sys.stdout.write(signer.public_pem())
    click.echo(f"key id: {signer.keyid}", err=True)
    return 0
