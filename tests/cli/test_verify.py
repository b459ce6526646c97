"""``donegate verify`` through the real console entry point, one test per exit code and mode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from donegate.cli import main
from tests.claims import NOW, claim_doc, evidence


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "donegate", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )


def write(tmp_path: Path, doc: dict[str, Any], name: str = "claim.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def test_verified_exits_0_and_summarises_on_stderr_only(tmp_path: Path) -> None:
    result = run("verify", write(tmp_path, claim_doc()), "--now", NOW)
    assert result.returncode == 0
    assert result.stdout == ""
    assert result.stderr.startswith("verified: deploy-4471")
    assert "evidence[0] state_readback accounts/4471 [counts]" in result.stderr


def test_refuted_exits_1_with_the_contradiction(tmp_path: Path) -> None:
    doc = claim_doc(evidence=[evidence(observed_value={"billing_zip": "94110"})])
    result = run("verify", write(tmp_path, doc), "--now", NOW)
    assert result.returncode == 1
    assert 'billing_zip expected "94107", observed "94110"' in result.stderr


def test_usage_error_exits_2() -> None:
    assert run("verify").returncode == 2
    assert run("verify", "--bogus").returncode == 2
    assert run("verify", "x.json", "--now", "2026-08-27").returncode == 2
    assert run("verify", "x.json", "--max-skew", "-1").returncode == 2


def test_claim_and_jsonl_together_is_a_usage_error(tmp_path: Path) -> None:
    path = write(tmp_path, claim_doc())
    result = run("verify", path, "--jsonl", path)
    assert result.returncode == 2
    assert "exactly one of CLAIM or --jsonl" in result.stderr


def test_unverified_exits_3(tmp_path: Path) -> None:
    result = run("verify", write(tmp_path, claim_doc(evidence=[])), "--now", NOW)
    assert result.returncode == 3
    assert "rule 4" in result.stderr


def test_invalid_input_exits_4_naming_the_path(tmp_path: Path) -> None:
    doc = claim_doc(evidence=[evidence(at="2026-08-27T18:04:09")])
    result = run("verify", write(tmp_path, doc), "--json")
    assert result.returncode == 4
    assert result.stdout == ""
    assert "evidence[0].at" in result.stderr


def test_missing_file_exits_4(tmp_path: Path) -> None:
    result = run("verify", str(tmp_path / "nope.json"))
    assert result.returncode == 4
    assert "cannot read claim file" in result.stderr


def test_internal_error_exits_5_and_prints_no_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(*_: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("donegate.verdict.verify_claim", boom)
    code = main(["verify", write(tmp_path, claim_doc()), "--json"])
    out, err = capsys.readouterr()
    assert code == 5
    assert out == ""
    assert "internal error: RuntimeError: disk on fire" in err
    assert "verified" not in err


def test_json_prints_the_whole_claim_with_the_computed_verdict(tmp_path: Path) -> None:
    doc = claim_doc(
        x_extra=1, verdict={"state": "refuted", "unmet": [], "reason": "x", "decided_at": NOW}
    )
    result = run("verify", write(tmp_path, doc), "--json", "--now", NOW)
    out = json.loads(result.stdout)
    assert out["x_extra"] == 1
    assert out["verdict"]["state"] == "verified"
    assert out["verdict"]["decided_at"] == NOW
    assert out["verdict"]["applied_policy"]["source"] == "document"
    assert out["verdict"]["evidence"][0]["counts"] is True


def test_reads_the_claim_from_stdin() -> None:
    result = run("verify", "-", "--json", "--now", NOW, stdin=json.dumps(claim_doc()))
    assert result.returncode == 0
    assert json.loads(result.stdout)["verdict"]["state"] == "verified"


def test_policy_file_replaces_the_documents_policy(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"id": "team", "requires": ["test_run"], "max_age_s": 60}))
    result = run(
        "verify", write(tmp_path, claim_doc()), "--json", "--now", NOW, "--policy", str(policy)
    )
    verdict = json.loads(result.stdout)["verdict"]
    assert result.returncode == 3
    assert verdict["unmet"] == ["test_run"]
    assert verdict["applied_policy"] == {
        "source": "file",
        "policy": {"id": "team", "requires": ["test_run"], "max_age_s": 60},
    }


def test_bad_policy_file_exits_4(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"id": "team", "requires": "test_run"}))
    result = run("verify", write(tmp_path, claim_doc()), "--policy", str(policy))
    assert result.returncode == 4
    assert "requires" in result.stderr


def test_jsonl_decides_every_line(tmp_path: Path) -> None:
    lines = [
        json.dumps(claim_doc()),
        "",
        json.dumps(claim_doc(evidence=[])),
        json.dumps(claim_doc(evidence=[evidence(observed_value={"billing_zip": "1"})])),
    ]
    path = tmp_path / "claims.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = run("verify", "--jsonl", str(path), "--now", NOW)
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 0
    assert [(o["line"], o["verdict"]["state"]) for o in out] == [
        (1, "verified"),
        (3, "unverified"),
        (4, "refuted"),
    ]
    assert out[0]["task_id"] == "deploy-4471"


def test_jsonl_reports_invalid_lines_and_exits_4() -> None:
    stdin = json.dumps(claim_doc()) + "\n{not json\n" + json.dumps(claim_doc(spec_version="9"))
    result = run("verify", "--jsonl", "-", "--now", NOW, stdin=stdin)
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 4
    assert out[0]["verdict"]["state"] == "verified"
    assert out[1]["line"] == 2
    assert "not valid JSON" in out[1]["error"]
    assert "spec_version" in out[2]["error"]


def test_jsonl_options_apply_to_every_line(tmp_path: Path) -> None:
    stdin = json.dumps(claim_doc()) + "\n" + json.dumps(claim_doc()) + "\n"
    result = run("verify", "--jsonl", "-", "--now", NOW, "--trust", "someone-else", stdin=stdin)
    states = [json.loads(line)["verdict"]["state"] for line in result.stdout.splitlines()]
    assert states == ["unverified", "unverified"]


def test_help_documents_the_exit_codes() -> None:
    for args in (["--help"], ["verify", "--help"]):
        result = run(*args)
        assert result.returncode == 0
        assert "0 verified, 1 refuted, 3 unverified, 4 invalid input" in " ".join(
            result.stdout.split()
        )


def test_schema_prints_the_checked_in_schema() -> None:
    result = run("schema")
    schema_file = Path(__file__).parents[2] / "schema" / "completion-claim-0.1.schema.json"
    assert json.loads(result.stdout) == json.loads(schema_file.read_text())


def test_version() -> None:
    assert run("--version").stdout.strip().startswith("donegate, version 0.")
