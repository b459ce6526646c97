"""Instants: RFC 3339 timestamps with an offset, compared exactly as points in time.

The spec's rules compare times, so a timestamp that is not an instant (a naive time, a date,
an epoch number) is rejected rather than guessed at. The original text is kept so that a
document written back reads as it was submitted.

RFC 3339 allows any number of fractional digits. An instant is held as whole seconds since the
epoch and the fractional digits as written, so comparisons and differences are exact: evidence
300.0000009 s old is older than 300 s, whatever the number of digits.
"""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, date, datetime
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Self

from donegate.timefmt import rfc3339

if TYPE_CHECKING:  # pydantic is imported only when a model asks for the schema
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import core_schema

RFC3339_PATTERN = r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
# The published pattern, as a JSON Schema reads it: its \d is an ASCII digit (ECMA-262), and it
# matches the whole text. Python's \d would also take other scripts' digits ("٢٠٢٦"), and its $
# a trailing newline, so the parser says the same thing in Python's terms.
_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))"
)
_EPOCH_DAY = date(1970, 1, 1).toordinal()
_DAY_S = 86400
_DAYS_KEPT = 4096
# A fraction longer than this is refused: it says nothing a clock can measure, and its digits
# would only cost memory and time in every comparison.
MAX_FRACTION_DIGITS = 1000

Seconds = int | float | Fraction | Decimal
"""A duration in seconds, compared exactly (a float by its exact binary value)."""


class Instant:
    """A point in time parsed from RFC 3339 text with an explicit offset.

    ``key`` orders instants exactly: (whole seconds since the epoch in UTC, fractional digits
    without trailing zeros). Digit strings without trailing zeros order as the fractions they
    write, so the key compares as a tuple with no rounding anywhere.
    """

    __slots__ = ("key", "text")

    text: str
    key: tuple[int, str]

    def __init__(self, text: str, key: tuple[int, str]) -> None:
        self.text = text
        self.key = key

    @classmethod
    def parse(cls, text: str) -> Self:
        """Parse RFC 3339 ``text``; raise ``ValueError`` saying what is wrong."""
        return cls(text, instant_key(text))

    @classmethod
    def from_datetime(cls, value: datetime) -> Self:
        """An instant from an aware datetime, written as UTC with microseconds."""
        return cls.parse(rfc3339(value))

    @classmethod
    def from_epoch(cls, seconds: Seconds) -> Self:
        """The instant ``seconds`` after the epoch, written as UTC with every digit it needs."""
        exact = _exact(seconds)
        whole = exact.numerator // exact.denominator
        digits = decimal_digits(exact - whole)
        moment = datetime.fromtimestamp(whole, UTC).replace(tzinfo=None).isoformat()
        return cls.parse(f"{moment}.{digits or '0'}Z")

    @classmethod
    def now(cls) -> Self:
        """The clock's time, written as UTC with nanoseconds (the digits the clock reports)."""
        return cls.from_ns(time.time_ns())

    @classmethod
    def from_ns(cls, ns: int) -> Self:
        """The instant ``ns`` nanoseconds after the epoch (as ``time.time_ns`` reports it)."""
        whole, nanoseconds = divmod(ns, 10**9)
        moment = datetime.fromtimestamp(whole, UTC).replace(tzinfo=None).isoformat()
        return cls.parse(f"{moment}.{nanoseconds:09d}Z")

    def exact(self) -> Fraction:
        """Seconds since the epoch, exactly."""
        whole, digits = self.key
        return whole + Fraction(int(digits or "0"), 10 ** len(digits))

    @property
    def value(self) -> datetime:
        """The instant as an aware datetime in its own offset (to the microsecond, truncated)."""
        return datetime.fromisoformat(_to_microseconds(self.text).upper())

    def __add__(self, seconds: Seconds) -> Instant:
        return Instant.from_epoch(self.exact() + _exact(seconds))

    def seconds_since(self, other: Instant) -> Fraction:
        """``self - other`` in seconds, exactly."""
        return self.exact() - other.exact()

    def float_seconds_since(self, other: Instant) -> float:
        """``float(self.seconds_since(other))``, the float nearest the exact difference."""
        units, places = self.units_since(other)
        scale: int = 10**places
        return units / scale  # an int by an int rounds correctly, as a Fraction's float does

    def units_since(self, other: Instant) -> tuple[int, int]:
        """``self - other`` as ``(units, places)``: ``units * 10**-places`` seconds, exactly, in
        integers (no fractions made: a message works it out for each stale item of a batch)."""
        (whole, digits), (other_whole, other_digits) = self.key, other.key
        places = max(len(digits), len(other_digits))
        units = (whole - other_whole) * 10**places
        units += _scaled(digits, places) - _scaled(other_digits, places)
        return units, places

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instant) and self.key == other.key

    def __lt__(self, other: Instant) -> bool:
        return self.key < other.key

    def __le__(self, other: Instant) -> bool:
        return self.key <= other.key

    def __gt__(self, other: Instant) -> bool:
        return self.key > other.key

    def __ge__(self, other: Instant) -> bool:
        return self.key >= other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Instant({self.text!r})"

    def __str__(self) -> str:
        return self.text

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[Any], handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        from pydantic_core import core_schema

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


def instant_key(text: str) -> tuple[int, str]:
    """The exact ordering key of RFC 3339 ``text`` (see :class:`Instant`), or ``ValueError``.

    Batches parse millions of these, so a valid instant is read by slicing: each slice looked up
    among the values it may take (a minute met before in a valid instant, ``2026-08-27T18:04``;
    the second, ``:05``; the offset, ``+02:00``), the fraction checked as the pattern checks it.
    Anything else is matched in full, and every error message is made there.
    """
    minute = _minutes.get(text[:16])
    second = _SECOND.get(text[16:19])
    if minute is None or second is None:
        return _new_minute_key(text, second)
    tail = text[19:]
    if tail in _UTC:  # the commonest tails first, without a call
        return minute + second, ""
    digits = tail[1:-1]
    if (
        tail[:1] == "."
        and tail[-1:] in _UTC
        and digits.isascii()
        and digits.isdigit()
        and len(digits) <= MAX_FRACTION_DIGITS
    ):
        return minute + second, digits.rstrip("0")
    return _tail_key(text, minute + second)


def _new_minute_key(text: str, second: int | None) -> tuple[int, str]:
    # A minute not met before: its day (met before, else matched in full) and its time of day.
    day = _day_starts.get(text[:10])
    clock = _CLOCK.get(text[10:16])
    if day is None or clock is None or second is None:
        return _matched_key(text)
    if len(_minutes) >= _MINUTES_KEPT:
        _minutes.clear()
    minute = _minutes[text[:16]] = day + clock
    return _tail_key(text, minute + second)


def _tail_key(text: str, whole: int) -> tuple[int, str]:
    """The key of ``text`` read to the second as ``whole`` (before any offset), from its tail:
    an optional fraction, then ``Z`` or an offset."""
    tail = text[19:]
    if tail[-1:] in _UTC:
        fraction, offset = tail[:-1], 0
    else:
        found = _OFFSETS.get(tail[-6:])
        if found is None:
            return _matched_key(text)
        fraction, offset = tail[:-6], found
    if not fraction:
        return whole - offset, ""
    digits = fraction[1:]
    if (
        fraction[:1] == "."
        and digits.isascii()
        and digits.isdigit()
        and len(digits) <= MAX_FRACTION_DIGITS
    ):
        return whole - offset, digits.rstrip("0")
    return _matched_key(text)


def _matched_key(text: str) -> tuple[int, str]:
    # The whole pattern, then the calendar, each day's start remembered for the slicing above
    # (a batch's instants fall on few days). Every error message is made here.
    parts = _RFC3339.fullmatch(text)
    if parts is None:
        raise ValueError(_why_not_rfc3339(text))
    hour, minute, second, fraction, sign, off_h, off_m = parts.groups()
    day_start = _day_starts.get(text[:10])
    if day_start is None:
        day_start = _day_start(text)
    h, m, s = int(hour), int(minute), int(second)
    if h > 23 or m > 59 or s > 59:
        raise ValueError(f"not a real date and time: {text!r} ({_time_error(h, m)})")
    whole = day_start + h * 3600 + m * 60 + s
    if sign is not None:
        whole -= _offset_seconds(text, sign, off_h, off_m)
    if fraction is None:
        return whole, ""
    if len(fraction) > MAX_FRACTION_DIGITS:
        raise ValueError(
            f"more than {MAX_FRACTION_DIGITS} fractional digits of a second: {text[:40]!r}..."
        )
    return whole, fraction.rstrip("0")


# Each minute met in a valid instant, by its text ("2026-08-27T18:04"), as seconds since the
# epoch as if the instant were UTC.
_minutes: dict[str, int] = {}
_MINUTES_KEPT = 32768  # three weeks of minutes, about 3 MB

# What each slice of a valid instant may hold, as seconds: the time of day to the minute with
# its separator, the second with its colon, and the offset east of UTC. A slice found in its
# table was checked as the pattern and the calendar check it.
_TWO_DIGITS = [f"{n:02d}" for n in range(60)]
# Built by concatenation: formatting each of the 5,760 keys cost 4 ms of every start-up.
_HOURS_MINUTES = [
    (_TWO_DIGITS[h] + ":" + _TWO_DIGITS[m], h * 3600 + m * 60) for h in range(24) for m in range(60)
]
_CLOCK = {separator + text: s for separator in "Tt" for text, s in _HOURS_MINUTES}
_SECOND = {":" + text: s for s, text in enumerate(_TWO_DIGITS)}
_OFFSETS = {
    sign + text: s * (1 if sign == "+" else -1) for sign in "+-" for text, s in _HOURS_MINUTES
}
_UTC = frozenset({"Z", "z"})


_day_starts: dict[str, int] = {}


def _time_error(hour: int, minute: int) -> str:
    # The words datetime uses, so that a message reads the same however the time was parsed.
    if hour > 23:
        return "hour must be in 0..23"
    return "minute must be in 0..59" if minute > 59 else "second must be in 0..59"


def _day_start(text: str) -> int:
    try:
        day = date(int(text[:4]), int(text[5:7]), int(text[8:10]))
    except ValueError as exc:
        raise ValueError(f"not a real date and time: {text!r} ({exc})") from None
    if len(_day_starts) >= _DAYS_KEPT:
        _day_starts.clear()
    start = _day_starts[text[:10]] = (day.toordinal() - _EPOCH_DAY) * _DAY_S
    return start


def _offset_seconds(text: str, sign: str, hours: str, minutes: str) -> int:
    h, m = int(hours), int(minutes)
    if h > 23 or m > 59:
        raise ValueError(
            f"not a real date and time: {text!r} (offset {sign}{hours}:{minutes} "
            "is not a UTC offset)"
        )
    return (h * 3600 + m * 60) * (-1 if sign == "-" else 1)


def _scaled(digits: str, places: int) -> int:
    """Fractional ``digits`` as an integer count of ``10**-places`` seconds."""
    return int(digits) * 10 ** (places - len(digits)) if digits else 0


def is_finite(seconds: Seconds) -> bool:
    """False for NaN and the infinities (a Decimal as itself, never through a float)."""
    if isinstance(seconds, Decimal):
        return seconds.is_finite()
    return not isinstance(seconds, float) or math.isfinite(seconds)


def _exact(seconds: Seconds) -> Fraction:
    if isinstance(seconds, bool):
        raise TypeError("a boolean is not a number of seconds")
    if not is_finite(seconds):
        raise ValueError(f"not a finite number of seconds: {seconds}")
    return Fraction(seconds)


def decimal_digits(fraction: Fraction) -> str:
    """The decimal digits of ``0 <= fraction < 1``; it must have a finite decimal expansion."""
    denominator, twos, fives = fraction.denominator, 0, 0
    while denominator % 2 == 0:
        denominator, twos = denominator // 2, twos + 1
    while denominator % 5 == 0:
        denominator, fives = denominator // 5, fives + 1
    if denominator != 1:
        raise ValueError(f"{fraction} s has no finite decimal expansion")
    places = max(twos, fives)
    scaled = fraction.numerator * 10**places // fraction.denominator
    return f"{scaled:0{places}d}".rstrip("0") if places else ""


def _to_microseconds(text: str) -> str:
    # datetime holds microseconds: a longer fraction is cut to six digits for display only.
    return re.sub(r"\.(\d{6})\d+", r".\1", text)


def _validate_instant(value: object) -> Instant:
    if isinstance(value, Instant):
        return value
    if not isinstance(value, str):
        raise _refused(
            "expected an RFC 3339 timestamp string with an offset, got {kind}",
            {"kind": type(value).__name__},
        )
    try:
        return Instant.parse(value)
    except ValueError as exc:
        raise _refused(str(exc)) from None


def _refused(message: str, context: dict[str, Any] | None = None) -> Exception:
    # Imported here, for a refused value only: the loader validates eight instants a claim, and
    # the import statement cost about a microsecond each time.
    from pydantic_core import PydanticCustomError

    return PydanticCustomError("rfc3339", message, context)


def _instant_text(value: Instant) -> str:
    return value.text


def _why_not_rfc3339(text: str) -> str:
    shown = text if len(text) <= 80 else text[:77] + "..."
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return f"an epoch number is not an RFC 3339 timestamp: {shown!r}"
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return f"a date is not an instant; add a time and an offset: {shown!r}"
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?", text):
        return f"a time without an offset is ambiguous; add Z or +hh:mm: {shown!r}"
    return f"expected an RFC 3339 timestamp like 2026-08-27T18:04:02Z, got {shown!r}"
