"""State faults say their cause: a real full file system, a real read-only one, a lost answer.

The file-system cases mount a tiny tmpfs (root only); without the privilege they are skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from donegate.errors import InvalidInput
from donegate.gate.store import GateStore, StateError
from donegate.ledger import Ledger

RED = {"facts": {"source_write_count": 1, "verify": {"ok": False, "findings": "E" * 3000}}}


def gate(args: list[str], stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "donegate", "gate", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs, unmounted afterwards."""
    mount = tmp_path / "fs"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(mount: Path) -> None:
    """Fill the file system to the last byte."""
    with contextlib.suppress(OSError), (mount / "filler").open("wb") as out:
        while True:
            out.write(b"\0" * 1024)
            out.flush()


def test_a_full_disk_is_reported_as_a_full_disk(tiny_fs: Path) -> None:
    state = tiny_fs / "state"
    first = gate(["decide", "--session", "s0", "--state-dir", str(state)], json.dumps(RED).encode())
    assert first.returncode == 1, first.stderr
    fill(tiny_fs)
    result = None
    for index in range(1, 40):
        args = ["decide", "--session", f"s{index}", "--state-dir", str(state)]
        result = gate(args, json.dumps(RED).encode())
        if result.returncode != 1:
            break
    assert result is not None
    assert result.returncode == 5, result.stderr
    assert b"the disk is full" in result.stderr, result.stderr
    assert b"cannot rollback" not in result.stderr
    assert b"Traceback" not in result.stderr


def test_a_failed_rollback_would_have_hidden_the_cause(tiny_fs: Path) -> None:
    """The control: after SQLITE_FULL, SQLite has already rolled back, and ROLLBACK itself fails."""
    db = sqlite3.connect(tiny_fs / "x.sqlite3", isolation_level=None)
    db.execute("CREATE TABLE t (b BLOB)")
    fill(tiny_fs)
    db.execute("BEGIN IMMEDIATE")
    with pytest.raises(sqlite3.OperationalError, match="full"):
        db.execute("INSERT INTO t VALUES (zeroblob(1000000))")
    if db.in_transaction:
        db.execute("ROLLBACK")
        pytest.skip("this SQLite kept the transaction open: nothing to hide here")
    with pytest.raises(sqlite3.OperationalError, match="no transaction is active"):
        db.execute("ROLLBACK")


def test_a_full_disk_under_the_ledger_says_so(tiny_fs: Path) -> None:
    with Ledger(tiny_fs) as ledger:
        ledger.record(
            session_id="s",
            host="h",
            workspace="/w",
            verdict="none",
            decision="allow",
            reason=None,
            claim={},
        )
        fill(tiny_fs)
        with pytest.raises(InvalidInput, match="the disk is full"):
            ledger.record(
                session_id="s",
                host="h",
                workspace="/w",
                verdict="none",
                decision="allow",
                reason=None,
                claim={"x": "y" * 1_000_000},
            )


def test_a_read_only_file_system_is_reported_as_such(tiny_fs: Path) -> None:
    state = tiny_fs / "state"
    first = gate(["decide", "--session", "s", "--state-dir", str(state)], json.dumps(RED).encode())
    assert first.returncode == 1, first.stderr
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_fs)], check=True)
    result = gate(["decide", "--session", "s", "--state-dir", str(state)], json.dumps(RED).encode())
    assert result.returncode == 5
    assert b"read-only" in result.stderr, result.stderr
    assert b"Traceback" not in result.stderr
    fresh = gate(
        ["decide", "--session", "s", "--state-dir", str(tiny_fs / "new")], json.dumps(RED).encode()
    )
    assert fresh.returncode == 4
    assert b"mounted read-only" in fresh.stderr, fresh.stderr


def test_read_only_store_raises_state_error_naming_the_cause(tmp_path: Path) -> None:
    store = GateStore(tmp_path / "gate.sqlite3")
    store.counts("s")  # creates the file
    store.close()
    uri = GateStore(f"file:{tmp_path / 'gate.sqlite3'}?mode=ro")
    uri._db = sqlite3.connect(
        f"file:{tmp_path / 'gate.sqlite3'}?mode=ro", uri=True, isolation_level=None
    )
    with pytest.raises(StateError, match="read-only"), uri.session("s") as tx:
        tx.append({"type": "x"})


def test_a_decision_nobody_was_told_about_is_marked_unreported(tmp_path: Path) -> None:
    """Kill the answer (the reader goes away before it is written): the record says so."""
    args = [sys.executable, "-m", "donegate", "gate", "decide", "--session", "s"]
    args += ["--state-dir", str(tmp_path), "--json"]
    proc = subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    assert proc.stdin is not None
    proc.stdout.close()  # before the request is sent: the answer has nowhere to go
    proc.stdin.write(json.dumps(RED).encode())
    proc.stdin.close()
    proc.wait(timeout=60)  # click exits 1 on a broken pipe: the code alone cannot tell
    delivered = gate(
        ["decide", "--session", "s", "--state-dir", str(tmp_path)], json.dumps(RED).encode()
    )
    assert delivered.returncode == 1
    events = gate(["events", "--session", "s", "--state-dir", str(tmp_path)], b"")
    lines = [json.loads(line) for line in events.stdout.splitlines()]
    assert [e["reported"] for e in lines] == [False, True]
    # Both were counted: the record, not the count, tells them apart.
    assert lines[1]["reason"] == lines[0]["reason"]


def test_api_events_carry_no_report_marker(tmp_path: Path) -> None:
    store = GateStore(tmp_path / "gate.sqlite3")
    with store.session("s") as tx:
        tx.append({"type": "x"})
    assert "reported" not in store.events("s")[0]
    assert os.path.exists(tmp_path / "gate.sqlite3")


def test_a_ledger_on_a_read_only_file_system_says_so(tiny_fs: Path) -> None:
    with Ledger(tiny_fs) as ledger:
        assert ledger.recent() == []  # creates the file
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_fs)], check=True)
    with Ledger(tiny_fs) as ledger, pytest.raises(InvalidInput, match="read-only"):
        ledger.recent()
