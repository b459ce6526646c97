import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

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


# An instant on a day already seen, its slices each replaced by every way it can be right or
# nearly right, one or two at a time: the sliced reading of an instant on a known day must say
# exactly what the full pattern says.
_SLICES: list[tuple[str, list[str]]] = [
    ("2026-08-27", ["2026-02-30", "2026-8-27", "2026-08-2", "٢٠٢٦-08-27", "2026/08/27", ""]),
    ("T", ["t", " ", "", "TT", "Tt"]),
    ("18:04", ["00:00", "23:59", "24:00", "18:60", "8:04", "18:4", "١٨:04", "18-04", "18::4"]),
    (":05", [":00", ":59", ":60", ":5", "05", "::05", ":٣٣", ":0²", ": 5", ""]),
    ("", [".", ".5", ".000", ".٣", ".5٣", ".²", "..5", ".5.5", "." + "1" * 1000, "." + "1" * 1001]),
    ("Z", ["z", "", "+00:00", "-07:30", "+23:59", "-00:00", "Z\n", "ZZ", " Z", "zZ", "+24:00"]),
    ("", ["+07:60", "+7:30", "07:30", "+07:3", "+07-30", "Z+01:00", "+01:00Z", "+\u0660\u0667:30"]),
]


def _with(replaced: dict[int, str]) -> str:
    return "".join(replaced.get(i, valid) for i, (valid, _) in enumerate(_SLICES))


def _read(read: Callable[[str], tuple[int, str]], text: str) -> object:
    try:
        return read(text)
    except ValueError as exc:
        return str(exc)


def test_an_instant_on_a_known_day_is_read_as_the_full_pattern_reads_it() -> None:
    instant._matched_key("2026-08-27T00:00:00Z")  # this day is now known
    texts = {_with({})}
    for first, (_, variants) in enumerate(_SLICES):
        for variant in variants:
            texts.add(_with({first: variant}))
            for second in range(first + 1, len(_SLICES)):
                texts.update(_with({first: variant, second: other}) for other in _SLICES[second][1])
    assert len(texts) > 1500
    differ = [t for t in texts if _read(instant.instant_key, t) != _read(instant._matched_key, t)]
    assert differ == []


def test_every_time_of_day_and_offset_is_read_as_the_full_pattern_reads_it() -> None:
    instant._matched_key("2026-08-27T00:00:00Z")  # this day is now known
    clocks = [f"{h:02d}:{m:02d}" for h in range(25) for m in range(61)]
    texts = [f"2026-08-27T{clock}:{s}Z" for clock in clocks for s in ("00", "59", "60")]
    texts += [f"2026-08-27T12:00:00{sign}{clock}" for clock in clocks for sign in "+-"]
    differ = [t for t in texts if _read(instant.instant_key, t) != _read(instant._matched_key, t)]
    assert differ == []


def test_a_day_is_remembered_only_from_a_real_date_and_time() -> None:
    for text in ("2031-02-30T18:04:00Z", "2031-02-29T24:04:00Z", "2031-02-28T18:04:61Z"):
        with pytest.raises(ValueError, match="not a real date and time"):
            instant.instant_key(text)
    assert "2031-02-30" not in instant._day_starts
    # A time that reads well does not make a day that does not exist.
    with pytest.raises(ValueError, match="not a real date and time"):
        instant.instant_key("2031-02-30T18:04:05Z")
