"""Requirement contracts: the join to the roster, the ledger in every decision, the tables."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from donegate.config import parse_config
from donegate.errors import InvalidInput
from donegate.gate import Gate, GateContext, GateOptions
from donegate.gate.requirements import (
    CheckOutcome,
    RequirementAssessment,
    RequirementContract,
    RequirementEvidence,
    from_checks,
    join,
    parse_contract,
)
from donegate.gate.table import parse_gate_tables

CONTRACT = parse_contract(
    [
        {"id": "tests", "role": "check"},
        {"id": "pr", "role": "assistant_output", "pattern": r"https://github\.com/\S+/pull/\d+"},
        {"id": "no-api-change", "role": "judge", "description": "public API unchanged"},
    ]
)
CHECK = RequirementEvidence("ev-tests", "check")
GREEN = {"source_write_count": 1, "verify": {"ok": True}}


def test_a_row_is_met_only_by_one_supported_met_assessment() -> None:
    met = RequirementAssessment("tests", True, ("ev-tests",))
    ledger = join(CONTRACT, [met], [CHECK])
    assert "tests" not in ledger.pending
    assert ledger.pending == {"pr": "missing", "no-api-change": "missing"}


@pytest.mark.parametrize(
    ("assessments", "evidence", "why"),
    [
        ([], [CHECK], "missing"),
        ([RequirementAssessment("tests", True, ("ev-tests",))] * 2, [CHECK], "duplicate"),
        ([RequirementAssessment("tests", True, ())], [CHECK], "unsupported"),
        ([RequirementAssessment("tests", True, ("nowhere",))], [CHECK], "unsupported"),
        # evidence of another role cannot meet a check's row
        (
            [RequirementAssessment("tests", True, ("ev",))],
            [RequirementEvidence("ev", "assistant_output")],
            "unsupported",
        ),
        ([RequirementAssessment("tests", False, ("ev-tests",))], [CHECK], "unmet"),
        ([RequirementAssessment("tests", None, ("ev-tests",))], [CHECK], "unmet"),
    ],
)
def test_missing_duplicate_unsupported_unmet_stay_pending(
    assessments: list[RequirementAssessment], evidence: list[RequirementEvidence], why: str
) -> None:
    # Control: the well-formed assessment meets the row.
    control = join(CONTRACT, [RequirementAssessment("tests", True, ("ev-tests",))], [CHECK])
    assert "tests" not in control.pending
    assert join(CONTRACT, assessments, evidence).pending["tests"] == why


def test_no_contract_is_an_explicit_empty_ledger_not_rows_nobody_looked_at() -> None:
    empty = join(None, [], [])
    nobody = join(CONTRACT, None, None)
    assert empty.to_json_dict() == {
        "declared": False,
        "required_count": 0,
        "pending_count": 0,
        "pending": [],
        "pending_why": {},
    }
    assert nobody.declared
    assert nobody.required_count == nobody.pending_count == 3


def test_a_decision_carries_counts_and_names(tmp_path: Path) -> None:
    gate = Gate(
        GateOptions(requirement_contract=RequirementContract(CONTRACT.requirements[:1])),
        state_dir=tmp_path,
    )
    decision = gate.decide("s", GREEN)
    ledger = decision.to_json_dict()["requirements"]
    assert ledger["required_count"] == 1
    assert ledger["pending_count"] == 1
    assert ledger["pending"] == ["tests"]
    assert gate.store.events("s")[-1]["requirements"] == ledger


def test_pending_rows_veto_even_over_a_green_verifier_and_stay_pending_past_the_budget(
    tmp_path: Path,
) -> None:
    contract = RequirementContract(CONTRACT.requirements[:1])
    gate = Gate(GateOptions(requirement_contract=contract, max_vetoes=1), state_dir=tmp_path)
    # Control: the same green stop without a contract is verified.
    plain = Gate(GateOptions(max_vetoes=1), state_dir=tmp_path / "plain").decide("s", GREEN)
    assert plain.outcome == "verified"
    first = gate.decide("s", GREEN)
    assert not first.confirm
    assert first.reason == "requirements_pending"
    assert "tests (missing)" in (first.message or "")
    second = gate.decide("s", GREEN)
    assert second.confirm
    assert second.reason == "veto_budget_exhausted"
    assert second.converted_from == "requirements_pending"
    assert second.outcome == "not_verified"
    assert second.requirements.pending == {"tests": "missing"}


def test_assistant_output_is_observed_in_the_final_message(tmp_path: Path) -> None:
    contract = RequirementContract(CONTRACT.requirements[1:2])
    gate = Gate(GateOptions(requirement_contract=contract), state_dir=tmp_path)
    without = gate.decide("s", GREEN, context=GateContext("s", text="Done, tests pass."))
    assert without.requirements.pending == {"pr": "unmet"}
    said = "Opened https://github.com/acme/zip/pull/42."
    with_url = gate.decide("s", GREEN, context=GateContext("s", text=said))
    assert with_url.requirements.clear
    assert with_url.outcome == "verified"


def test_a_host_assessment_of_an_output_row_duplicates_the_gates_own(tmp_path: Path) -> None:
    contract = RequirementContract(CONTRACT.requirements[1:2])
    gate = Gate(GateOptions(requirement_contract=contract), state_dir=tmp_path)
    facts = {
        **GREEN,
        "requirement_assessments": [{"id": "pr", "met": True, "evidence": ["assistant_output"]}],
    }
    said = GateContext("s", text="https://github.com/a/b/pull/1")
    assert gate.decide("s", facts, context=said).requirements.pending == {"pr": "duplicate"}


def test_checks_that_declare_satisfies_assess_their_rows(tmp_path: Path) -> None:
    contract = RequirementContract(CONTRACT.requirements[:1])
    assessed, evidence = from_checks([CheckOutcome("pytest", True, ("tests",))])
    facts = {
        **GREEN,
        "requirement_assessments": [a._asdict() for a in assessed],
        "requirement_evidence": [e._asdict() for e in evidence],
    }
    gate = Gate(GateOptions(requirement_contract=contract), state_dir=tmp_path)
    assert gate.decide("s", facts).requirements.clear
    failed, evidence = from_checks([CheckOutcome("pytest", False, ("tests",))])
    assert join(contract, failed, evidence).pending == {"tests": "unmet"}


def test_facts_reject_bad_assessments_by_path() -> None:
    gate = Gate(GateOptions())
    bad = {"requirement_assessments": [{"id": "x", "met": "yes"}]}
    with pytest.raises(InvalidInput) as caught:
        gate.observe("s", bad)
    assert caught.value.path == "facts.requirement_assessments[0].met"


# --- donegate.toml ------------------------------------------------------------------------------

TOML = textwrap.dedent(
    """
    [[requirements]]
    id = "tests"
    role = "check"

    [[requirements]]
    id = "pr"
    role = "assistant_output"
    pattern = 'https://github\\.com/\\S+/pull/\\d+'

    [[requirements]]
    id = "no-api-change"
    role = "judge"
    description = "the public API is unchanged"

    [judge]
    provider = "openai"
    model = "qwen2.5-coder"
    base_url = "http://127.0.0.1:8000/v1"
    api_key = "${JUDGE_KEY_FOR_TEST}"
    max_invocations = 3

    [[checks]]
    check_type = "test_run"
    command = ["python", "-m", "pytest"]
    satisfies = ["tests"]
    """
)


def test_the_tables_parse_for_the_hook_path_and_the_loader() -> None:
    import tomllib

    table = parse_gate_tables(tomllib.loads(TOML))
    assert table.requirements is not None
    assert table.requirements.ids() == ("tests", "pr", "no-api-change")
    assert table.judge is not None
    assert table.judge.api_key_env == "JUDGE_KEY_FOR_TEST"
    options = table.gate_options()
    assert options.judge == table.judge
    # The loader takes the same file without the key's variable set: it is read at call time.
    config = parse_config(TOML, environ={})
    assert config.gate.judge == table.judge
    assert config.checks[0].settings.satisfies == ["tests"]


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (('api_key = "${JUDGE_KEY_FOR_TEST}"', 'api_key = "sk-literal"'), "judge.api_key"),
        (('satisfies = ["tests"]', 'satisfies = ["pr"]'), "checks[0].satisfies"),
        (('satisfies = ["tests"]', "name = 'x'"), "requirements[0]"),
        (('role = "judge"', 'role = "oracle"'), "requirements[2].role"),
        (('provider = "openai"', 'provider = "gemini"'), "judge.provider"),
        (("max_invocations = 3", "max_invocations = -1"), "judge.max_invocations"),
    ],
)
def test_table_mistakes_are_rejected_by_key(change: tuple[str, str], path: str) -> None:
    import tomllib

    text = TOML.replace(*change)
    assert text != TOML
    with pytest.raises(InvalidInput) as caught:
        parse_gate_tables(tomllib.loads(text))
    assert caught.value.path == path
    assert "sk-literal" not in caught.value.message


def test_a_judge_row_without_a_judge_is_rejected() -> None:
    import tomllib

    text = TOML.split("[judge]")[0] + TOML.split("max_invocations = 3")[1]
    with pytest.raises(InvalidInput) as caught:
        parse_gate_tables(tomllib.loads(text))
    assert caught.value.path == "requirements[2]"


# --- the CLI, and no network without a judge ---------------------------------------------------


def run_cli(tmp_path: Path, request: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "donegate",
            "gate",
            "decide",
            "--session",
            "r1",
            "--json",
            "--state-dir",
            str(tmp_path),
        ],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=False,
    )


def test_cli_decide_takes_the_contract_assessments_and_context(tmp_path: Path) -> None:
    request = {
        "options": {
            "requirement_contract": [{"id": "v", "role": "assistant_output", "pattern": "v1\\.4"}]
        },
        "facts": GREEN,
        "context": {"text": "released v1.4.2"},
    }
    run = run_cli(tmp_path, request)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["requirements"]["pending_count"] == 0
    request["context"] = {"text": "released"}
    vetoed = run_cli(tmp_path, request)
    assert vetoed.returncode == 1
    assert json.loads(vetoed.stdout)["requirements"]["pending"] == ["v"]


NO_NETWORK = """
import json, socket, sys
opened = []
def refuse(*args, **kwargs):
    opened.append(args)
    raise OSError("no network in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
from donegate.gate import Gate, GateContext, GateOptions
options = GateOptions(requirement_contract=[{"id": "pr", "role": "assistant_output",
                                             "pattern": "pull"}], **OPTIONS)
gate = Gate(options, state_dir=sys.argv[1])
facts = {"source_write_count": 1, "verify": {"ok": True}}
decision = gate.decide("s", facts, context=GateContext("s", text="pull/1", stop_reason="x"))
print(json.dumps({"reason": decision.reason, "httpx": "httpx" in sys.modules,
                  "sockets": len(opened)}))
"""


def test_without_a_judge_no_socket_is_opened_and_no_client_is_imported(tmp_path: Path) -> None:
    def run(options: str) -> subprocess.CompletedProcess[str]:
        script = NO_NETWORK.replace("**OPTIONS", options)
        return subprocess.run(
            [sys.executable, "-c", script, str(tmp_path)],
            capture_output=True,
            text=True,
            check=False,
        )

    quiet = run("")
    assert quiet.returncode == 0, quiet.stderr
    assert json.loads(quiet.stdout) == {
        "reason": "verified_after_write",
        "httpx": False,
        "sockets": 0,
    }
    # Control: the same stop with a judge configured does reach for the network.
    judged = run('judge={"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9"}')
    assert judged.returncode == 0, judged.stderr
    assert json.loads(judged.stdout) == {
        "reason": "completion_judge_error",
        "httpx": True,
        "sockets": 1,
    }


def test_the_readme_judge_configuration_loads() -> None:
    import re

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("## Requirements and the bounded judge", 1)[1]
    block = re.findall(r"```toml\n(.*?)```", section, re.S)[0]
    config = parse_config(block, environ={})
    assert config.gate.judge is not None
    assert config.gate.judge.api_key_env == "JUDGE_API_KEY"
    assert config.gate.requirements is not None
    assert config.gate.requirements.ids() == ("tests", "pr", "no-api-change")
