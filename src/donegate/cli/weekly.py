"""``donegate report``: a window of receipts (a week by default) as one offline HTML file.

Named ``weekly`` because :mod:`donegate.cli.report` is the shared verdict summary.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import click

from donegate.errors import InvalidInput
from donegate.ledger import Ledger
from donegate.report.window import parse_since


@click.command()
@click.option("--since", default="7d", show_default=True, help="7d, 24h, 90m or an RFC 3339 time.")
@click.option(
    "--ledger",
    "ledger_url",
    metavar="URL",
    help="A team ledger (postgresql://...); default: the local ledger.",
)
@click.option("--schema", help="The team ledger's PostgreSQL schema (default: donegate).")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("donegate-report.html"),
    show_default=True,
)
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the local ledger lives; default $DONEGATE_STATE_DIR, else ~/.local/state/donegate.",
)
def report(
    since: str, ledger_url: str | None, schema: str | None, output: Path, state_dir: Path | None
) -> int:
    """Write an HTML report of the receipts since SINCE: verdicts, findings, what block would do."""
    if importlib.util.find_spec("matplotlib") is None:
        raise InvalidInput("donegate report draws with matplotlib: pip install 'donegate[report]'")
    from donegate.report.build import build
    from donegate.report.corrupt import said

    start = parse_since(since)
    if ledger_url is not None:
        from donegate.teamledger.settings import DEFAULT_SCHEMA
        from donegate.teamledger.store import TeamLedger

        with TeamLedger(ledger_url, schema or DEFAULT_SCHEMA) as team:
            html, summary = build(team, start, team.name)
    else:
        with Ledger(state_dir) as local:
            html, summary = build(local, start, str(local.path))
    try:
        output.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot write the report to {output}: {exc.strerror or exc}") from None
    click.echo(
        f"donegate: {len(summary.receipts)} receipts, {summary.not_verified} of "
        f"{summary.claims} done claims not verified; report written to {output}",
        err=True,
    )
    if summary.corrupt:
        click.echo(f"donegate: {said(summary.corrupt)}", err=True)
    return 0
