"""Durations in seconds (``max_age_s``, the clock skew), exact as written, and their text.

The rules compare a bound with ages, and ages are exact decimals (an instant keeps every digit it
is written with), so a bound is exact too: a JSON or TOML number is read as the decimal its text
writes (``0.3`` is three tenths, not the binary float nearest it), an integer as itself, and a
float a Python caller passes as the decimal it prints as (its shortest repr, which is also what
JSON writes for it). Messages print these values exactly, so a message never contradicts the
comparison it reports. Standard library only: the rules and the batch reader use it.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

Exact = int | Decimal | Fraction
"""A duration held exactly: what :func:`exact` makes of any number of seconds."""

GRID_DIGITS = 1001
"""Fractional digits past which a bound is cut (see :func:`on_grid`): one more than an instant
may have (:data:`donegate.instant.MAX_FRACTION_DIGITS`)."""
_SCIENTIFIC_FROM = 40  # a decimal exponent beyond this is printed as 1E-100, not a page of zeros


def exact(seconds: int | float | Decimal | Fraction) -> Exact:
    """``seconds`` held exactly; a float is the decimal its repr writes (``0.3`` is 3/10)."""
    if isinstance(seconds, float):
        return Decimal(repr(seconds))
    return seconds


def in_float_range(value: Decimal) -> bool:
    """True for a finite decimal a JSON reader's float would not make infinite (``1e400``)."""
    return value.is_finite() and not math.isinf(float(value))


def on_grid(bound: Exact) -> Fraction:
    """``bound`` as a fraction the rules compare ages with, the same way as ``bound`` itself.

    An age is a difference of two instants of at most a thousand fractional digits, so a bound cut
    to :data:`GRID_DIGITS` digits orders against every age as the bound does: a decimal written
    with a tiny exponent (``1e-100000000``) is then never expanded into its digits.
    """
    if isinstance(bound, Decimal):
        sign, digits, exponent = bound.as_tuple()
        assert isinstance(exponent, int)  # finite: the loaders refuse NaN and infinities
        if exponent < -GRID_DIGITS:
            kept = len(digits) - (-exponent - GRID_DIGITS)
            coefficient = int("".join(map(str, digits[:kept])) or "0") if kept > 0 else 0
            return Fraction(-coefficient if sign else coefficient, 10**GRID_DIGITS)
    return Fraction(bound)


def exceeds(units: int, places: int, bound: Fraction) -> bool:
    """Whether ``units * 10**-places`` seconds is more than ``bound``, in integers."""
    scale: int = 10**places
    return units * bound.denominator > bound.numerator * scale


def seconds_text(value: Exact) -> str:
    """``value`` written exactly, without trailing zeros: ``0.3``, ``300``, ``1E-100000000``, or a
    fraction with no decimal expansion as ``1/3``."""
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Fraction):
        places = _decimal_places(value.denominator)
        if places is None:
            return str(value)
        return units_text(value.numerator * 10**places // value.denominator, places)
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    return _decimal_text(bool(sign), "".join(map(str, digits)), exponent)


def units_text(units: int, places: int) -> str:
    """``units * 10**-places`` written exactly (an age: two instants' difference)."""
    if not places:  # most ages: instants written to the second
        return str(units)
    return _decimal_text(units < 0, str(abs(units)), -places)


def _decimal_text(negative: bool, digits: str, exponent: int) -> str:
    stripped = digits.rstrip("0")
    if not stripped:
        return "0"
    exponent += len(digits) - len(stripped)
    sign = "-" if negative else ""
    adjusted = exponent + len(stripped) - 1
    if abs(adjusted) > _SCIENTIFIC_FROM:
        mantissa = f"{stripped[0]}.{stripped[1:]}" if len(stripped) > 1 else stripped
        return f"{sign}{mantissa}E{adjusted:+d}"
    if exponent >= 0:
        return sign + stripped + "0" * exponent
    point = len(stripped) + exponent
    if point > 0:
        return f"{sign}{stripped[:point]}.{stripped[point:]}"
    return f"{sign}0.{'0' * -point}{stripped}"


def _decimal_places(denominator: int) -> int | None:
    """The digits after the point ``1/denominator`` needs, or None when it never ends."""
    twos = fives = 0
    while denominator % 2 == 0:
        denominator //= 2
        twos += 1
    while denominator % 5 == 0:
        denominator //= 5
        fives += 1
    return max(twos, fives) if denominator == 1 else None
