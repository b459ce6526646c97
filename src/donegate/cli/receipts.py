"""``donegate receipts``: the receipts of recent stops, and one stop's claim document.

Like every subcommand, the human listing goes to stderr and the payload (``--json``, or the
claim printed by ``show``) to stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from donegate.jsontext import clean_text
from donegate.ledger import Ledger, Receipt
from donegate.report.window import parse_since

_STATE_DIR = click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where receipts live; default $DONEGATE_STATE_DIR, else ~/.local/state/donegate.",
)
_REASON_WIDTH = 70
MAX_LIMIT = 1_000_000
_MAX_ID = 2**63 - 1  # SQLite's largest integer


def _session(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not clean_text(value):
        raise click.BadParameter(f"a session id is UTF-8 text without NUL, got {value[:80]!r}")
    return value


@click.group(invoke_without_command=True)
@click.option(
    "--session", metavar="ID", callback=_session, help="Only this agent session's receipts."
)
@click.option(
    "--since", metavar="WHEN", help="Only receipts from WHEN on: 7d, 24h, 90m or an RFC 3339 time."
)
@click.option(
    "--verdict",
    type=click.Choice(["verified", "unverified", "refuted", "none"]),
    help="Only receipts with this verdict.",
)
@click.option("--limit", type=click.IntRange(min=1, max=MAX_LIMIT), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the receipts as JSON on stdout.")
@_STATE_DIR
@click.pass_context
def receipts(
    ctx: click.Context,
    session: str | None,
    since: str | None,
    verdict: str | None,
    limit: int,
    as_json: bool,
    state_dir: Path | None,
) -> int:
    """List recent receipts, newest first: session, time, verdict, decision and reason."""
    ctx.obj = state_dir
    if ctx.invoked_subcommand is not None:
        return 0
    start = parse_since(since) if since is not None else None
    with Ledger(state_dir) as ledger:
        found = ledger.query(since=start, verdict=verdict, session=session, limit=limit)
        if as_json:
            _print_json([r.to_json() for r in found])
        else:
            _print_table(found, ledger.path)
    return 0


@receipts.command()
@click.argument("receipt_id", type=click.IntRange(min=1, max=_MAX_ID), metavar="ID")
@click.option("--full", is_flag=True, help="The whole receipt (decision included), not the claim.")
@_STATE_DIR
@click.pass_obj
def show(group_state_dir: Path | None, receipt_id: int, full: bool, state_dir: Path | None) -> int:
    """Print receipt ID's claim document (JSON) on stdout."""
    with Ledger(state_dir or group_state_dir) as ledger:
        receipt = ledger.get(receipt_id)
    _print_json(receipt.to_json() if full else receipt.claim)
    return 0


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _print_table(found: list[Receipt], path: Path) -> None:
    if not found:
        click.echo(f"no receipts in {path}", err=True)
        return
    click.echo(f"{'ID':>5}  {'SESSION':20}  {'TIME':27}  {'VERDICT':10}  DECISION", err=True)
    for r in found:
        line = f"{r.id:>5}  {r.session_id[:20]:20}  {r.created_at:27}  {r.verdict:10}  {r.decision}"
        click.echo(f"{line}: {_short(r.reason)}" if r.reason else line, err=True)


def _short(reason: str) -> str:
    flat = " ".join(reason.split())
    return flat if len(flat) <= _REASON_WIDTH else flat[: _REASON_WIDTH - 3] + "..."
