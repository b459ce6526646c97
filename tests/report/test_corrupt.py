"""Corrupt and extreme receipts: shown as corrupt (a tile, a list, a line on stderr), the week's
numbers untouched, exit 0, no traceback; the report never ends on one nor drops one unseen."""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from donegate.ledger import FILE_NAME, Damaged, Ledger
from tests.report import process, week

NOW = datetime.now(UTC)
FIRST_DAY = (NOW - timedelta(days=7)).date().isoformat()  # the window starts during this day


class Case(NamedTuple):
    column: str  # the column overwritten in SQLite, or "" for a receipt record() writes itself
    value: Any
    why: str  # what the report says of it
    elapsed: Any = 1.0


CASES = {
    "claim nested 100,000 deep": Case(
        "claim_json",
        '{"a":' + "[" * 100_000 + "]" * 100_000 + "}",
        "does not read: nested too deep",
    ),
    "elapsed time 10**400": Case("", None, "elapsed time 100000… (401 digits)", 10**400),
    "elapsed time 1e400": Case(
        "claim_json",
        '{"evidence":[{"detail":{"check":"tests","elapsed_s":1e400}}]}',
        "elapsed time inf s",
    ),
    "elapsed time NaN": Case(
        "claim_json", '{"evidence":[{"detail":{"elapsed_s":NaN}}]}', "elapsed time nan s"
    ),
    "time a date alone, today": Case("created_at", NOW.date().isoformat(), "is not an instant"),
    "time a date alone, the window's first day": Case("created_at", FIRST_DAY, "is not an instant"),
    "time empty": Case("created_at", "", "its time '' is not an instant"),
    "time a day that does not exist": Case(
        "created_at", f"{NOW.year + 1}-02-30T08:00:00.000000Z", "not a day and a time that exist"
    ),
    "decision nested 300 deep": Case(
        "decision_json", '{"a":' + "[" * 300 + "]" * 300 + "}", "more than 200 levels deep"
    ),
    "claim not JSON": Case("claim_json", '{"evidence": [', "does not read: Expecting"),
    "decision a list": Case("decision_json", "[]", "does not read: not a JSON object"),
    "host a blob": Case("host", b"\x00\xff", "its host is bytes, not text"),
}


def _fill(state: Path, case: Case) -> int:
    """The week, and one receipt made corrupt as ``case`` says: its id."""
    with Ledger(state) as ledger:
        week.fill(ledger, NOW)
        rid = _stop(ledger, case.elapsed)
    if case.column:
        _overwrite(state, rid, case.column, case.value)
    return rid


def _stop(ledger: Ledger, elapsed: Any = 1.0) -> int:
    return week.one_stop(ledger, {"check": "tests", "elapsed_s": elapsed}, NOW - timedelta(hours=1))


def _overwrite(state: Path, rid: int, column: str, value: Any) -> None:
    """What no donegate writes, written as a damaged disk or another program would."""
    db = sqlite3.connect(state / FILE_NAME)
    with db:
        db.execute(f"UPDATE receipts SET {column} = ? WHERE id = ?", (value, rid))
    db.close()


def _tile(page: str, key: str) -> int:
    found = re.search(f"<div class='tile' id='tile-{key}'><b>([0-9]+)</b>", page)
    assert found is not None, key
    return int(found.group(1))


@pytest.mark.parametrize("name", list(CASES))
def test_a_corrupt_receipt_is_shown_as_corrupt(tmp_path: Path, name: str) -> None:
    case = CASES[name]
    rid = _fill(tmp_path / "state", case)
    out = tmp_path / "report.html"
    done = process.report(tmp_path / "state", out)
    assert (done.returncode, done.stderr.count("Traceback")) == (0, 0), done.stderr
    assert f"1 corrupt receipts not counted (#{rid}: " in done.stderr
    assert case.why in done.stderr
    page = out.read_text(encoding="utf-8")
    assert (_tile(page, "stops"), _tile(page, "corrupt")) == (week.EXPECTED["stops"], 1)
    listed = page.split("<section id='corrupt'>")[1]
    assert f"<td class='n'>{rid}</td>" in listed
    assert f"receipt-{rid}'" not in page  # not among the counted receipts


def test_many_corrupt_receipts_are_each_listed_and_said_in_one_line(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        week.fill(ledger, NOW)
        rids = [_stop(ledger) for _ in range(12)]
    for rid in rids:
        _overwrite(tmp_path, rid, "created_at", "")
    done = process.report(tmp_path, tmp_path / "report.html")
    assert done.returncode == 0
    said = [line for line in done.stderr.splitlines() if "corrupt receipts" in line]
    assert len(said) == 1
    assert said[0].startswith(f"donegate: 12 corrupt receipts not counted (#{rids[0]}: its time")
    empty = "its time '' is not an instant (a date and a time of day, UTC)"
    assert said[0].endswith(f"#{rids[9]}: {empty}; and 2 more); the report lists them")
    listed = (tmp_path / "report.html").read_text(encoding="utf-8").split("id='corrupt'>")[1]
    assert all(f"<td class='n'>{rid}</td>" in listed for rid in rids)


def test_the_window_keeps_a_row_it_cannot_place_and_hands_back_one_it_cannot_read(
    tmp_path: Path,
) -> None:
    with Ledger(tmp_path) as ledger:
        dated, broken, good = _stop(ledger), _stop(ledger), _stop(ledger)
    _overwrite(tmp_path, dated, "created_at", FIRST_DAY)  # before the window's start, as text
    _overwrite(tmp_path, broken, "claim_json", "{")
    damaged: list[Damaged] = []
    with Ledger(tmp_path) as ledger:
        read = ledger.query(since=NOW - timedelta(days=7), damaged=damaged)
    assert sorted(r.id for r in read) == [dated, good]
    assert [(d.id, d.created_at) for d in damaged] == [(broken, read[0].created_at)]
    assert damaged[0].why.startswith("Expecting ")  # json's own words, without the path
