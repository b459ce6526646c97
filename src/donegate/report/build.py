"""Build the report: read the window's receipts, count, draw, write one HTML file."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from donegate import statedir
from donegate.ledger import Damaged, Ledger, Receipt
from donegate.report import page, screenshots
from donegate.report.markup import Markup
from donegate.report.source import ReceiptSource
from donegate.report.summary import VERDICTS, Summary, summarise


def build(source: ReceiptSource, since: datetime | None, name: str) -> tuple[str, Summary]:
    """The report's HTML for ``source``'s receipts from ``since`` on, and its numbers.

    Screenshots the receipts name are looked for in the local ledger's state directory, then in
    this machine's default one (where a check keeps them when run without ``--state-dir``).
    """
    found_in = [statedir.resolve()]
    if isinstance(source, Ledger):  # its file can hold rows that do not read: they are shown
        found_in.insert(0, source.path.parent)
        damaged: list[Damaged] = []
        return render(source.query(since=since, damaged=damaged), since, name, damaged, found_in)
    return render(source.query(since=since), since, name, state_dirs=found_in)


def render(
    receipts: Sequence[Receipt],
    since: datetime | None,
    name: str,
    damaged: Sequence[Damaged] = (),
    state_dirs: Sequence[Path] = (),
) -> tuple[str, Summary]:
    """The report's HTML for ``receipts`` and the ``damaged`` rows, and its numbers; the
    screenshots the receipts name are looked for in ``state_dirs``."""
    summary = summarise(receipts, damaged)
    shots = screenshots.gather(summary.receipts, state_dirs)
    return page.render(summary, draw(summary), since, name, shots), summary


def draw(summary: Summary) -> dict[str, Markup]:
    """The plots as inline SVG, by name; none for an empty window."""
    if not summary.receipts:
        return {}
    from donegate.report import plots  # matplotlib: imported only when there is something to draw

    drawn = {
        "verdicts": plots.stacked_days("Stops per day by verdict", summary.per_day, VERDICTS),
        "decisions": plots.stacked_days(
            "Stops per day by decision",
            summary.decisions_per_day,
            ("let go", "let go, gate vetoed", "sent back"),
        ),
    }
    top = [(f"{kind}: {subject}", float(n)) for kind, subject, n, _ in summary.top_findings(12)]
    if top:
        drawn["findings"] = plots.ranked_bars("Top findings", top, "receipts")
    spent = list(summary.check_s.items())[:12]
    if spent:
        drawn["checks"] = plots.ranked_bars("Time spent in checks", spent, "s")
    return drawn
