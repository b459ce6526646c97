"""The receipt ledger: record, list, show, parallel writers, damaged files."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from donegate.errors import InvalidInput
from donegate.ledger import FILE_NAME, Ledger

CLAIM: dict[str, Any] = {
    "spec_version": "0.1",
    "task": {"id": "fix-zip"},
    "claimed_outcome": "fixed the zip update bug",
    "mutations": [
        {"id": "w1", "kind": "file_write", "target": "src/zip.py", "at": "2026-08-27T18:00:00Z"}
    ],
}


def _record(ledger: Ledger, session: str = "s1", **overrides: Any) -> int:
    fields: dict[str, Any] = {
        "session_id": session,
        "host": "claude-code",
        "workspace": "/work/repo",
        "verdict": "refuted",
        "decision": "veto",
        "reason": "tests/test_zip.py::test_update failed after your last edit",
        "claim": CLAIM,
        "decision_doc": {"decision": "veto", "rung": 3},
    }
    fields.update(overrides)
    return ledger.record(**fields)


def test_record_then_get(tmp_path: Path) -> None:
    at = datetime(2026, 8, 27, 20, 4, 2, tzinfo=UTC)
    with Ledger(tmp_path) as ledger:
        receipt_id = _record(ledger, created_at=at)
        receipt = ledger.get(receipt_id)
    assert receipt.claim == CLAIM
    assert receipt.decision_doc == {"decision": "veto", "rung": 3}
    assert (receipt.session_id, receipt.host, receipt.workspace) == (
        "s1",
        "claude-code",
        "/work/repo",
    )
    assert (receipt.verdict, receipt.decision) == ("refuted", "veto")
    assert receipt.created_at == "2026-08-27T20:04:02.000000Z"
    assert (tmp_path / FILE_NAME).exists()


def test_recent_is_newest_first_and_filters_by_session(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        first = _record(ledger, "a")
        second = _record(ledger, "b", verdict="verified", decision="allow", reason=None)
        third = _record(ledger, "a")
        assert [r.id for r in ledger.recent()] == [third, second, first]
        assert [r.id for r in ledger.recent(limit=2)] == [third, second]
        assert [r.id for r in ledger.recent(session="a")] == [third, first]
        assert ledger.recent(session="nobody") == []


def test_receipts_survive_reopening(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        receipt_id = _record(ledger)
    with Ledger(tmp_path) as again:
        assert again.get(receipt_id).claim == CLAIM


def test_unknown_receipt_is_invalid_input(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger, pytest.raises(InvalidInput, match="no receipt 42"):
        ledger.get(42)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("verdict", "probably", "verdict must be one of"),
        ("decision", "maybe", "decision must be one of"),
        ("claim", {"x": float("nan")}, "claim is not JSON data"),
        ("created_at", datetime(2026, 1, 1), "naive"),
    ],
)
def test_bad_receipt_is_refused(tmp_path: Path, field: str, value: Any, message: str) -> None:
    with Ledger(tmp_path) as ledger:
        with pytest.raises(InvalidInput, match=message):
            _record(ledger, **{field: value})
        assert ledger.recent() == []


def test_wal_mode(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        _record(ledger)
    db = sqlite3.connect(tmp_path / FILE_NAME)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


_WRITER = """
import sys
from donegate.ledger import Ledger
state_dir, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Ledger(state_dir) as ledger:
    for i in range(count):
        ledger.record(session_id=name, host="claude-code", workspace="/w", verdict="verified",
                      decision="allow", reason=None, claim={"n": i})
"""


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), f"w{n}", "25"])
        for n in range(4)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    with Ledger(tmp_path) as ledger:
        receipts = ledger.recent(limit=1000)
        assert len(receipts) == 100
        assert len({r.id for r in receipts}) == 100
        for n in range(4):
            claims = [r.claim["n"] for r in ledger.recent(limit=1000, session=f"w{n}")]
            assert sorted(claims) == list(range(25))


def test_corrupt_file_is_an_error_not_an_empty_ledger(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_bytes(b"this is not a database, just some text\n" * 100)
    with Ledger(tmp_path) as ledger, pytest.raises(InvalidInput, match="unusable"):
        ledger.recent()


def test_foreign_database_is_refused(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / FILE_NAME)
    db.execute("CREATE TABLE something_else (x)")
    db.commit()
    db.close()
    with Ledger(tmp_path) as ledger, pytest.raises(InvalidInput, match="schema version 0"):
        ledger.recent()


def test_damaged_row_is_an_error(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        receipt_id = _record(ledger)
    db = sqlite3.connect(tmp_path / FILE_NAME)
    db.execute("UPDATE receipts SET claim_json = '{broken' WHERE id = ?", (receipt_id,))
    db.commit()
    db.close()
    with Ledger(tmp_path) as ledger, pytest.raises(InvalidInput, match="damaged"):
        ledger.get(receipt_id)


def test_a_version_1_ledger_is_carried_forward_not_refused(tmp_path: Path) -> None:
    import sqlite3

    from donegate import ledger as ledger_module

    path = tmp_path / ledger_module.FILE_NAME
    db = sqlite3.connect(path)
    old_schema = ledger_module._SCHEMA.split(";\nCREATE INDEX receipts_pending")[0]
    db.executescript(old_schema + ";\nPRAGMA user_version = 1;")
    db.execute(
        "INSERT INTO receipts (session_id, host, workspace, created_at, verdict, decision, "
        "reason, claim_json, decision_json) VALUES ('s', 'h', '/w', 't', 'verified', 'allow', "
        "'pending', '{}', '{}')"
    )
    db.commit()
    db.close()
    with Ledger(tmp_path) as ledger:
        assert [r.id for r in ledger.pending("/w")] == [1]
        assert ledger.close_receipt(
            1, verdict="unverified", decision="allow", reason="interrupted", claim={}
        )
        assert ledger.pending("/w") == []
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == ledger_module.SCHEMA_VERSION


def test_text_that_is_not_utf8_is_recorded_faithfully(tmp_path: Path) -> None:
    name = b"caf\xe9.py".decode("utf-8", "surrogateescape")
    with Ledger(tmp_path) as ledger:
        rid = ledger.record(
            session_id="s\udc80",
            host="claude-code",
            workspace=f"/w/{name}",
            verdict="none",
            decision="allow",
            reason="no_workspace_write",
            claim={"mutations": [{"target": name}]},
        )
        receipt = ledger.get(rid)
    assert receipt.claim["mutations"][0]["target"] == name
    assert receipt.session_id == "s\\udc80"


def test_each_receipt_has_its_own_version_4_uuid(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        ids = [
            ledger.record(
                session_id="s",
                host="claude-code",
                workspace=tmp_path,
                verdict="none",
                decision="allow",
                reason=None,
                claim={},
            )
            for _ in range(20)
        ]
        found = [ledger.get(i).uuid for i in ids]
    parsed = [uuid.UUID(hex=u) for u in found if u is not None]
    assert len({u.hex for u in parsed}) == 20
    assert [u.hex for u in parsed] == found
    assert all(u.version == 4 and u.variant == uuid.RFC_4122 for u in parsed)
