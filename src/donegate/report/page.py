"""The report as one HTML document: inline CSS and SVG, no script, nothing fetched.

Receipt pages are sections shown one at a time through the URL's fragment (``:target``), so a
click on a receipt opens its page and the browser's Back returns, with no script at all.

Every piece is :class:`~donegate.report.markup.Markup` made by :func:`~.markup.html`, which
escapes each value it fills in: a receipt's text cannot become markup, whatever it holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from donegate.ledger import Receipt
from donegate.report import screenshots
from donegate.report.corrupt import Corrupt, short
from donegate.report.findings import findings
from donegate.report.markup import Markup, html, join
from donegate.report.screenshots import Shot
from donegate.report.summary import VERDICTS, Group, Summary, mode_of, would_block

MAX_RECEIPT_PAGES = 500
_CSS = Markup("""
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#111;background:#fff}
header,main{max-width:1100px;margin:0 auto;padding:0 1.2em}
nav a{margin-right:1em}
h1{margin:.6em 0 .1em}
.tiles{display:flex;flex-wrap:wrap;gap:.8em;margin:1em 0}
.tile{border:2px solid #333;border-radius:6px;padding:.5em .9em;min-width:11em}
.tile b{display:block;font-size:1.9em}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.92em}
th,td{border-bottom:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f4f4f4;padding:.8em;overflow:auto;max-height:32em;font-size:.85em}
figure{margin:1em 0}
figcaption{font-size:.9em;color:#333}
.receipt{display:none;border-top:3px solid #333}
.receipt:target{display:block}
.mark-refuted,.mark-unverified{font-weight:bold}
.screenshot img{max-width:100%;border:1px solid #999}
""")
_NAV = [
    ("overview", "Overview"),
    ("per-day", "Per day"),
    ("would-block", "What block would do"),
    ("findings", "Findings"),
    ("groups", "Repositories and agents"),
    ("checks", "Check time"),
    ("receipts", "Receipts"),
    ("corrupt", "Corrupt receipts"),
]


def render(
    summary: Summary,
    plots: dict[str, Markup],
    since: datetime | None,
    source: str,
    shots: Mapping[str, Shot] | None = None,
) -> Markup:
    """The whole page; ``shots`` are the screenshots found for the receipts, by hash."""
    parts = [
        html("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"),
        html("<meta name='viewport' content='width=device-width'>"),
        html("<title>donegate report</title><style>{}</style></head><body>", _CSS),
        _header(summary, since, source),
        html("<main>"),
        _overview(summary),
        _figure("per-day", "Stops per day", plots.get("verdicts"), _per_day_table(summary)),
        _figure("decisions", "Decisions per day", plots.get("decisions"), Markup()),
        _would_block_section(summary),
        _figure("findings", "Top findings", plots.get("findings"), _findings_table(summary)),
        _groups_section(summary),
        _figure("checks", "Time spent in checks", plots.get("checks"), _checks_table(summary)),
        _receipts_section(summary.receipts, shots or {}),
        _corrupt_section(summary.corrupt),
        html("</main></body></html>"),
    ]
    return join(parts, "\n")


def _header(summary: Summary, since: datetime | None, source: str) -> Markup:
    start = since.isoformat(timespec="minutes") if since else "the first receipt"
    links = join(html("<a href='#{}'>{}</a>", anchor, name) for anchor, name in _NAV)
    return html(
        "<header><h1>donegate report</h1><p>Stops from {} on, read from {}: {} receipts.</p>"
        "<nav>{}</nav></header>",
        start,
        source,
        len(summary.receipts),
        links,
    )


def _overview(summary: Summary) -> Markup:
    not_verified = f"{summary.share_not_verified:.0%}"
    of = f"of “done” claims not verified ({summary.not_verified} of {summary.claims})"
    tiles = [
        ("stops", len(summary.receipts), "stops recorded"),
        ("claims", summary.claims, "“done” claims (stops with writes to verify)"),
        ("not-verified", not_verified, of),
        ("would-block", summary.would_block.stops, "stops block would have sent back"),
        ("corrupt", len(summary.corrupt), "corrupt receipts, not counted (listed below)"),
    ]
    shown = join(
        html("<div class='tile' id='tile-{}'><b>{}</b>{}</div>", key, value, text)
        for key, value, text in tiles
    )
    return html(
        "<section id='overview'><h2>Overview</h2><div class='tiles'>{}</div></section>", shown
    )


def _figure(anchor: str, title: str, svg: Markup | None, after: Markup) -> Markup:
    drawn = html("<figure>{}<figcaption>{}</figcaption></figure>", svg, title) if svg else Markup()
    return html("<section id='{}'><h2>{}</h2>{}{}</section>", anchor, title, drawn, after)


def _per_day_table(summary: Summary) -> Markup:
    rows = [
        [day, *(counts[v] for v in VERDICTS), sum(counts.values())]
        for day, counts in summary.per_day.items()
    ]
    return _table(["day", *VERDICTS, "stops"], rows)


def _would_block_section(summary: Summary) -> Markup:
    wb = summary.would_block
    modes = ", ".join(f"{n} under {m}" for m, n in wb.by_mode.most_common()) or "none"
    text = html(
        "<p id='would-block-text'>Under <code>on_unverified = \"block\"</code>, <b>{}</b> stops "
        "recorded under record/warn would have been sent back ({}), in <b>{}</b> sessions; "
        "<b>{}</b> of those sessions later verified anyway.</p>",
        wb.stops,
        modes,
        len(wb.sessions),
        len(wb.verified_later),
    )
    rows = [
        [_link(r.id), r.session_id, r.created_at, r.verdict, r.reason or "", mode_of(r)]
        for r in summary.receipts
        if would_block(r)
    ][-50:]
    table = _table(["receipt", "session", "time", "verdict", "gate's reason", "mode"], rows)
    return html(
        "<section id='would-block'><h2>What block would have done</h2>{}{}</section>", text, table
    )


def _findings_table(summary: Summary) -> Markup:
    rows = [
        [kind, subject, count, join((_link(i) for i in ids[:8]), " ")]
        for kind, subject, count, ids in summary.top_findings()
    ]
    return _table(["kind", "about", "times", "receipts"], rows)


def _groups_section(summary: Summary) -> Markup:
    tables = join(
        html("<h3>{}</h3>{}", title, _group_table(title, groups))
        for title, groups in [
            ("Repository (workspace)", summary.by_workspace),
            ("Machine", summary.by_machine),
            ("Agent", summary.by_agent),
            ("Session", summary.by_session[:100]),
        ]
    )
    return html(
        "<section id='groups'><h2>Repositories, machines, agents and sessions</h2>{}</section>",
        tables,
    )


def _group_table(title: str, groups: Sequence[Group]) -> Markup:
    rows = [
        [
            g.name,
            g.stops,
            *(g.verdicts[v] for v in VERDICTS),
            g.vetoes,
            g.would_block,
            f"{g.check_s:.1f}",
            _link(g.last_receipt),
        ]
        for g in groups
    ]
    head = [title.split(maxsplit=1)[0].lower(), "stops", *VERDICTS]
    return _table([*head, "sent back", "block would send back", "check s", "last receipt"], rows)


def _checks_table(summary: Summary) -> Markup:
    rows = [[name, f"{seconds:.1f}"] for name, seconds in summary.check_s.items()]
    return _table(["check", "seconds"], rows)


def _receipts_section(receipts: Sequence[Receipt], shots: Mapping[str, Shot]) -> Markup:
    newest = sorted(receipts, key=lambda r: (r.created_at, r.id), reverse=True)
    shown = newest[:MAX_RECEIPT_PAGES]
    rows = [
        [
            _link(r.id),
            r.created_at,
            r.session_id,
            r.workspace,
            r.verdict,
            r.decision,
            r.reason or "",
        ]
        for r in shown
    ]
    more = len(newest) - len(shown)
    note = html("<p>{} older receipts are not listed: narrow --since.</p>", more)
    table = _table(
        ["receipt", "time", "session", "repository", "verdict", "decision", "reason"], rows
    )
    pages = join(_receipt_page(r, shots) for r in shown)
    return html(
        "<section id='receipts'><h2>Receipts</h2>{}{}</section>{}",
        note if more > 0 else "",
        table,
        pages,
    )


def _corrupt_section(corrupt: Sequence[Corrupt]) -> Markup:
    rows = [[c.receipt_id, short(c.created_at), c.why] for c in corrupt]
    table = _table(["receipt", "time as stored", "why it is not counted"], rows)
    return html(
        "<section id='corrupt'><h2>Corrupt receipts</h2><p>{} receipts could not be counted: "
        "their rows do not read, or hold values no stop records.</p>{}</section>",
        len(corrupt),
        table if rows else "",
    )


def _receipt_page(r: Receipt, shots: Mapping[str, Shot]) -> Markup:
    fields = [
        ["session", r.session_id],
        ["time", r.created_at],
        ["repository", r.workspace],
        ["machine", r.machine or ""],
        ["agent", r.host],
        ["verdict", r.verdict],
        ["decision", r.decision],
        ["gate's reason", r.reason or ""],
        ["on_unverified", mode_of(r)],
        ["receipt uuid", r.uuid or ""],
    ]
    return html(
        "<section class='receipt' id='receipt-{id}'><h2>Receipt {id}</h2>"
        "<p><a href='#receipts'>Back to the receipts</a></p>{fields}"
        "<h3>Findings</h3>{found}{screenshots}<h3>The gate's trace</h3>{trace}"
        "<h3>Claim document</h3><pre>{claim}</pre>"
        "<h3>Decision document</h3><pre>{decision}</pre></section>",
        id=r.id,
        fields=_table(["field", "value"], fields),
        found=_findings_of(r),
        screenshots=screenshots.shown(r.claim, shots),
        trace=_trace_of(r),
        claim=_pretty(r.claim),
        decision=_pretty(r.decision_doc),
    )


def _findings_of(r: Receipt) -> Markup:
    rows = [[f.kind, f.subject, f.why] for f in findings(r)]
    return _table(["kind", "about", "why"], rows) if rows else html("<p>No findings.</p>")


def _trace_of(r: Receipt) -> Markup:
    gate = r.decision_doc.get("gate")
    trace = gate.get("trace", []) if isinstance(gate, dict) else []
    rows = [
        [step.get("rule", ""), step.get("reason", ""), "fired" if step.get("fired") else ""]
        for step in trace
        if isinstance(step, dict)
    ]
    return _table(["rule", "reason", ""], rows) if rows else html("<p>No trace.</p>")


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]]) -> Markup:
    th = join(html("<th>{}</th>", h) for h in head)
    body = join(html("<tr>{}</tr>", join(_cell(v) for v in row)) for row in rows)
    return html("<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>", th, body)


def _cell(value: Any) -> Markup:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return html("<td class='n'>{}</td>", value)
    if isinstance(value, str) and value in VERDICTS:  # a known word: safe as a class name
        return html("<td class='mark-{}'>{}</td>", value, value)
    return html("<td>{}</td>", value)


def _link(receipt_id: int) -> Markup:
    return html("<a href='#receipt-{}'>#{}</a>", receipt_id, receipt_id)


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
