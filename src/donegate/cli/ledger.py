"""``donegate ledger sync`` and ``donegate ledger status``: the team ledger from this machine."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import click

from donegate.errors import InvalidInput
from donegate.exitcodes import ExitCode
from donegate.ledger import Ledger
from donegate.teamledger.settings import TeamSettings, team_settings
from donegate.teamledger.store import TIMEOUT_S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from donegate.teamledger.background import Holder
    from donegate.teamledger.setaside import Entry

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

_TIMEOUT = click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0.1),
    default=TIMEOUT_S,
    show_default=True,
    metavar="SECONDS",
    help="How long the server may take to answer the connect, or any one step after it; "
    "past that the command stops (a sync keeps every receipt not shipped in the outbox).",
)

_EXIT_CODES = (
    "Exit codes: 0 done (or another sync is shipping); 4 the team ledger failed or did not "
    "answer (every receipt kept in the local outbox), another sync is stuck, or the state "
    "directory cannot be used (not writable, not a directory)."
)
_AT_MOST = 20  # set-aside receipts listed one by one by status; the rest are counted
_REASON = 300  # characters of a server's reason shown (it may quote the claim at length)


@click.group(epilog=_EXIT_CODES)
def ledger() -> None:
    """Ship receipts to the team ledger (PostgreSQL) and see what waits."""


@ledger.command(epilog=_EXIT_CODES)
@_URL
@_SCHEMA
@_STATE_DIR
@_TIMEOUT
@click.option(
    "--retry-set-aside",
    is_flag=True,
    help="Try the receipts set aside again (after the server was changed, or donegate "
    "upgraded); those refused again are set aside again.",
)
def sync(
    url: str | None,
    schema: str | None,
    state_dir: Path | None,
    timeout_s: float,
    retry_set_aside: bool,
) -> int:
    """Ship the receipts waiting in the local outbox; exactly once per receipt.

    A receipt the server refuses for its content (a NUL in its claim, a value too large) is
    set aside with the server's reason, on this machine, and the receipts after it still ship,
    in order. A set-aside receipt stays in the outbox: `donegate ledger status` lists it, and
    --retry-set-aside tries it again. Only one sync ships at a time: another that finds one
    shipping leaves, and says so; one that finds a stuck sync (past its deadline) says that.
    """
    from donegate.teamledger.background import sync_lock

    chosen = _settings(url, schema)
    with Ledger(state_dir) as local, sync_lock(local.path.parent, _budget(timeout_s)) as lock:
        if lock.holder is not None:
            return _busy(lock.holder)
        return _ship(local, chosen, timeout_s, retry_set_aside, lock.progress)


def _budget(timeout_s: float) -> float:
    # How long a live sync may go between two batches: a batch waits on the server three times
    # at most (connect, the batch, the batch again a receipt at a time), and on local SQLite
    # files (their busy timeouts, 10 s each) a few times.
    return 3 * max(2.0, timeout_s) + 40.0


def _busy(holder: Holder) -> int:
    now = time.time()
    click.echo(f"donegate: {holder.says(now)}", err=True)
    return ExitCode.INVALID_INPUT if holder.stuck(now) else ExitCode.OK


def _ship(
    local: Ledger,
    chosen: TeamSettings,
    timeout_s: float,
    retry: bool,
    progress: Callable[[], None],
) -> int:
    from donegate.teamledger.setaside import SetAside
    from donegate.teamledger.ship import sync as ship
    from donegate.teamledger.store import TeamLedger, TeamLedgerUnreachable

    aside = SetAside(local.path.parent)
    with TeamLedger(chosen.url, chosen.schema, timeout_s) as team:
        if retry:
            click.echo(f"donegate: trying {aside.clear()} set-aside receipts again", err=True)
        try:
            done = ship(local, team, aside, progress=progress)
        except TeamLedgerUnreachable as exc:
            left = local.outbox_size()
            click.echo(f"donegate: {exc}; {left} receipts kept in the outbox", err=True)
            return ExitCode.INVALID_INPUT
        click.echo(f"donegate: shipped {done.shipped} receipts to {team.name}", err=True)
        if done.set_aside:
            click.echo(
                f"donegate: {done.set_aside} receipts refused by the server and set aside "
                "(see donegate ledger status)",
                err=True,
            )
    return ExitCode.OK


@ledger.command(epilog=_EXIT_CODES)
@_URL
@_SCHEMA
@_STATE_DIR
@_TIMEOUT
def status(url: str | None, schema: str | None, state_dir: Path | None, timeout_s: float) -> int:
    """Say where the team ledger is, its schema version, how many receipts wait, which were
    set aside (refused by the server, with its reason), and whether a sync is running or stuck.
    """
    from donegate.teamledger.store import TeamLedger, TeamLedgerUnreachable

    with Ledger(state_dir) as local:
        click.echo(f"local ledger: {local.path}, {local.outbox_size()} receipts waiting", err=True)
        _local_state(local.path.parent)
    chosen = team_settings(url, schema)
    if chosen is None:
        click.echo("team ledger: not configured", err=True)
        return 0
    with TeamLedger(chosen.url, chosen.schema, timeout_s) as team:
        try:
            click.echo(
                f"{team.name}: schema version {team.version()}, {team.count()} receipts", err=True
            )
        except TeamLedgerUnreachable as exc:
            click.echo(f"team ledger unreachable: {exc}", err=True)
            return ExitCode.INVALID_INPUT
    return 0


def _local_state(state: Path) -> None:
    from donegate.teamledger.background import current_holder
    from donegate.teamledger.setaside import SetAside

    holder = current_holder(state)
    if holder is not None:
        click.echo(f"sync: {holder.says(time.time())}", err=True)
    _say_set_aside(SetAside(state).entries())


def _say_set_aside(entries: list[Entry]) -> None:
    if entries:
        click.echo(
            f"set aside: {len(entries)} receipts the team ledger refused (still in the outbox; "
            "donegate ledger sync --retry-set-aside tries them again):",
            err=True,
        )
    for entry in entries[:_AT_MOST]:
        why = entry.reason if len(entry.reason) <= _REASON else entry.reason[:_REASON] + "..."
        where = f"receipt {entry.receipt_id} ({entry.uuid}), set aside {entry.set_aside_at}"
        click.echo(f"  {where}: {why}", err=True)
    if len(entries) > _AT_MOST:
        click.echo(f"  and {len(entries) - _AT_MOST} more", err=True)


def _settings(url: str | None, schema: str | None) -> TeamSettings:
    chosen = team_settings(url, schema)
    if chosen is None:
        raise InvalidInput(
            "no team ledger configured: set DONEGATE_LEDGER_URL, [ledger] url in "
            "~/.config/donegate/config.toml, or pass --ledger"
        )
    return chosen
