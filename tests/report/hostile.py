"""Receipts whose every string is hostile markup, written into a real ledger.

Each receipt takes a different path through the report (a failing test, a protected write, a
gate failure, a stop block would have sent back, a tamper note, a trace), so that every field
the page shows holds one of :data:`PAYLOADS`.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from typing import Any

from donegate.ledger import FILE_NAME, Ledger

# Script that would set window.__pwned, elements that would carry the id "dg-injected", and the
# ways out of an attribute, a comment (matplotlib's SVG writes some), a title and a style.
PAYLOADS = (
    "<script>window.__pwned=1</script>",
    "<img src=x onerror=\"window.__pwned=2\" id='dg-injected'>",
    "\"'><b id=dg-injected>b</b>",
    "--><svg onload=window.__pwned=3 id=dg-injected></svg>",
    "</title></style></textarea><script>window.__pwned=4</script>",
    "&lt;script&gt;window.__pwned=5&lt;/script&gt;",
)


def fill(ledger: Ledger, now: datetime | None = None) -> list[int]:
    """One receipt per payload, each down every path; their ids (uuids set to payloads too)."""
    now = now or datetime.now(UTC)
    ids = [
        _record(ledger, payload, now - timedelta(hours=i + 1), i)
        for i, payload in enumerate(PAYLOADS)
    ]
    with sqlite3.connect(ledger.path.parent / FILE_NAME) as db:  # uuid is never given to record
        db.executemany(
            "UPDATE receipts SET uuid = ? WHERE id = ?",
            [(payload, rid) for payload, rid in zip(PAYLOADS, ids, strict=True)],
        )
    db.close()
    return ids


def _record(ledger: Ledger, text: str, at: datetime, i: int) -> int:
    # Even receipts: the gate failed; odd ones: vetoed but let go, so block would send them back.
    failed = i % 2 == 0
    return ledger.record(
        session_id=text,
        host=text,
        workspace=text,
        verdict="unverified",
        decision="allow",
        reason="donegate_error" if failed else text,
        claim=_claim(text),
        decision_doc=_decision_doc(text, failed),
        created_at=at,
        machine=text,
    )


def _claim(text: str) -> dict[str, Any]:
    detail = {"check": text, "elapsed_s": 3.0, "failing": [text], "why_not_counted": text}
    item = {
        "check_type": text,
        "target": text,
        "at": text,
        "detail": detail,
        "donegate_note": text,
        text: text,  # a key is a string too
    }
    protected = {"check_type": text, "detail": {"protected_write": text, "why_not_counted": text}}
    timeout = {
        "check_type": text,
        "detail": {"check": text, "why_not_counted": f"timed out {text}"},
    }
    return {
        "task": {"id": text},
        "claimed_outcome": text,
        "evidence": [item, protected, timeout],
        "verdict": {"state": text, "reason": text},
    }


def _decision_doc(text: str, failed: bool) -> dict[str, Any]:
    trace = [{"rule": text, "reason": text, "fired": True}]
    gate = None if failed else {"confirm": False, "reason": text, "trace": trace}
    return {
        "host_event": text,
        "on_unverified": text,
        "error": text,
        "gate": gate,
        "answer": {"decision": text, "reason": text, "notice": text},
    }
