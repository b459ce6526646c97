"""``donegate ledger sync`` and ``donegate ledger status``: the team ledger from this machine."""

from __future__ import annotations

from pathlib import Path

import click

from donegate.errors import InvalidInput
from donegate.exitcodes import ExitCode
from donegate.ledger import Ledger
from donegate.teamledger.settings import TeamSettings, team_settings

_URL = click.option(
    "--ledger",
    "url",
    metavar="URL",
    help="The team ledger; default $DONEGATE_LEDGER_URL or "
    "[ledger] url in ~/.config/donegate/config.toml.",
)
_SCHEMA = click.option("--schema", help="The PostgreSQL schema (default: donegate).")
_STATE_DIR = click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the local ledger lives; default $DONEGATE_STATE_DIR, else ~/.local/state/donegate.",
)


@click.group()
def ledger() -> None:
    """Ship receipts to the team ledger (PostgreSQL) and see what waits."""


@ledger.command()
@_URL
@_SCHEMA
@_STATE_DIR
def sync(url: str | None, schema: str | None, state_dir: Path | None) -> int:
    """Ship the receipts waiting in the local outbox; exactly once per receipt."""
    from donegate.teamledger.background import sync_lock
    from donegate.teamledger.ship import sync as ship
    from donegate.teamledger.store import TeamLedger, TeamLedgerUnreachable

    chosen = _settings(url, schema)
    with (
        Ledger(state_dir) as local,
        sync_lock(local.path.parent) as held,
        TeamLedger(chosen.url, chosen.schema) as team,
    ):
        if not held:
            click.echo("donegate: another sync is shipping these receipts", err=True)
            return 0
        try:
            done = ship(local, team)
        except TeamLedgerUnreachable as exc:
            left = local.outbox_size()
            click.echo(f"donegate: {exc}; {left} receipts kept in the outbox", err=True)
            return ExitCode.INVALID_INPUT
        click.echo(f"donegate: shipped {done.shipped} receipts to {team.name}", err=True)
    return 0


@ledger.command()
@_URL
@_SCHEMA
@_STATE_DIR
def status(url: str | None, schema: str | None, state_dir: Path | None) -> int:
    """Say where the team ledger is, its schema version, and how many receipts wait."""
    from donegate.teamledger.store import TeamLedger, TeamLedgerUnreachable

    with Ledger(state_dir) as local:
        click.echo(f"local ledger: {local.path}, {local.outbox_size()} receipts waiting", err=True)
    chosen = team_settings(url, schema)
    if chosen is None:
        click.echo("team ledger: not configured", err=True)
        return 0
    with TeamLedger(chosen.url, chosen.schema) as team:
        try:
            click.echo(
                f"{team.name}: schema version {team.version()}, {team.count()} receipts", err=True
            )
        except TeamLedgerUnreachable as exc:
            click.echo(f"team ledger unreachable: {exc}", err=True)
            return ExitCode.INVALID_INPUT
    return 0


def _settings(url: str | None, schema: str | None) -> TeamSettings:
    chosen = team_settings(url, schema)
    if chosen is None:
        raise InvalidInput(
            "no team ledger configured: set DONEGATE_LEDGER_URL, [ledger] url in "
            "~/.config/donegate/config.toml, or pass --ledger"
        )
    return chosen
