"""Receipts the report cannot count: a row that did not read, or values no stop writes.

A corrupt receipt is shown as one (counted in a tile, listed with why, said on stderr) and
left out of every other number; it never ends the report and never drops out unseen. Sorting
them out first is what lets the counting and drawing trust each receipt they are given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from donegate.jsontext import MAX_DEPTH
from donegate.ledger import Damaged, Receipt
from donegate.record import Record
from donegate.report.findings import check_seconds
from donegate.timefmt import parse_rfc3339

# The form the ledgers store (2026-11-30T08:00:00.000000Z): the report compares and groups
# times as text, which is exact only for this one form.
_STORED_INSTANT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")
_TEXT = ("session_id", "host", "workspace", "created_at", "verdict", "decision")
_TEXT_OR_NONE = ("reason", "uuid", "machine")
_VERDICTS = ("verified", "unverified", "refuted", "none")
_DECISIONS = ("allow", "veto")
_NESTS = (dict, list)  # what JSON arrays and objects are read as


class Corrupt(Record):
    """A receipt left out of the numbers: its id, its time as stored, and why."""

    receipt_id: int
    created_at: str
    why: str


def sort_out(
    receipts: Iterable[Receipt], damaged: Sequence[Damaged] = ()
) -> tuple[list[Receipt], list[Corrupt]]:
    """The receipts fit to count, and the corrupt ones (``damaged`` rows first) by id."""
    good: list[Receipt] = []
    corrupt = [
        Corrupt(row.id, row.created_at, f"its row does not read: {row.why}") for row in damaged
    ]
    for receipt in receipts:
        why = flaw(receipt)
        if why is None:
            good.append(receipt)
        else:
            corrupt.append(Corrupt(receipt.id, str(receipt.created_at), why))
    return good, sorted(corrupt, key=lambda c: c.receipt_id)


def flaw(receipt: Receipt) -> str | None:
    """What makes ``receipt`` unfit to count, or None when nothing does."""
    return _types(receipt) or _time(receipt.created_at) or _documents(receipt) or _seconds(receipt)


def _types(receipt: Receipt) -> str | None:
    for name in (*_TEXT, *_TEXT_OR_NONE):
        value = getattr(receipt, name)
        if not isinstance(value, str) and (value is not None or name in _TEXT):
            return f"its {name} is {type(value).__name__}, not text"
    if receipt.verdict not in _VERDICTS or receipt.decision not in _DECISIONS:
        said = f"verdict {short(receipt.verdict)!r}, decision {short(receipt.decision)!r}"
        return f"its {said}: not ones a stop records"
    return None


def _time(text: str) -> str | None:
    if _STORED_INSTANT.fullmatch(text) is None:
        return f"its time {short(text)!r} is not an instant (a date and a time of day, UTC)"
    try:
        parse_rfc3339(text)
    except ValueError:
        return f"its time {text!r} is not a day and a time that exist"
    return None


def _documents(receipt: Receipt) -> str | None:
    for name, document in (("claim", receipt.claim), ("decision", receipt.decision_doc)):
        if not isinstance(document, dict):
            return f"its {name} document is {type(document).__name__}, not an object"
        # The page prints the documents, and Python's printer recurses: a bound keeps it safe.
        if _deeper_than(document, MAX_DEPTH):
            return f"its {name} document is nested more than {MAX_DEPTH} levels deep"
    return None


def _deeper_than(document: dict[str, Any], bound: int) -> bool:
    # Level by level, keeping only the arrays and objects: half the time of jsontext.depth's
    # walk of every value, which cost a report of 19,000 receipts 0.8 s.
    level: list[Any] = [document]
    for _ in range(bound):
        below: list[Any] = []
        for item in level:
            below += [
                v for v in (item.values() if type(item) is dict else item) if type(v) in _NESTS
            ]
        if not below:
            return False
        level = below
    return True


def _seconds(receipt: Receipt) -> str | None:
    try:
        check_seconds(receipt)
    except ValueError as exc:
        return str(exc)
    return None


def said(corrupt: Sequence[Corrupt], most: int = 10) -> str:
    """The corrupt receipts in one line for a person: the first ``most`` with why."""
    listed = "; ".join(f"#{c.receipt_id}: {short(c.why, 120)}" for c in corrupt[:most])
    more = f"; and {len(corrupt) - most} more" if len(corrupt) > most else ""
    return f"{len(corrupt)} corrupt receipts not counted ({listed}{more}); the report lists them"


def short(text: str, width: int = 60) -> str:
    """``text`` cut to ``width`` characters, saying how long it was."""
    return text if len(text) <= width else f"{text[: width - 20]}… ({len(text)} characters)"
