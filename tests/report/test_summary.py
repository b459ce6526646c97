"""The report's numbers and the receipts filters, on the scripted week (no browser here)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from donegate.cli.app import run
from donegate.errors import InvalidInput
from donegate.ledger import Ledger
from donegate.report.build import build
from donegate.report.summary import as_json, summarise
from donegate.report.window import parse_since
from tests.report import week


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    with Ledger(tmp_path / "state") as filled:
        week.fill(filled)
        return filled


def test_the_week_counts_as_counted_by_hand(ledger: Ledger) -> None:
    summary = summarise(ledger.query(since=parse_since("7d")))
    assert as_json(summary) == {
        key: week.EXPECTED[key]
        for key in ("stops", "claims", "not_verified", "corrupt", "would_block")
    }
    verdicts = {v: sum(c[v] for c in summary.per_day.values()) for v in week.EXPECTED["verdicts"]}
    assert verdicts == week.EXPECTED["verdicts"]
    assert sum(g.vetoes for g in summary.by_workspace) == week.EXPECTED["sent_back"]
    kind, subject, count, _ = summary.top_findings()[0]
    assert (kind, subject, count) == week.EXPECTED["top_finding"]
    assert {g.name for g in summary.by_machine} == {"dev-alice", "dev-bob", "ci-runner-1"}


def test_since_leaves_the_older_receipt_out(ledger: Ledger) -> None:
    everything = summarise(ledger.query())
    assert len(everything.receipts) == week.EXPECTED["stops"] + 1
    assert "tests/test_old.py::test_gone" in {f.subject for f in everything.findings}
    html, _ = build(ledger, parse_since("7d"), "test")
    assert "test_gone" not in html


def test_pending_receipts_are_not_counted(ledger: Ledger) -> None:
    ledger.record(
        session_id="s-running",
        host="claude-code",
        workspace="/w",
        verdict="unverified",
        decision="allow",
        reason="pending",
        claim={},
    )
    assert len(summarise(ledger.query()).receipts) == week.EXPECTED["stops"] + 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7d", timedelta(days=7)),
        ("24h", timedelta(hours=24)),
        ("90m", timedelta(minutes=90)),
    ],
)
def test_since_spans(text: str, expected: timedelta) -> None:
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert parse_since(text, now) == now - expected


def test_since_instant_and_garbage() -> None:
    assert parse_since("2026-11-23T00:00:00Z") == datetime(2026, 11, 23, tzinfo=UTC)
    for bad in ("7 days", "2026-11-23", "yesterday", "-1d"):
        with pytest.raises(InvalidInput, match="--since"):
            parse_since(bad)


@pytest.mark.parametrize("span", ["1000000d", "9999999999d", "99999999999999999999m"])
def test_since_past_the_year_one_is_invalid_input(span: str) -> None:
    with pytest.raises(InvalidInput, match=f"--since {span} reaches back before the year 1"):
        parse_since(span)


def _receipts_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    capsys.readouterr()
    assert run(["receipts", *args, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert isinstance(found, list)
    return found


def test_receipts_filters(ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    state = ["--state-dir", str(ledger.path.parent), "--limit", "100"]
    assert len(_receipts_json(capsys, *state)) == week.EXPECTED["stops"] + 1
    assert len(_receipts_json(capsys, *state, "--since", "7d")) == week.EXPECTED["stops"]
    refuted = _receipts_json(capsys, *state, "--since", "7d", "--verdict", "refuted")
    assert [r["verdict"] for r in refuted] == ["refuted"] * 3
    one = _receipts_json(capsys, *state, "--session", "s03-bob-web")
    assert [r["verdict"] for r in one] == ["verified", "unverified", "unverified"]  # newest first
    assert all(isinstance(r["uuid"], str) and len(r["uuid"]) == 32 for r in one)
    instant = (datetime.now(UTC) - timedelta(days=30)).isoformat()
    assert len(_receipts_json(capsys, *state, "--since", instant)) == week.EXPECTED["stops"] + 1
    assert run(["receipts", *state, "--since", "last week"]) == 4  # invalid input
