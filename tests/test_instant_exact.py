"""Instants to any precision, against an exact reference in Fraction arithmetic.

The reference below computes seconds since the epoch from the text by hand (calendar days, an
offset, the fractional digits as a Fraction), independently of :mod:`donegate.instant`.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from donegate.claim import parse_claim
from donegate.instant import Instant
from donegate.policy import AppliedPolicy, Policy
from donegate.verdict import VerifyOptions, decide
from tests.claims import claim_doc, evidence

BASE_DAY = date(2026, 8, 27).toordinal() - date(1970, 1, 1).toordinal()


def reference(text: str) -> Fraction:
    """Seconds since the epoch of an RFC 3339 text of the shape :func:`stamps` writes."""
    day, rest = text.split("T")
    y, m, d = (int(p) for p in day.split("-"))
    clock, offset = (rest[:-1], "+00:00") if rest.endswith("Z") else (rest[:-6], rest[-6:])
    hh, mm, ss = clock.split(":")
    whole, _, digits = ss.partition(".")
    sign = -1 if offset[0] == "-" else 1
    off = sign * (int(offset[1:3]) * 3600 + int(offset[4:6]) * 60)
    days = date(y, m, d).toordinal() - date(1970, 1, 1).toordinal()
    seconds = days * 86400 + int(hh) * 3600 + int(mm) * 60 + int(whole) - off
    return seconds + Fraction(int(digits or "0"), 10 ** len(digits))


def text_of(seconds: Fraction, digits: int, offset_min: int) -> str:
    """RFC 3339 text for ``seconds`` (a multiple of 10**-digits) in the given offset."""
    local = seconds + offset_min * 60
    whole = local.numerator // local.denominator
    frac = local - whole
    days, in_day = divmod(whole, 86400)
    d = date.fromordinal(date(1970, 1, 1).toordinal() + days)
    clock = f"{in_day // 3600:02d}:{in_day % 3600 // 60:02d}:{in_day % 60:02d}"
    tail = f".{int(frac * 10**digits):0{digits}d}" if digits else ""
    sign = "-" if offset_min < 0 else "+"
    off = (
        "Z" if offset_min == 0 else f"{sign}{abs(offset_min) // 60:02d}:{abs(offset_min) % 60:02d}"
    )
    return f"{d.isoformat()}T{clock}{tail}{off}"


@st.composite
def stamps(draw: st.DrawFn, near: Fraction | None = None) -> tuple[str, Fraction]:
    digits = draw(st.integers(0, 15))
    unit = Fraction(1, 10**digits)
    base = near if near is not None else Fraction(BASE_DAY * 86400)
    steps = draw(st.integers(-3 * 10**digits, 3 * 10**digits))
    seconds = (base // unit) * unit + steps * unit
    offset = draw(st.sampled_from([0, 120, -450, 330]))
    text = text_of(seconds, digits, offset)
    return text, seconds


@given(stamps(), stamps())
def test_order_and_difference_are_exact(a: tuple[str, Fraction], b: tuple[str, Fraction]) -> None:
    (ta, sa), (tb, sb) = a, b
    assert reference(ta) == sa
    assert reference(tb) == sb
    ia, ib = Instant.parse(ta), Instant.parse(tb)
    assert (ia < ib) == (sa < sb)
    assert (ia == ib) == (sa == sb)
    assert (ia > ib) == (sa > sb)
    assert ia.seconds_since(ib) == sa - sb
    assert ia.float_seconds_since(ib) == float(sa - sb)
    assert ia.text == ta


_YEARS_1_TO_9999 = (
    (date(1, 1, 1).toordinal() - date(1970, 1, 1).toordinal()) * 86400,
    (date(9999, 12, 31).toordinal() - date(1970, 1, 1).toordinal()) * 86400,
)


@given(
    st.lists(st.integers(*_YEARS_1_TO_9999), min_size=2, max_size=2),
    st.lists(st.integers(0, 40), min_size=2, max_size=2),
    st.data(),
)
def test_a_difference_for_a_message_is_the_float_nearest_the_exact_one(
    wholes: list[int], digit_counts: list[int], data: st.DataObject
) -> None:
    # Far apart and with many digits, where a float of either instant alone would round.
    a, b = (
        Instant.parse(
            text_of(Fraction(whole) + Fraction(data.draw(st.integers(0, 10**d - 1)), 10**d), d, 0)
        )
        for whole, d in zip(wholes, digit_counts, strict=True)
    )
    assert a.float_seconds_since(b) == float(a.seconds_since(b))
    assert b.float_seconds_since(a) == -a.float_seconds_since(b)


def test_one_nanosecond_and_beyond_are_seen() -> None:
    a = Instant.parse("2026-08-27T18:04:02.0000000001Z")
    b = Instant.parse("2026-08-27T18:04:02Z")
    assert a > b
    assert a != b
    assert a.seconds_since(b) == Fraction(1, 10**10)
    assert Instant.parse("2026-08-27T18:04:02.500Z") == Instant.parse("2026-08-27T18:04:02.5Z")


def test_now_keeps_nanoseconds_and_add_is_exact() -> None:
    start = Instant.parse("2026-08-27T18:04:02.123456789Z")
    later = start + Fraction(1, 10**9)
    assert later.text == "2026-08-27T18:04:02.12345679Z"
    assert later.seconds_since(start) == Fraction(1, 10**9)
    assert len(Instant.now().text) > len("2026-08-27T18:04:02Z")


def _decided(doc: dict[str, Any], now: str, options: dict[str, Any]) -> str:
    verdict = decide(parse_claim(doc), VerifyOptions(now=Instant.parse(now), **options))
    return verdict.state


def _doc(mutation_at: str, evidence_at: str, max_age: Any) -> dict[str, Any]:
    return claim_doc(
        mutations=[{"id": "m1", "kind": "state_write", "target": "a", "at": mutation_at}],
        evidence=[evidence(at=evidence_at)],
        policy={"requires": ["state_readback"], "max_age_s": max_age},
    )


MUTATION = Fraction(BASE_DAY * 86400 + 65042)
ALMOST_HALF = Fraction(1, 2) - Fraction(1, 3 * 10**1001)  # no finite decimal expansion


@settings(max_examples=300)
@given(
    st.data(),
    st.one_of(st.integers(0, 400), st.floats(0, 400, allow_nan=False), st.just(300)),
    st.one_of(st.integers(0, 10), st.floats(0, 10, allow_nan=False)),
)
def test_never_verified_where_the_rules_say_not(
    data: st.DataObject, max_age: float, skew: float
) -> None:
    """Rules 2, 5 and the skew bound, with instants within a few units of every bound. A float
    bound is the decimal it writes (``repr``), as JSON writes it: 0.3 is 3/10."""
    m_text, m_at = data.draw(stamps(MUTATION))
    written_age, written_skew = Fraction(repr(max_age)), Fraction(repr(skew))
    bound = data.draw(st.sampled_from(["order", "age", "skew"]))
    if bound == "order":
        e_text, e_at = data.draw(stamps(m_at))
        n_text, n_at = data.draw(stamps(e_at + 1))
    elif bound == "age":
        e_text, e_at = data.draw(stamps(m_at + 1))
        n_text, n_at = data.draw(stamps(e_at + written_age))
    else:
        n_text, n_at = data.draw(stamps(m_at + 1))
        e_text, e_at = data.draw(stamps(n_at + written_skew))
    state = _decided(_doc(m_text, e_text, max_age), n_text, {"max_skew_s": skew})
    allowed = e_at > m_at and n_at - e_at <= written_age and e_at - n_at <= written_skew
    assert state == ("verified" if allowed else "unverified")


@pytest.mark.parametrize(
    ("evidence_at", "now", "max_age", "skew", "state"),
    [
        # The figures: 300.0000009 s old under max_age_s 300, with a seven-digit --now.
        ("2026-08-27T18:04:09Z", "2026-08-27T18:09:09.0000009Z", 300, 5, "unverified"),
        ("2026-08-27T18:04:09Z", "2026-08-27T18:09:09.0000000Z", 300, 5, "verified"),
        # 5.0000009 s in the future under the 5 s skew bound.
        ("2026-08-27T18:04:15.0000009Z", "2026-08-27T18:04:10Z", 300, 5, "unverified"),
        ("2026-08-27T18:04:15.0000000Z", "2026-08-27T18:04:10Z", 300, 5, "verified"),
        # A float bound counts as the decimal it writes: 0.1 is 1/10 (its binary value is a
        # little more), 0.3 is 3/10 (its binary value is a little less), for the age and the skew.
        ("2026-08-27T18:04:09.9Z", "2026-08-27T18:04:10Z", 0.1, 5, "verified"),
        ("2026-08-27T18:04:09.89999999999999999Z", "2026-08-27T18:04:10Z", 0.1, 5, "unverified"),
        ("2026-08-27T18:04:09.7Z", "2026-08-27T18:04:10Z", 0.3, 5, "verified"),
        ("2026-08-27T18:04:09.6999999999999999999Z", "2026-08-27T18:04:10Z", 0.3, 5, "unverified"),
        ("2026-08-27T18:04:10.3Z", "2026-08-27T18:04:10Z", 300, 0.3, "verified"),
        (
            "2026-08-27T18:04:10.3000000000000000001Z",
            "2026-08-27T18:04:10Z",
            300,
            0.3,
            "unverified",
        ),
        # A huge integer bound is compared exactly, not through a float.
        ("2026-08-27T18:04:09Z", "2026-08-27T18:04:10Z", 10**400, 5, "verified"),
        ("2026-08-27T18:04:20Z", "2026-08-27T18:04:10Z", 300, Decimal("10.0000001"), "verified"),
        (
            "2026-08-27T18:04:20.0000002Z",
            "2026-08-27T18:04:10Z",
            300,
            Decimal("10.0000001"),
            "unverified",
        ),
        # A bound with no decimal expansion (a caller's 1/3 s) against instants of a thousand
        # digits on either side of it: the last digit decides.
        (
            "2026-08-27T18:04:10." + "3" * 1000 + "Z",
            "2026-08-27T18:04:10Z",
            300,
            Fraction(1, 3),
            "verified",
        ),
        (
            "2026-08-27T18:04:10." + "3" * 999 + "4Z",
            "2026-08-27T18:04:10Z",
            300,
            Fraction(1, 3),
            "unverified",
        ),
        # Just under 0.5 s, by less than any instant can say: 0.5 s in the future is beyond it
        # (a bound rounded up to 0.5 would have let it through), 1,000 nines are not.
        ("2026-08-27T18:04:10.5Z", "2026-08-27T18:04:10Z", 300, ALMOST_HALF, "unverified"),
        (
            "2026-08-27T18:04:10.4" + "9" * 999 + "Z",
            "2026-08-27T18:04:10Z",
            300,
            ALMOST_HALF,
            "verified",
        ),
    ],
)
def test_bounds_to_the_digit(
    evidence_at: str, now: str, max_age: Any, skew: Any, state: str
) -> None:
    doc = _doc("2026-08-27T18:04:02Z", evidence_at, max_age)
    assert _decided(doc, now, {"max_skew_s": skew}) == state


def test_truncating_to_microseconds_would_have_verified() -> None:
    """The control: the old reading (digits cut at six) thought the stale evidence fresh."""
    now = "2026-08-27T18:09:09.0000009Z"
    truncated = Instant.parse(now[:26] + "Z")
    assert truncated.seconds_since(Instant.parse("2026-08-27T18:04:09Z")) == 300
    assert Instant.parse(now).seconds_since(Instant.parse("2026-08-27T18:04:09Z")) > 300


@pytest.mark.parametrize("skew", [float("nan"), float("inf"), -1.0, Decimal("NaN"), 10**10, True])
def test_a_skew_that_is_not_a_finite_bound_is_refused(skew: Any) -> None:
    with pytest.raises(ValueError, match="max_skew_s"):
        VerifyOptions(max_skew_s=skew)


def test_nan_skew_would_have_let_anything_through() -> None:
    """The control for the refusal above: every comparison with NaN is false."""
    four_years_ahead, bound = float(4 * 365 * 86400), float("nan")
    assert (four_years_ahead > bound) is False


def test_policy_applied_keeps_huge_max_age_exact() -> None:
    applied = AppliedPolicy(source="file", policy=Policy(max_age_s=10**30))
    assert applied.max_age_s == 10**30
