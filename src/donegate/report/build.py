"""Build the report: read the window's receipts, count, draw, write one HTML file."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from donegate.ledger import Damaged, Ledger, Receipt
from donegate.report import page
from donegate.report.markup import Markup
from donegate.report.source import ReceiptSource
from donegate.report.summary import VERDICTS, Summary, summarise


def build(source: ReceiptSource, since: datetime | None, name: str) -> tuple[str, Summary]:
    """The report's HTML for ``source``'s receipts from ``since`` on, and its numbers."""
    if isinstance(source, Ledger):  # its file can hold rows that do not read: they are shown
        damaged: list[Damaged] = []
        return render(source.query(since=since, damaged=damaged), since, name, damaged)
    return render(source.query(since=since), since, name)


def render(
    receipts: Sequence[Receipt],
    since: datetime | None,
    name: str,
    damaged: Sequence[Damaged] = (),
) -> tuple[str, Summary]:
    """The report's HTML for ``receipts`` and the ``damaged`` rows, and its numbers."""
    summary = summarise(receipts, damaged)
    return page.render(summary, draw(summary), since, name), summary


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
