"""What a receipt's evidence found: failing tests, protected-file writes, tampering, timeouts.

Read from the claim document's evidence details as the collectors wrote them (``failing``,
``protected_write``, ``why_not_counted``), and from the gate's own failures (``donegate_error``,
``interrupted``). A receipt's findings are what a person should look at first.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from donegate.ledger import Receipt
from donegate.record import Record

FAILING_TEST = "failing test"
PROTECTED_WRITE = "protected-file write"
TAMPER = "tamper finding"
TIMEOUT = "timeout"
NOT_COUNTED = "evidence not counted"
GATE_FAILURE = "donegate failure"
KINDS = (FAILING_TEST, PROTECTED_WRITE, TAMPER, TIMEOUT, NOT_COUNTED, GATE_FAILURE)
MAX_SECONDS = 1e9
"""The longest a check can have run (31 years): beyond it, an elapsed time is no measurement."""
# Words in a collector's why_not_counted that say something rewrote what judges the run.
_TAMPER_WORDS = ("rewrote", "tamper", "forged", "claims donegate's verifier id")


class Finding(Record):
    """One thing found: its kind, what it is about (a test, a file, a check) and the receipt."""

    kind: str
    subject: str
    receipt_id: int
    why: str = ""


def findings(receipt: Receipt) -> list[Finding]:
    """Everything ``receipt`` found, in the order of its evidence."""
    found = list(_from_evidence(receipt))
    if receipt.reason in ("donegate_error", "interrupted"):
        error = receipt.decision_doc.get("error")
        why = error if isinstance(error, str) else receipt.reason
        found.append(Finding(GATE_FAILURE, receipt.reason, receipt.id, why))
    return found


def _from_evidence(receipt: Receipt) -> Iterator[Finding]:
    evidence = receipt.claim.get("evidence")
    for item in evidence if isinstance(evidence, list) else []:
        if not isinstance(item, dict):
            continue
        detail = item.get("detail") if isinstance(item.get("detail"), dict) else {}
        assert isinstance(detail, dict)
        label = str(detail.get("check") or item.get("check_type") or "check")
        yield from _from_detail(receipt.id, label, detail)
        note = item.get("donegate_note")
        if isinstance(note, str):
            yield Finding(TAMPER, label, receipt.id, note)


def _from_detail(receipt_id: int, label: str, detail: dict[str, Any]) -> Iterator[Finding]:
    failing = detail.get("failing")
    for name in failing if isinstance(failing, list) else []:
        yield Finding(FAILING_TEST, str(name), receipt_id, label)
    protected = detail.get("protected_write")
    why = detail.get("why_not_counted")
    why_text = why if isinstance(why, str) else ""
    if isinstance(protected, str):
        yield Finding(PROTECTED_WRITE, protected, receipt_id, why_text)
    elif why_text:
        yield Finding(_kind_of(why_text), label, receipt_id, why_text)


def _kind_of(why: str) -> str:
    lowered = why.lower()
    if "timed out" in lowered or "timeout" in lowered:
        return TIMEOUT
    if any(word in lowered for word in _TAMPER_WORDS):
        return TAMPER
    return NOT_COUNTED


def check_seconds(receipt: Receipt) -> dict[str, float]:
    """Seconds spent in each check of ``receipt`` (its evidence's ``elapsed_s``), by label.

    A number no check can have taken (negative, not finite, over :data:`MAX_SECONDS`) is a
    ``ValueError``: the receipt is corrupt, and its sum would overflow the report's.
    """
    spent: dict[str, float] = {}
    evidence = receipt.claim.get("evidence")
    for item in evidence if isinstance(evidence, list) else []:
        detail = item.get("detail") if isinstance(item, dict) else None
        if not isinstance(detail, dict):
            continue
        seconds = detail.get("elapsed_s", detail.get("duration_s"))
        if isinstance(seconds, int | float) and not isinstance(seconds, bool):
            label = str(detail.get("check") or item.get("check_type") or "check")
            spent[label] = spent.get(label, 0.0) + _measured(seconds)
    return spent


def _measured(seconds: float) -> float:
    # Compared before float(): an int of 400 digits has no float, and NaN fails every bound.
    if not 0 <= seconds <= MAX_SECONDS:
        text = repr(seconds)
        shown = text if len(text) <= 24 else f"{text[:6]}… ({len(text)} digits)"
        raise ValueError(f"its elapsed time {shown} s is not one a check can take")
    return float(seconds)
