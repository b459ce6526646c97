"""``donegate gate`` through real processes: every exit code, the payloads, the state file."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

RED = {"source_write_count": 1, "verify": {"ok": False, "findings": "E0308"}}


def run(
    args: list[str], stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "donegate", "gate", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
    )


def decide(state: Path, request: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["decide", "--session", "s1", "--state-dir", str(state), *extra]
    return run(args, json.dumps(request))


def test_allow_exits_0_with_the_decision_on_stdout(tmp_path: Path) -> None:
    facts = {"source_write_count": 1, "verify": {"ok": True, "command": "pytest -q"}}
    out = decide(tmp_path, {"facts": facts}, "--json")
    assert out.returncode == 0, out.stderr
    decision = json.loads(out.stdout)
    assert (decision["confirm"], decision["reason"]) == (True, "verified_after_write")
    assert decision["verification"] == {
        "oracle_expected": True,
        "command": "pytest -q",
        "observed": "passed",
    }
    assert decision["message"] is None


def test_veto_exits_1_with_the_feedback(tmp_path: Path) -> None:
    out = decide(tmp_path, {"facts": RED}, "--json")
    assert out.returncode == 1, out.stderr
    decision = json.loads(out.stdout)
    assert (decision["reason"], decision["strict"]) == ("verification_after_write_red", True)
    assert " Findings: E0308." in decision["message"]
    assert decision["counts"]["by_reason"]["verification_after_write_red"] == 1


def test_without_json_the_summary_goes_to_stderr_and_stdout_stays_empty(tmp_path: Path) -> None:
    out = decide(tmp_path, {"facts": RED})
    assert out.returncode == 1
    assert out.stdout == ""
    assert "veto (strict): verification_after_write_red" in out.stderr


def test_no_facts_is_degraded_mode_not_a_pass(tmp_path: Path) -> None:
    out = decide(tmp_path, {}, "--json")
    assert out.returncode == 0
    decision = json.loads(out.stdout)
    assert decision["reason"] == "facts_unavailable"
    assert decision["verification"]["observed"] == "not_run"


def test_a_missing_session_is_a_usage_error(tmp_path: Path) -> None:
    out = run(["decide", "--state-dir", str(tmp_path)], json.dumps({"facts": RED}))
    assert out.returncode == 2
    assert "--session" in out.stderr
    assert out.stdout == ""


def test_a_blank_session_is_a_usage_error(tmp_path: Path) -> None:
    out = run(["decide", "--session", " ", "--state-dir", str(tmp_path)], "{}")
    assert out.returncode == 2


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("", "not JSON"),
        ("{not json", "not JSON"),
        ("[]", "expected an object"),
        ('{"facts": {}, "judge": true}', "unknown key 'judge'"),
        ('{"facts": {"source_write_count": -1}}', "facts.source_write_count"),
        ('{"facts": {"source_write_count": 1.5}}', "facts.source_write_count"),
        ('{"facts": {"verify": "green"}}', "facts.verify"),
        ('{"facts": {"writes": [{}, {}, {"kind": 1}]}}', "facts.writes[2].kind"),
        ('{"options": {"escalation_threshold": 0}}', "options.escalation_threshold"),
        ('{"options": {"escalation_target": ""}}', "options.escalation_target"),
        ('{"options": {"feedback_templates": {"nope": "x"}}}', "options.feedback_templates.nope"),
        (
            '{"options": {"feedback_templates": {"failed_verification": 1}}}',
            "options.feedback_templates.failed_verification",
        ),
        ('{"options": {"max_vetoes": "3"}}', "options.max_vetoes"),
    ],
)
def test_invalid_input_exits_4_with_a_message_never_an_allow(
    tmp_path: Path, stdin: str, message: str
) -> None:
    out = run(["decide", "--session", "s1", "--state-dir", str(tmp_path), "--json"], stdin)
    assert out.returncode == 4, out.stderr
    assert out.stdout == ""
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_invalid_input_records_nothing(tmp_path: Path) -> None:
    decide(tmp_path, {"facts": {"source_write_count": -1}})
    out = run(["events", "--session", "s1", "--state-dir", str(tmp_path)])
    assert (out.returncode, out.stdout) == (0, "")


def test_events_and_counts(tmp_path: Path) -> None:
    options = {"max_vetoes": 1}
    decide(tmp_path, {"facts": {"source_write_count": 0}, "options": options})
    converted = decide(tmp_path, {"facts": {"source_write_count": 0}, "options": options})
    assert converted.returncode == 0
    events = run(["events", "--session", "s1", "--state-dir", str(tmp_path)])
    lines = [json.loads(line) for line in events.stdout.splitlines()]
    assert [(e["reason"], e["converted_from"]) for e in lines] == [
        ("no_source_write", None),
        ("veto_budget_exhausted", "no_source_write"),
    ]
    counts = json.loads(run(["counts", "--session", "s1", "--state-dir", str(tmp_path)]).stdout)
    assert counts["by_reason"]["no_source_write"] == 1
    assert counts["by_reason"]["missing_verification"] == 0
    assert (counts["soft"], counts["strict"], counts["outcome"]) == (1, 0, "not_verified")


def test_state_comes_from_the_environment_when_no_dir_is_given(tmp_path: Path) -> None:
    env = {"DONEGATE_STATE_DIR": str(tmp_path / "env")}
    out = run(["decide", "--session", "s1"], json.dumps({"facts": RED}), env=env)
    assert out.returncode == 1
    assert (tmp_path / "env" / "gate.sqlite3").is_file()


def test_a_corrupt_state_file_is_reported_not_read_as_no_vetoes(tmp_path: Path) -> None:
    (tmp_path / "gate.sqlite3").write_bytes(b"this is not a database, just bytes" * 100)
    out = decide(tmp_path, {"facts": {"source_write_count": 0}, "options": {"max_vetoes": 1}})
    assert out.returncode == 5
    assert "gate state" in out.stderr
    assert out.stdout == ""
    for command in ("events", "counts"):
        assert run([command, "--session", "s1", "--state-dir", str(tmp_path)]).returncode == 5


def test_a_foreign_sqlite_file_is_refused(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "gate.sqlite3") as db:
        db.execute("CREATE TABLE something_else (x)")
    out = decide(tmp_path, {"facts": RED})
    assert out.returncode == 5
    assert "schema version 0" in out.stderr


def test_corrupt_counts_inside_a_valid_file_are_reported(tmp_path: Path) -> None:
    assert decide(tmp_path, {"facts": RED}).returncode == 1
    with sqlite3.connect(tmp_path / "gate.sqlite3") as db:
        db.execute("UPDATE gate_sessions SET by_reason = 'garbage'")
    out = decide(tmp_path, {"facts": RED})
    assert out.returncode == 5
    assert "corrupt" in out.stderr


def test_the_gate_cli_does_not_import_pydantic() -> None:
    code = (
        "import sys, donegate.cli, donegate.cli.gate, donegate.gate; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
