"""Record values as JSON, keeping their types: a decimal is a number, a time an RFC 3339 string.

The comparison is strictly typed (``"94107"`` is not ``94107``), so a value must keep the type the
system of record gave it rather than become whatever text its driver prints.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from pydantic import JsonValue


def to_json(value: object) -> JsonValue:
    """``value`` as a JSON value; anything without a JSON type becomes its text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float | Decimal):
        return _number(value)
    if isinstance(value, datetime | date | time):
        return _time(value)
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bytes | bytearray | memoryview):
        return _bytes(bytes(value))
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_json(item) for item in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)


def record(mapping: Mapping[str, object]) -> dict[str, JsonValue]:
    """A record (column or field name -> value) as a JSON object."""
    return {str(k): to_json(v) for k, v in mapping.items()}


def _number(value: float | Decimal) -> JsonValue:
    if not math.isfinite(value):
        return str(value)  # JSON has no NaN or infinity; text never equals a number
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return float(value)


def _time(value: datetime | date | time) -> str:
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    # A naive time names no instant; it is reported as stored, without inventing an offset.
    return value.isoformat()


def _bytes(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.hex()
