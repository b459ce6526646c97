"""``--since``: a time window as ``7d``, ``24h``, ``90m`` or an RFC 3339 instant."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from donegate.errors import InvalidInput
from donegate.instant import Instant

_SPAN = re.compile(r"^(\d+)([dhm])$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """The instant ``text`` names: a span back from ``now`` (``7d``) or an RFC 3339 instant."""
    span = _SPAN.match(text.strip())
    if span is not None:
        amount, unit = int(span.group(1)), _UNITS[span.group(2)]
        try:
            return (now or datetime.now(UTC)) - timedelta(**{unit: amount})
        except OverflowError:  # past the year 1, or more days than a timedelta holds
            raise InvalidInput(f"--since {text.strip()} reaches back before the year 1") from None
    try:
        return Instant.parse(text.strip()).value
    except ValueError as exc:
        raise InvalidInput(
            f"--since must be a span like 7d, 24h or 90m, or an RFC 3339 instant; got {text!r} "
            f"({exc})"
        ) from None
