"""The report as one HTML document: inline CSS and SVG, no script, nothing fetched.

Receipt pages are sections shown one at a time through the URL's fragment (``:target``), so a
click on a receipt opens its page and the browser's Back returns, with no script at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from html import escape
from typing import Any

from donegate.ledger import Receipt
from donegate.report.findings import findings
from donegate.report.summary import VERDICTS, Group, Summary, mode_of, would_block

MAX_RECEIPT_PAGES = 500
_CSS = """
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
"""


def render(summary: Summary, plots: dict[str, str], since: datetime | None, source: str) -> str:
    """The whole page."""
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width'>",
        "<title>donegate report</title>",
        f"<style>{_CSS}</style></head><body>",
        _header(summary, since, source),
        "<main>",
        _overview(summary),
        _figure("per-day", "Stops per day", plots.get("verdicts"), _per_day_table(summary)),
        _figure("decisions", "Decisions per day", plots.get("decisions"), ""),
        _would_block_section(summary),
        _findings_section(summary, plots.get("findings")),
        _groups_section(summary),
        _figure("checks", "Time spent in checks", plots.get("checks"), _checks_table(summary)),
        _receipts_section(summary.receipts),
        "</main></body></html>",
    ]
    return "\n".join(parts)


def _header(summary: Summary, since: datetime | None, source: str) -> str:
    start = since.isoformat(timespec="minutes") if since else "the first receipt"
    links = "".join(
        f"<a href='#{anchor}'>{name}</a>"
        for anchor, name in [
            ("overview", "Overview"),
            ("per-day", "Per day"),
            ("would-block", "What block would do"),
            ("findings", "Findings"),
            ("groups", "Repositories and agents"),
            ("checks", "Check time"),
            ("receipts", "Receipts"),
        ]
    )
    return (
        f"<header><h1>donegate report</h1><p>Stops from {escape(start)} on, read from "
        f"{escape(source)}: {len(summary.receipts)} receipts.</p><nav>{links}</nav></header>"
    )


def _overview(summary: Summary) -> str:
    wb = summary.would_block
    tiles = [
        ("stops", len(summary.receipts), "stops recorded"),
        ("claims", summary.claims, "“done” claims (stops with writes to verify)"),
        (
            "not-verified",
            f"{summary.share_not_verified:.0%}",
            f"of “done” claims not verified ({summary.not_verified} of {summary.claims})",
        ),
        ("would-block", wb.stops, "stops block would have sent back"),
    ]
    html = "".join(
        f"<div class='tile' id='tile-{key}'><b>{escape(str(value))}</b>{escape(text)}</div>"
        for key, value, text in tiles
    )
    return f"<section id='overview'><h2>Overview</h2><div class='tiles'>{html}</div></section>"


def _figure(anchor: str, title: str, svg: str | None, after: str) -> str:
    drawn = f"<figure>{svg}<figcaption>{escape(title)}</figcaption></figure>" if svg else ""
    return f"<section id='{anchor}'><h2>{escape(title)}</h2>{drawn}{after}</section>"


def _per_day_table(summary: Summary) -> str:
    rows = [
        [day, *(counts[v] for v in VERDICTS), sum(counts.values())]
        for day, counts in summary.per_day.items()
    ]
    return _table(["day", *VERDICTS, "stops"], rows)


def _would_block_section(summary: Summary) -> str:
    wb = summary.would_block
    modes = ", ".join(f"{n} under {m}" for m, n in wb.by_mode.most_common()) or "none"
    text = (
        f"<p id='would-block-text'>Under <code>on_unverified = \"block\"</code>, "
        f"<b>{wb.stops}</b> stops recorded under record/warn would have been sent back ({modes}), "
        f"in <b>{len(wb.sessions)}</b> sessions; <b>{len(wb.verified_later)}</b> of those "
        "sessions later verified anyway.</p>"
    )
    rows = [
        [_link(r), r.session_id, r.created_at, r.verdict, r.reason or "", mode_of(r)]
        for r in summary.receipts
        if would_block(r)
    ][-50:]
    table = _table(["receipt", "session", "time", "verdict", "gate's reason", "mode"], rows)
    return f"<section id='would-block'><h2>What block would have done</h2>{text}{table}</section>"


def _findings_section(summary: Summary, svg: str | None) -> str:
    rows = [
        [kind, subject, count, _Html(" ".join(_link_id(i) for i in ids[:8]))]
        for kind, subject, count, ids in summary.top_findings()
    ]
    table = _table(["kind", "about", "times", "receipts"], rows)
    drawn = f"<figure>{svg}<figcaption>Top findings</figcaption></figure>" if svg else ""
    return f"<section id='findings'><h2>Top findings</h2>{drawn}{table}</section>"


def _groups_section(summary: Summary) -> str:
    parts = ["<section id='groups'><h2>Repositories, machines, agents and sessions</h2>"]
    for title, groups in [
        ("Repository (workspace)", summary.by_workspace),
        ("Machine", summary.by_machine),
        ("Agent", summary.by_agent),
        ("Session", summary.by_session[:100]),
    ]:
        parts.append(f"<h3>{escape(title)}</h3>")
        parts.append(_group_table(title, groups))
    return "".join(parts) + "</section>"


def _group_table(title: str, groups: Sequence[Group]) -> str:
    rows = [
        [
            g.name,
            g.stops,
            *(g.verdicts[v] for v in VERDICTS),
            g.vetoes,
            g.would_block,
            f"{g.check_s:.1f}",
            _link_id(g.last_receipt),
        ]
        for g in groups
    ]
    head = [
        title.split(maxsplit=1)[0].lower(),
        "stops",
        *VERDICTS,
        "sent back",
        "block would send back",
    ]
    return _table([*head, "check s", "last receipt"], rows)


def _checks_table(summary: Summary) -> str:
    rows = [[name, f"{seconds:.1f}"] for name, seconds in summary.check_s.items()]
    return _table(["check", "seconds"], rows)


def _receipts_section(receipts: Sequence[Receipt]) -> str:
    newest = sorted(receipts, key=lambda r: (r.created_at, r.id), reverse=True)
    shown = newest[:MAX_RECEIPT_PAGES]
    rows = [
        [_link(r), r.created_at, r.session_id, r.workspace, r.verdict, r.decision, r.reason or ""]
        for r in shown
    ]
    more = len(newest) - len(shown)
    note = f"<p>{more} older receipts are not listed: narrow --since.</p>" if more > 0 else ""
    table = _table(
        ["receipt", "time", "session", "repository", "verdict", "decision", "reason"], rows
    )
    pages = "".join(_receipt_page(r) for r in shown)
    return f"<section id='receipts'><h2>Receipts</h2>{note}{table}</section>{pages}"


def _receipt_page(r: Receipt) -> str:
    found = findings(r)
    rows = [[f.kind, f.subject, f.why] for f in found]
    gate = r.decision_doc.get("gate")
    trace = gate.get("trace", []) if isinstance(gate, dict) else []
    trace_rows = [
        [step.get("rule", ""), step.get("reason", ""), "fired" if step.get("fired") else ""]
        for step in trace
        if isinstance(step, dict)
    ]
    return (
        f"<section class='receipt' id='receipt-{r.id}'><h2>Receipt {r.id}</h2>"
        f"<p><a href='#receipts'>Back to the receipts</a></p>"
        + _table(
            ["field", "value"],
            [
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
            ],
        )
        + "<h3>Findings</h3>"
        + (_table(["kind", "about", "why"], rows) if rows else "<p>No findings.</p>")
        + "<h3>The gate's trace</h3>"
        + (_table(["rule", "reason", ""], trace_rows) if trace_rows else "<p>No trace.</p>")
        + "<h3>Claim document</h3>"
        + f"<pre>{escape(_pretty(r.claim))}</pre>"
        + "<h3>Decision document</h3>"
        + f"<pre>{escape(_pretty(r.decision_doc))}</pre></section>"
    )


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


class _Html(str):
    """Markup made here (a link), put in a cell as it is."""


def _cell(value: Any) -> str:
    if isinstance(value, _Html):
        return f"<td>{value}</td>"
    if isinstance(value, int | float):
        return f"<td class='n'>{value}</td>"
    text = escape(str(value))
    return f"<td class='mark-{text}'>{text}</td>" if value in VERDICTS else f"<td>{text}</td>"


def _link(r: Receipt) -> _Html:
    return _link_id(r.id)


def _link_id(receipt_id: int) -> _Html:
    return _Html(f"<a href='#receipt-{receipt_id}'>#{receipt_id}</a>")


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
