"""The one writer and the one reader of the moments donegate stores: receipts, snapshots,
journals, the gate's events, the team ledger.

One form, both ways: RFC 3339 in UTC, to the microsecond, with ``Z``. A claim's instants, which
agents write in any RFC 3339 form, are read by :mod:`donegate.instant`; this module is light on
purpose: a hook that changed nothing still reads its snapshot's time, and must not load the
instant parser's tables (and ``typing``) to do it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

# What rfc3339() writes, and nothing else: ASCII digits, microseconds, Z.
_OWN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")


def rfc3339(value: datetime) -> str:
    """The one text donegate writes for a moment: RFC 3339 in UTC, to the microsecond, ``Z``."""
    if value.tzinfo is None:
        raise ValueError("a naive datetime is not an instant")
    return value.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_rfc3339(text: str) -> datetime:
    """The aware UTC datetime of a text :func:`rfc3339` wrote.

    ``ValueError`` for anything else: another form, a naive time, a day that does not exist.
    """
    if not _OWN.fullmatch(text):
        example = "2026-12-01T10:00:00.000000Z"
        raise ValueError(f"expected a time as donegate writes one ({example}), got {text[:80]!r}")
    return datetime.fromisoformat(text)  # the day and the time of day are checked here
