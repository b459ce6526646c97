import json
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from donegate import instant
from donegate.instant import Instant


@pytest.mark.parametrize(
    ("text", "utc"),
    [
        ("2026-08-27T18:04:02Z", "2026-08-27T18:04:02+00:00"),
        ("2026-08-27t18:04:02z", "2026-08-27T18:04:02+00:00"),
        ("2026-08-27T20:04:02+02:00", "2026-08-27T18:04:02+00:00"),
        ("2026-08-27T11:04:02.25-07:00", "2026-08-27T18:04:02.250000+00:00"),
        ("2026-08-27T18:04:02.123456789Z", "2026-08-27T18:04:02.123456+00:00"),
    ],
)
def test_parses_rfc3339_with_offset_as_an_instant(text: str, utc: str) -> None:
    instant = Instant.parse(text)
    assert instant.value.astimezone(UTC).isoformat() == utc
    assert instant.text == text


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("2026-08-27T18:04:02", "without an offset"),
        ("2026-08-27 18:04:02", "without an offset"),
        ("2026-08-27", "a date is not an instant"),
        ("1787853842", "epoch"),
        ("1787853842.5", "epoch"),
        ("2026-13-01T00:00:00Z", "not a real date"),
        ("2026-08-27T18:04:02+0200", "expected an RFC 3339"),
        ("yesterday", "expected an RFC 3339"),
        ("", "expected an RFC 3339"),
    ],
)
def test_rejects_what_is_not_an_instant(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        Instant.parse(text)


def test_compares_as_instants_not_text() -> None:
    assert Instant.parse("2026-08-27T19:04:00+02:00") < Instant.parse("2026-08-27T18:00:00Z")
    assert Instant.parse("2026-08-27T20:04:02+02:00") == Instant.parse("2026-08-27T18:04:02Z")


def test_from_datetime_writes_utc_with_microseconds() -> None:
    instant = Instant.from_datetime(datetime(2026, 8, 27, 18, 4, 2, tzinfo=UTC))
    assert instant.text == "2026-08-27T18:04:02.000000Z"
    assert Instant.parse(instant.text) == instant


def test_from_naive_datetime_is_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        Instant.from_datetime(datetime(2026, 8, 27))


def test_arithmetic_in_seconds() -> None:
    start = Instant.parse("2026-08-27T18:04:02Z")
    assert (start + 1.5).seconds_since(start) == 1.5


@pytest.mark.parametrize(
    "text",
    [
        "٢٠٢٦-08-27T18:04:02Z",  # Arabic-Indic digits: Python's \d takes them, RFC 3339 does not
        "2026-08-27T18:04:0٢Z",
        "2026-08-27T18:04:02.\uff15Z",  # a fullwidth digit in the fraction
        "2026-08-27T18:04:02Z\n",  # the pattern's $ would match before a final newline
    ],
)
def test_only_ascii_digits_and_nothing_after_make_an_instant(text: str) -> None:
    # These parsed before (the first as 2026-08-27T18:04:02Z), so a claim could carry an instant
    # the published schema refuses; the newline ended in an assertion error instead of a reason.
    with pytest.raises(ValueError, match="RFC 3339"):
        Instant.parse(text)


def test_a_claim_with_foreign_digits_is_invalid() -> None:
    from donegate.claim import parse_claim
    from donegate.errors import InvalidInput
    from tests.claims import claim_doc, evidence

    doc = claim_doc(evidence=[evidence(at="٢٠٢٦-08-27T18:04:09Z")])
    with pytest.raises(InvalidInput) as caught:
        parse_claim(json.dumps(doc))
    assert caught.value.path == "evidence[0].at"


# A second already seen, then every way the rest of a text can be right or nearly right: the
# sliced reading of a known second must say exactly what the full pattern says.
_SEEN = "2026-08-27T18:04"
_TAILS = st.tuples(
    st.sampled_from([":", "", "::", ".", "-"]),
    st.sampled_from(["00", "05", "59", "60", "5", "٣٣", "0²", "", " 5"]),
    st.sampled_from(
        ["", ".", ".5", ".000", ".٣", ".5٣", ".²", "..5", ".5.5", "." + "1" * 1001, "5", ",5", "05"]
    ),
    st.sampled_from(["Z", "z", "", "+00:00", "-07:30", "Z\n", "ZZ", " Z", "+24:00"]),
).map("".join)


@settings(max_examples=1500, deadline=None)
@given(tail=_TAILS, seen=st.sampled_from([_SEEN, _SEEN.replace("T", "t")]))
def test_a_known_second_is_read_as_the_full_pattern_reads_it(tail: str, seen: str) -> None:
    for second in ("00", "05", "59"):
        instant._matched_key(f"{seen}:{second}Z")  # these seconds are now known
    text = seen + tail
    try:
        expected: object = instant._matched_key(text)
    except ValueError as exc:
        expected = str(exc)
    try:
        got: object = instant.instant_key(text)
    except ValueError as exc:
        got = str(exc)
    assert got == expected


def test_a_second_is_remembered_only_from_a_real_date_and_time() -> None:
    for text in ("2031-02-30T18:04:00Z", "2031-08-27T24:04:00Z", "2031-08-28T18:04:61Z"):
        with pytest.raises(ValueError, match="not a real date and time"):
            instant.instant_key(text)
        assert text[:19] not in instant._seconds
    # Seconds that read well do not make a day that does not exist.
    with pytest.raises(ValueError, match="not a real date and time"):
        instant.instant_key("2031-02-30T18:04:05Z")
