"""``donegate receipts`` through the real console entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from donegate.exitcodes import ExitCode
from donegate.ledger import FILE_NAME, Ledger

CLAIM = {"spec_version": "0.1", "task": {"id": "fix-zip"}, "claimed_outcome": "fixed"}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "donegate", "receipts", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def _fill(state_dir: Path) -> list[int]:
    with Ledger(state_dir) as ledger:
        return [
            ledger.record(
                session_id="sess-a",
                host="claude-code",
                workspace="/w",
                verdict="refuted",
                decision="veto",
                reason="tests/test_zip.py::test_update failed after your last edit",
                claim=CLAIM,
                decision_doc={"decision": "veto"},
            ),
            ledger.record(
                session_id="sess-b",
                host="codex",
                workspace="/w",
                verdict="verified",
                decision="allow",
                reason=None,
                claim={**CLAIM, "claimed_outcome": "second"},
            ),
        ]


def test_lists_newest_first_on_stderr(tmp_path: Path) -> None:
    first, second = _fill(tmp_path)
    result = run("--state-dir", str(tmp_path))
    assert result.returncode == ExitCode.OK
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].split() == ["ID", "SESSION", "TIME", "VERDICT", "DECISION"]
    assert lines[1].split()[:2] == [str(second), "sess-b"]
    assert "verified" in lines[1]
    assert lines[2].split()[:2] == [str(first), "sess-a"]
    assert "veto: tests/test_zip.py::test_update failed" in lines[2]


def test_json_and_session_filter(tmp_path: Path) -> None:
    first, _ = _fill(tmp_path)
    result = run("--state-dir", str(tmp_path), "--session", "sess-a", "--json")
    assert result.returncode == ExitCode.OK
    (only,) = json.loads(result.stdout)
    assert (only["id"], only["verdict"], only["claim"]) == (first, "refuted", CLAIM)


def test_limit(tmp_path: Path) -> None:
    _, second = _fill(tmp_path)
    result = run("--state-dir", str(tmp_path), "--limit", "1", "--json")
    assert [r["id"] for r in json.loads(result.stdout)] == [second]


def test_show_prints_the_claim(tmp_path: Path) -> None:
    first, _ = _fill(tmp_path)
    result = run("show", str(first), "--state-dir", str(tmp_path))
    assert result.returncode == ExitCode.OK
    assert json.loads(result.stdout) == CLAIM
    # The group's --state-dir works too, and --full adds the decision.
    full = run("--state-dir", str(tmp_path), "show", str(first), "--full")
    assert json.loads(full.stdout)["decision_doc"] == {"decision": "veto"}


def test_show_unknown_id_is_invalid_input(tmp_path: Path) -> None:
    _fill(tmp_path)
    result = run("show", "999", "--state-dir", str(tmp_path))
    assert result.returncode == ExitCode.INVALID_INPUT
    assert "no receipt 999" in result.stderr


def test_empty_ledger(tmp_path: Path) -> None:
    result = run("--state-dir", str(tmp_path))
    assert result.returncode == ExitCode.OK
    assert "no receipts in" in result.stderr


def test_corrupt_ledger_is_reported(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_bytes(b"garbage, not sqlite\n" * 200)
    result = run("--state-dir", str(tmp_path))
    assert result.returncode == ExitCode.INVALID_INPUT
    assert "receipt ledger" in result.stderr
    assert "Traceback" not in result.stderr


def test_state_dir_from_the_environment(tmp_path: Path) -> None:
    _fill(tmp_path)
    env_run = subprocess.run(
        [sys.executable, "-m", "donegate", "receipts", "--json"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "DONEGATE_STATE_DIR": str(tmp_path)},
    )
    assert len(json.loads(env_run.stdout)) == 2
