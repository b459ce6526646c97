"""Hosts run hooks in parallel: concurrent processes on one session leave exact records."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

N = 20


def run_concurrently(state: Path, request: dict[str, Any]) -> list[int]:
    """Start N ``gate decide`` processes at once on one session; their exit codes."""
    command = [sys.executable, "-m", "donegate", "gate", "decide", "--session", "hot"]
    command += ["--state-dir", str(state)]
    procs = [
        subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(N)
    ]
    payload = json.dumps(request).encode()
    # Every process is already running (importing) before any of them gets its input.
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(payload)
        proc.stdin.close()
    codes = []
    for proc in procs:
        assert proc.stderr is not None
        code = proc.wait(timeout=120)
        assert code in (0, 1), proc.stderr.read().decode()
        codes.append(code)
    for proc in procs:
        assert proc.stdout is not None
        assert proc.stderr is not None
        proc.stdout.close()
        proc.stderr.close()
    return codes


def read(state: Path, what: str) -> str:
    command = [sys.executable, "-m", "donegate", "gate", what, "--session", "hot"]
    out = subprocess.run(
        [*command, "--state-dir", str(state)], capture_output=True, text=True, check=True
    )
    return out.stdout


def test_twenty_concurrent_soft_vetoes_spend_the_budget_exactly(tmp_path: Path) -> None:
    codes = run_concurrently(
        tmp_path, {"facts": {"source_write_count": 0}, "options": {"max_vetoes": 3}}
    )
    # A read-modify-write race would deliver more than three vetoes.
    assert Counter(codes) == {1: 3, 0: N - 3}
    events = [json.loads(line) for line in read(tmp_path, "events").splitlines()]
    assert len(events) == N
    assert Counter(e["reason"] for e in events) == {
        "no_source_write": 3,
        "veto_budget_exhausted": N - 3,
    }
    counts = json.loads(read(tmp_path, "counts"))
    assert (counts["by_reason"]["no_source_write"], counts["soft"]) == (3, 3)


def test_twenty_concurrent_strict_vetoes_meet_the_cap_exactly(tmp_path: Path) -> None:
    red = {"source_write_count": 1, "verify": {"ok": False}}
    codes = run_concurrently(tmp_path, {"facts": red, "options": {"max_strict_vetoes": 5}})
    # Cycles of five vetoes then one capped allow: 5V A 5V A 5V A 2V -> 17 vetoes, 3 allows.
    assert Counter(codes) == {1: 17, 0: 3}
    events = read(tmp_path, "events").splitlines()
    assert len(events) == N
    assert len({json.loads(line)["seq"] for line in events}) == N
    counts = json.loads(read(tmp_path, "counts"))
    assert (counts["strict"], counts["strict_since_allow"]) == (17, 2)
    assert counts["by_reason"]["verification_after_write_red"] == 17


def test_a_version_1_gate_file_is_carried_forward(tmp_path: Path) -> None:
    import sqlite3

    from donegate.gate import store

    path = tmp_path / store.FILE_NAME
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE gate_sessions (session_id TEXT PRIMARY KEY, by_reason TEXT NOT NULL, "
        "soft INTEGER NOT NULL, strict INTEGER NOT NULL, strict_since_allow INTEGER NOT NULL, "
        "outcome TEXT); CREATE TABLE gate_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
        "session_id TEXT NOT NULL, event TEXT NOT NULL); "
        "INSERT INTO gate_sessions VALUES ('s', '{}', 1, 2, 2, NULL); PRAGMA user_version = 1;"
    )
    db.commit()
    db.close()
    kept = store.GateStore(path)
    counts = kept.counts("s")
    assert (counts.soft, counts.strict, counts.blocks_in_a_row) == (1, 2, 0)
    assert kept.history("s") == store.SessionHistory()
    kept.close()
