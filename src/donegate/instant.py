"""Instants: RFC 3339 timestamps with an offset, compared as points in time.

The spec's rules compare times, so a timestamp that is not an instant (a naive time, a date,
an epoch number) is rejected rather than guessed at. The original text is kept so that a
document written back reads as it was submitted.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any, Self

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

RFC3339_PATTERN = r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
_RFC3339 = re.compile(RFC3339_PATTERN)


class Instant:
    """A point in time parsed from RFC 3339 text with an explicit offset.

    Fractional seconds beyond microseconds are truncated; every comparison the rules make with a
    truncated time errs towards "does not count" (later evidence looks earlier, fresh looks older).
    """

    __slots__ = ("text", "value")

    text: str
    value: datetime

    def __init__(self, text: str, value: datetime) -> None:
        self.text = text
        self.value = value

    @classmethod
    def parse(cls, text: str) -> Self:
        """Parse RFC 3339 ``text``; raise ``ValueError`` saying what is wrong."""
        if _RFC3339.match(text) is None:
            raise ValueError(_why_not_rfc3339(text))
        try:
            # The pattern fixed the shape; fromisoformat reads exactly that shape (and truncates
            # digits past microseconds) once the letters are upper case.
            value = datetime.fromisoformat(text.upper())
        except ValueError as exc:
            raise ValueError(f"not a real date and time: {text!r} ({exc})") from None
        return cls(text, value)

    @classmethod
    def from_datetime(cls, value: datetime) -> Self:
        """An instant from an aware datetime, written as UTC with microseconds."""
        if value.tzinfo is None:
            raise ValueError("a naive datetime is not an instant")
        utc = value.astimezone(UTC)
        return cls(utc.isoformat(timespec="microseconds").replace("+00:00", "Z"), utc)

    @classmethod
    def now(cls) -> Self:
        return cls.from_datetime(datetime.now(UTC))

    def __add__(self, seconds: float) -> Instant:
        return Instant.from_datetime(self.value + timedelta(seconds=seconds))

    def seconds_since(self, other: Instant) -> float:
        """``self - other`` in seconds."""
        return (self.value - other.value).total_seconds()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instant) and self.value == other.value

    def __lt__(self, other: Instant) -> bool:
        return self.value < other.value

    def __le__(self, other: Instant) -> bool:
        return self.value <= other.value

    def __gt__(self, other: Instant) -> bool:
        return self.value > other.value

    def __ge__(self, other: Instant) -> bool:
        return self.value >= other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Instant({self.text!r})"

    def __str__(self) -> str:
        return self.text

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[Any], handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            _validate_instant,
            serialization=core_schema.plain_serializer_function_ser_schema(
                _instant_text, when_used="always"
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "format": "date-time",
            "pattern": RFC3339_PATTERN,
            "description": "RFC 3339 date-time with an offset (Z or +hh:mm); compared as instants.",
        }


def _validate_instant(value: object) -> Instant:
    if isinstance(value, Instant):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError(
            "rfc3339",
            "expected an RFC 3339 timestamp string with an offset, got {kind}",
            {"kind": type(value).__name__},
        )
    try:
        return Instant.parse(value)
    except ValueError as exc:
        raise PydanticCustomError("rfc3339", str(exc)) from None


def _instant_text(value: Instant) -> str:
    return value.text


def _why_not_rfc3339(text: str) -> str:
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return f"an epoch number is not an RFC 3339 timestamp: {text!r}"
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return f"a date is not an instant; add a time and an offset: {text!r}"
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?", text):
        return f"a time without an offset is ambiguous; add Z or +hh:mm: {text!r}"
    return f"expected an RFC 3339 timestamp like 2026-08-27T18:04:02Z, got {text!r}"
