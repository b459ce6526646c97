"""One writer and one reader of the moments donegate stores (receipts, snapshots, journals, the
gate's events, the team ledger): both in :mod:`donegate.timefmt`, and nowhere else."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import donegate
from donegate.instant import Instant
from donegate.timefmt import parse_rfc3339, rfc3339

SOURCE = Path(donegate.__file__).parent
# Not a moment of donegate's: a database's value reported as the database holds it (a naive time
# stays naive), and a day named for people on the report's page.
ELSEWHERE = {"checks/state_readback/_values.py", "report/page.py", "instant.py", "timefmt.py"}
MOMENTS = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
)


@given(MOMENTS, st.integers(-23 * 60, 23 * 60))
def test_what_is_written_reads_back_as_the_same_moment(moment: datetime, offset: int) -> None:
    local = moment.astimezone(timezone(timedelta(minutes=offset)))
    text = rfc3339(local)
    assert text.endswith("Z")
    assert len(text) == len("2026-12-01T10:00:00.000000Z")
    assert parse_rfc3339(text) == moment
    assert Instant.parse(text).value == moment


def test_a_naive_time_is_neither_written_nor_read() -> None:
    with pytest.raises(ValueError, match="naive"):
        rfc3339(datetime(2026, 12, 1, 10, 0))
    with pytest.raises(ValueError, match="as donegate writes one"):
        parse_rfc3339("2026-12-01T10:00:00.000000")  # fromisoformat took it, as local time


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("2026-12-01", "as donegate writes one"),
        ("2026-12-01 10:00:00.000000Z", "as donegate writes one"),
        ("2026-12-01T10:00:00.000000+00:00", "as donegate writes one"),
        ("٢٠٢٦-12-01T10:00:00.000000Z", "as donegate writes one"),
        ("2026-02-30T10:00:00.000000Z", "day is out of range"),
        ("2026-12-01T24:00:00.000000Z", "hour must be in"),
    ],
)
def test_what_rfc3339_does_not_write_is_refused(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_rfc3339(text)


def test_no_other_module_formats_or_parses_a_moment() -> None:
    found = [
        f"{path.relative_to(SOURCE)}:{number}"
        for path in sorted(SOURCE.rglob("*.py"))
        if path.relative_to(SOURCE).as_posix() not in ELSEWHERE
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\b(?:isoformat|fromisoformat|strptime)\(", line)
    ]
    assert found == []
