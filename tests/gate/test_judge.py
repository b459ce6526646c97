"""The bounded judge against a real HTTP server on loopback, through the real client (httpx).

Each rule of the page is played for real: the skip rule clause by clause (with a control where
every clause holds and no request is made), the one conversion and each of its four conditions,
the cap, the catalog's light-scrutiny skip, degraded judge-only mode, and every way a provider
can fail (a 5xx, a timeout, a refusal, a body out of protocol, an unknown gap class).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from donegate.demo.scripted_judge import (
    Reply,
    ScriptedJudge,
    anthropic_reply,
    openai_reply,
    serving,
)
from donegate.gate import Gate, GateContext, GateOptions
from donegate.gate.judge import CONVERSION

GREEN_AFTER_WRITE: dict[str, Any] = {
    "source_write_count": 1,
    "verify": {"ok": True, "command": "pytest"},
}
FINAL = GateContext("s", task="fix the zip bug", text="Fixed it.", stop_reason="sentinel")
DONE = {"verdict": "done", "detail": "looks right"}
FITTED = {
    "verdict": "continue",
    "detail": "normalize() special-cases the test's input",
    "gap_class": "unmet_manner_clause",
}
SAYS_RED = {"verdict": "continue", "detail": "tests fail", "gap_class": "failed_verification"}


@pytest.fixture
def judge() -> Iterator[ScriptedJudge]:
    with serving() as server:
        yield server


def gate_for(
    tmp_path: Path,
    server: ScriptedJudge,
    replies: list[Reply],
    _options: dict[str, Any] | None = None,
    **judge: Any,
) -> Gate:
    """A gate whose judge is the scripted server, answering ``replies`` in order."""
    server.replies[:] = replies
    config = {"provider": "openai", "model": "m", "base_url": server.url, **judge}
    return Gate(GateOptions(judge=config, **(_options or {})), state_dir=tmp_path / "state")


def ctx(**changes: Any) -> GateContext:
    return FINAL._replace(**changes)


# --- the skip rule -----------------------------------------------------------------------------


def test_all_seven_clauses_hold_no_call_no_judge_started(
    tmp_path: Path, judge: ScriptedJudge
) -> None:
    gate = gate_for(tmp_path, judge, [openai_reply(FITTED)])
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=FINAL)
    assert judge.requests == []
    assert decision.confirm
    assert decision.reason == "verified_after_write"
    assert decision.source == "gate"
    report = decision.to_json_dict()["judge"]
    assert report["outcome"] == "skipped_verified_after_write"
    assert report["source"] == "gate"
    assert report["invoked"] == {"deterministic": True, "verify_completion_judge": False}
    types = [e["type"] for e in gate.store.events("s")]
    assert types == ["judge_decision"]
    # A done sealed without a judge records an explicit empty ledger, never null.
    assert decision.to_json_dict()["requirements"]["required_count"] == 0


def test_skip_leaves_turn_end_condition_false_on_that_seam(
    tmp_path: Path, judge: ScriptedJudge
) -> None:
    gate = gate_for(tmp_path, judge, [], seam="turn_end_condition")
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=FINAL)
    assert decision.to_json_dict()["judge"]["invoked"]["turn_end_condition"] is False
    assert judge.requests == []


CLAUSE_BREAKERS: dict[str, tuple[Any, GateContext]] = {
    # the gate ran: no facts at all is degraded mode, the judge alone decides
    "gate_ran": (None, FINAL),
    # the reason is exactly verified_after_write: a green verifier with no source write is not
    "verified_after_write": (
        {"writes": [], "requires_write": False, "verify": {"ok": True}},
        FINAL,
    ),
    # the turn is the sealed final answer
    "sealed_final_answer": (GREEN_AFTER_WRITE, ctx(stop_reason="max_turns")),
    # the final answer is non-empty
    "answer_non_empty": (GREEN_AFTER_WRITE, ctx(text="  ")),
    # nothing is deferred past the turn
    "nothing_deferred": (GREEN_AFTER_WRITE, ctx(pending_effects=1)),
}


@pytest.mark.parametrize("clause", sorted(CLAUSE_BREAKERS))
def test_each_broken_clause_calls_the_judge(
    tmp_path: Path, judge: ScriptedJudge, clause: str
) -> None:
    facts, context = CLAUSE_BREAKERS[clause]
    gate = gate_for(tmp_path, judge, [openai_reply(DONE)])
    decision = gate.decide("s", facts, context=context)
    assert len(judge.requests) == 1
    report = decision.to_json_dict()["judge"]
    assert report["skip_clauses"][clause] is False
    assert report["invoked"]["verify_completion_judge"] is True
    assert [e["type"] for e in gate.store.events("s")] == ["judge_started", "judge_decision"]


def test_an_outstanding_row_calls_the_judge(tmp_path: Path, judge: ScriptedJudge) -> None:
    contract = [{"id": "no-api-change", "role": "judge", "description": "public API unchanged"}]
    gate = gate_for(
        tmp_path, judge, [openai_reply(DONE)], _options={"requirement_contract": contract}
    )
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=FINAL)
    assert len(judge.requests) == 1
    assert decision.to_json_dict()["judge"]["skip_clauses"]["ledger_clear"] is False


STAGE_BREAKERS: dict[str, dict[str, Any]] = {
    "gate_ran": {"facts_available": False},
    "verified_after_write": {"reason": "verified"},
    "observed_passed": {"reading": None},
    "sealed_final_answer": {"stop_reason": "max_turns"},
    "answer_non_empty": {"text": ""},
    "nothing_deferred": {"pending_effects": 2},
    "ledger_clear": {"contract": [{"id": "r", "role": "judge"}]},
}


@pytest.mark.parametrize("clause", sorted(STAGE_BREAKERS))
def test_each_clause_on_its_own(tmp_path: Path, judge: ScriptedJudge, clause: str) -> None:
    """The stage given one reading where exactly one clause fails: the judge is called.

    The ladder never pairs ``verified_after_write`` with a reading that is not ``passed`` (nor
    with facts unavailable), so the stage is given its inputs directly."""
    from donegate.gate.facts import Reading, WriteCounts
    from donegate.gate.judge import JudgeStage
    from donegate.gate.judge_config import JudgeConfig
    from donegate.gate.ladder import Observation, Ruling
    from donegate.gate.requirements import parse_contract
    from donegate.gate.store import GateStore

    judge.replies[:] = [openai_reply(DONE)]
    change = STAGE_BREAKERS[clause]
    green = Reading(True, None, "pytest")
    obs = Observation(
        change.get("facts_available", True),
        WriteCounts(True, 1),
        True,
        True,
        change.get("reading", green),
    )
    context = ctx(**{k: v for k, v in change.items() if k in GateContext._fields})
    contract = parse_contract(change["contract"]) if "contract" in change else None
    config = JudgeConfig("openai", "m", base_url=judge.url)
    store = GateStore(tmp_path / "g.sqlite3")
    stage = JudgeStage(config, store, "s", context, (contract, [], []), _now)
    stage(obs, Ruling(True, change.get("reason", "verified_after_write")))
    assert stage.report is not None
    assert [k for k, v in stage.report.skip_clauses.items() if not v] == [clause]
    assert len(judge.requests) == 1
    assert stage.report.invoked
    # Control: with every clause holding, the same stage makes no request.
    judge.requests.clear()
    intact = JudgeStage(config, store, "t", FINAL, (None, [], []), _now)
    intact(obs._replace(facts_available=True, reading=green), Ruling(True, "verified_after_write"))
    assert judge.requests == []
    assert intact.report is not None
    assert not intact.report.invoked
    store.close()


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


# --- what the judge is shown, and what it says --------------------------------------------------


def test_the_judge_is_shown_task_diff_message_and_the_verification_block(
    tmp_path: Path, judge: ScriptedJudge
) -> None:
    gate = gate_for(tmp_path, judge, [openai_reply(FITTED)])
    context = ctx(stop_reason="max_turns", diff="--- a/zip.py\n+++ b/zip.py\n+if z == '9')")
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=context)
    (request,) = judge.requests
    assert request.path == "/chat/completions"
    prompt = request.body["messages"][1]["content"]
    assert "fix the zip bug" in prompt
    assert "+if z == '9'" in prompt
    assert "Fixed it." in prompt
    block = json.loads(prompt.split("verification: ", 1)[1].split("\n", 1)[0])
    assert block == {
        "oracle_expected": True,
        "command": "pytest",
        "observed": "passed",
        "observed_at_evidence_index": 0,
    }
    # A veto for a clause the verifier cannot see: the agent is sent back with the detail.
    assert not decision.confirm
    assert decision.reason == "judge_continue"
    assert "[unmet_manner_clause]" in (decision.message or "")
    assert "special-cases the test's input" in (decision.message or "")
    recorded = decision.to_json_dict()["judge"]
    assert recorded["answer"]["gap_class"] == "unmet_manner_clause"
    assert recorded["shown"]["task"] == "fix the zip bug"
    assert {"action": "verification", "role": "verifier"} in recorded["selected_actions"]
    event = gate.store.events("s")[-1]
    assert event["trigger"] == "verify_completion_judge"
    assert event["source"] == "judge"


def test_not_run_when_facts_are_unavailable(tmp_path: Path, judge: ScriptedJudge) -> None:
    gate = gate_for(tmp_path, judge, [openai_reply(DONE)])
    decision = gate.decide("s", None, context=FINAL)
    prompt = judge.requests[0].body["messages"][1]["content"]
    assert '"observed": "not_run"' in prompt
    # Degraded mode with a judge is judge-only: its done lets go, but nothing is verified.
    assert decision.confirm
    assert decision.reason == "facts_unavailable"
    assert decision.outcome == "not_verified"


def test_unknown_gap_class_reads_other_and_vetoes(tmp_path: Path, judge: ScriptedJudge) -> None:
    answer = {"verdict": "continue", "detail": "hm", "gap_class": "vibes"}
    gate = gate_for(tmp_path, judge, [openai_reply(answer)])
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=ctx(stop_reason=None))
    assert not decision.confirm
    assert decision.to_json_dict()["judge"]["answer"]["gap_class"] == "other"


def test_absent_gap_class_reads_other(tmp_path: Path, judge: ScriptedJudge) -> None:
    gate = gate_for(tmp_path, judge, [openai_reply({"verdict": "continue", "detail": "no"})])
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=ctx(stop_reason=None))
    assert not decision.confirm
    assert decision.judge is not None
    assert decision.judge.answer is not None
    assert decision.judge.answer.gap_class == "other"


# --- the one conversion ------------------------------------------------------------------------


def test_failed_verification_over_a_passing_gate_converts_to_done(
    tmp_path: Path, judge: ScriptedJudge
) -> None:
    gate = gate_for(tmp_path, judge, [openai_reply(SAYS_RED)])
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=ctx(stop_reason=None))
    assert decision.confirm
    assert decision.converted_from == CONVERSION
    assert decision.outcome == "verified"
    assert gate.store.conversions("s") == {CONVERSION: 1}


CONVERSION_BREAKERS: dict[str, tuple[Any, dict[str, Any]]] = {
    # the gate did not run (and its reason is facts_unavailable)
    "gate_not_run": (None, SAYS_RED),
    # the reading is red (a red verifier over no write, which the ladder lets go)
    "observed_failed": ({"writes": [], "requires_write": False, "verify": {"ok": False}}, SAYS_RED),
    # the reading is not_run: no verifier at all
    "observed_not_run": ({"source_write_count": 1}, SAYS_RED),
    # another gap class
    "other_class": (GREEN_AFTER_WRITE, {**SAYS_RED, "gap_class": "missing_artifact"}),
}


@pytest.mark.parametrize("case", sorted(CONVERSION_BREAKERS))
def test_no_conversion_unless_all_four_hold(
    tmp_path: Path, judge: ScriptedJudge, case: str
) -> None:
    facts, answer = CONVERSION_BREAKERS[case]
    gate = gate_for(tmp_path, judge, [openai_reply(answer)])
    decision = gate.decide("s", facts, context=ctx(stop_reason=None))
    assert not decision.confirm
    assert decision.reason == "judge_continue"
    assert decision.converted_from is None


# --- provider failures: never verified ---------------------------------------------------------

FAILURES = {
    "5xx": Reply(503, '{"error": "overloaded"}'),
    "body_not_json": Reply(200, "<html>gateway</html>"),
    "content_not_json": openai_reply("I think it is done!"),
    "unknown_verdict": openai_reply({"verdict": "approve", "detail": "ok"}),
    "refusal": openai_reply("", refusal="I can't help with that."),
    "no_choices": Reply(200, '{"choices": []}'),
}


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_failing_provider_leaves_the_stop_unverified(
    tmp_path: Path, judge: ScriptedJudge, failure: str
) -> None:
    gate = gate_for(tmp_path, judge, [FAILURES[failure]])
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=ctx(stop_reason=None))
    assert len(judge.requests) == 1
    assert decision.reason == "completion_judge_error"
    assert decision.outcome == "not_verified"
    assert decision.judge is not None
    assert decision.judge.error


def test_a_timeout_leaves_the_stop_unverified(tmp_path: Path, judge: ScriptedJudge) -> None:
    slow = Reply(200, openai_reply(DONE).body, delay_s=2.0)
    gate = gate_for(tmp_path, judge, [slow], timeout_s=0.2)
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=ctx(stop_reason=None))
    assert decision.reason == "completion_judge_error"
    assert decision.judge is not None
    assert (decision.judge.error or "").startswith("timeout")
    assert decision.outcome == "not_verified"


def test_a_slow_answer_within_the_timeout_counts(tmp_path: Path, judge: ScriptedJudge) -> None:
    slow = Reply(200, openai_reply(DONE).body, delay_s=0.3)
    gate = gate_for(tmp_path, judge, [slow], timeout_s=30)
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=ctx(stop_reason=None))
    assert decision.confirm
    assert decision.source == "judge"
    assert decision.outcome == "verified"


def test_a_refused_connection_leaves_the_stop_unverified(tmp_path: Path) -> None:
    with serving() as gone:
        url = gone.url
    options = GateOptions(judge={"provider": "openai", "model": "m", "base_url": url})
    decision = Gate(options, state_dir=tmp_path).decide(
        "s", GREEN_AFTER_WRITE, context=ctx(stop_reason=None)
    )
    assert decision.reason == "completion_judge_error"
    assert decision.judge is not None
    assert (decision.judge.error or "").startswith("transport")


def test_the_api_key_is_sent_and_masked(
    tmp_path: Path, judge: ScriptedJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-judge-1234567890"
    monkeypatch.setenv("JUDGE_TEST_KEY", secret)
    echo = Reply(401, json.dumps({"error": f"invalid key {secret}"}))
    gate = gate_for(tmp_path, judge, [echo], api_key_env="JUDGE_TEST_KEY")
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=ctx(stop_reason=None))
    assert judge.requests[0].headers["authorization"] == f"Bearer {secret}"
    recorded = json.dumps(decision.to_json_dict()) + json.dumps(gate.store.events("s"))
    assert secret not in recorded
    assert "***" in recorded
    assert secret not in repr(gate.options.judge)


# --- the cap -----------------------------------------------------------------------------------


def test_past_the_cap_over_a_passing_verifier_is_stop_verified(
    tmp_path: Path, judge: ScriptedJudge
) -> None:
    gate = gate_for(tmp_path, judge, [openai_reply(FITTED)] * 2, max_invocations=2)
    not_final = ctx(stop_reason=None)
    reasons = [gate.decide("s", GREEN_AFTER_WRITE, context=not_final).reason for _ in range(3)]
    assert reasons == ["judge_continue", "judge_continue", "judge_cap_reached_over_verified_pass"]
    assert len(judge.requests) == 2
    last = gate.store.events("s")[-1]
    assert last["judge"]["status"] == "stop_verified"
    assert last["outcome"] == "verified"
    assert gate.store.judge_invocations("s") == 2


def test_past_the_cap_with_a_pending_row_is_unverified(
    tmp_path: Path, judge: ScriptedJudge
) -> None:
    contract = [{"id": "changelog", "role": "judge"}]
    replies = [openai_reply(DONE)]
    gate = gate_for(
        tmp_path, judge, replies, max_invocations=1, _options={"requirement_contract": contract}
    )
    first = gate.decide("s", GREEN_AFTER_WRITE, context=FINAL)
    # The judge's done does not clear a row it never assessed.
    assert not first.confirm
    assert first.reason == "requirements_pending"
    second = gate.decide("s", GREEN_AFTER_WRITE, context=FINAL)
    assert second.confirm
    assert second.reason == "completion_unverified"
    assert second.outcome == "not_verified"
    assert second.requirements.pending == {"changelog": "missing"}


def test_past_the_cap_without_a_passing_verifier_is_unverified(
    tmp_path: Path, judge: ScriptedJudge
) -> None:
    gate = gate_for(tmp_path, judge, [openai_reply(FITTED)], max_invocations=1)
    facts = {"source_write_count": 1}  # no oracle: not_run
    assert gate.decide("s", facts, context=FINAL).reason == "judge_continue"
    decision = gate.decide("s", facts, context=FINAL)
    assert decision.reason == "completion_unverified"
    assert decision.outcome == "not_verified"


def test_zero_disables_the_cap(tmp_path: Path, judge: ScriptedJudge) -> None:
    gate = gate_for(tmp_path, judge, [openai_reply(FITTED)] * 7, max_invocations=0)
    for _ in range(7):
        assert gate.decide("s", GREEN_AFTER_WRITE, context=ctx(text="")).reason == "judge_continue"
    assert len(judge.requests) == 7


def test_a_deterministic_veto_never_spends_a_call(tmp_path: Path, judge: ScriptedJudge) -> None:
    gate = gate_for(tmp_path, judge, [openai_reply(DONE)])
    decision = gate.decide("s", {"source_write_count": 1, "verify": {"ok": False}}, context=FINAL)
    assert decision.reason == "verification_after_write_red"
    assert decision.strict
    assert judge.requests == []
    assert gate.store.judge_invocations("s") == 0


# --- the catalog's light-scrutiny skip ---------------------------------------------------------


def test_light_scrutiny_skips_with_source_catalog(tmp_path: Path, judge: ScriptedJudge) -> None:
    gate = gate_for(tmp_path, judge, [], scrutiny="light")
    decision = gate.decide("s", {"source_write_count": 1}, context=ctx(stop_reason=None))
    assert judge.requests == []
    assert decision.source == "catalog"
    assert decision.judge is not None
    assert decision.judge.outcome == "skipped_light_scrutiny"


def test_light_scrutiny_is_subordinate_to_the_skip_rule(
    tmp_path: Path, judge: ScriptedJudge
) -> None:
    gate = gate_for(tmp_path, judge, [], scrutiny="light")
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=FINAL)
    assert decision.source == "gate"


def test_light_scrutiny_does_not_skip_a_pending_row(tmp_path: Path, judge: ScriptedJudge) -> None:
    contract = [{"id": "changelog", "role": "judge"}]
    answer = {**DONE, "requirements": [{"id": "changelog", "met": True}]}
    gate = gate_for(
        tmp_path,
        judge,
        [openai_reply(answer)],
        scrutiny="light",
        _options={"requirement_contract": contract},
    )
    decision = gate.decide("s", GREEN_AFTER_WRITE, context=FINAL)
    assert len(judge.requests) == 1
    assert decision.confirm
    assert decision.requirements.clear
    assert decision.requirements.declared


# --- Anthropic's Messages API ------------------------------------------------------------------


def test_anthropic_messages_api(
    tmp_path: Path, judge: ScriptedJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_TEST_ANTHROPIC", "ant-key-abcdef")
    replies = [anthropic_reply(FITTED), anthropic_reply("", stop_reason="refusal")]
    gate = gate_for(
        tmp_path, judge, replies, provider="anthropic", api_key_env="JUDGE_TEST_ANTHROPIC"
    )
    first = gate.decide("s", GREEN_AFTER_WRITE, context=ctx(stop_reason=None))
    request = judge.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "ant-key-abcdef"
    assert "anthropic-version" in request.headers
    assert "verification:" in request.body["messages"][0]["content"]
    assert not first.confirm
    assert first.reason == "judge_continue"
    second = gate.decide("s", GREEN_AFTER_WRITE, context=ctx(stop_reason=None))
    assert second.reason == "completion_judge_error"
    assert second.judge is not None
    assert (second.judge.error or "").startswith("refused")


# --- events and the CLI ------------------------------------------------------------------------


def test_cli_decide_and_events_show_the_judge(tmp_path: Path, judge: ScriptedJudge) -> None:
    import subprocess
    import sys

    judge.replies[:] = [openai_reply(SAYS_RED)]
    request = {
        "facts": GREEN_AFTER_WRITE,
        "options": {"judge": {"provider": "openai", "model": "m", "base_url": judge.url}},
        "context": {"task": "t", "text": "done", "stop_reason": "max_turns"},
    }
    state = str(tmp_path / "state")
    cli = [sys.executable, "-m", "donegate", "gate"]
    run = subprocess.run(
        [*cli, "decide", "--session", "c1", "--state-dir", state, "--json"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["converted_from"] == CONVERSION
    events = subprocess.run(
        [*cli, "events", "--session", "c1", "--state-dir", state],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert [json.loads(e)["type"] for e in events] == ["judge_started", "judge_decision"]
    counts = subprocess.run(
        [*cli, "counts", "--session", "c1", "--state-dir", state],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(counts)["conversions"] == {CONVERSION: 1}
    assert json.loads(counts)["judge_invocations"] == 1


# --- the store ---------------------------------------------------------------------------------


def test_a_version_2_gate_file_gains_the_judge_count(tmp_path: Path) -> None:
    import sqlite3

    from donegate.gate import store

    path = tmp_path / store.FILE_NAME
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE gate_sessions (session_id TEXT PRIMARY KEY, by_reason TEXT NOT NULL, "
        "soft INTEGER NOT NULL, strict INTEGER NOT NULL, strict_since_allow INTEGER NOT NULL, "
        "outcome TEXT, blocks_in_a_row INTEGER NOT NULL DEFAULT 0, "
        "failed_in_a_row INTEGER NOT NULL DEFAULT 0, last_failing INTEGER); "
        "CREATE TABLE gate_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
        "session_id TEXT NOT NULL, event TEXT NOT NULL); "
        "INSERT INTO gate_sessions VALUES ('s', '{}', 1, 0, 0, NULL, 0, 0, NULL); "
        "PRAGMA user_version = 2;"
    )
    db.commit()
    db.close()
    kept = store.GateStore(path)
    assert kept.judge_invocations("s") == 0
    with kept.session("s") as tx:
        tx.spend_judge_call()
    assert kept.judge_invocations("s") == 1
    assert kept.counts("s").soft == 1
    kept.close()


def test_concurrent_stops_never_spend_more_than_the_cap(
    tmp_path: Path, judge: ScriptedJudge
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    judge.replies[:] = [openai_reply(FITTED)] * 8
    config = {"provider": "openai", "model": "m", "base_url": judge.url, "max_invocations": 3}

    def stop(_: int) -> str:
        gate = Gate(GateOptions(judge=config), state_dir=tmp_path / "state")
        try:
            return gate.decide("s", GREEN_AFTER_WRITE, context=ctx(stop_reason=None)).reason
        finally:
            gate.store.close()

    with ThreadPoolExecutor(max_workers=6) as pool:
        reasons = list(pool.map(stop, range(6)))
    assert len(judge.requests) == 3
    assert sorted(reasons).count("judge_continue") == 3
    assert sorted(reasons).count("judge_cap_reached_over_verified_pass") == 3


# --- the answer and the configuration, as data ---------------------------------------------------


def test_an_answer_in_a_code_fence_is_read_and_foreign_rows_are_dropped() -> None:
    from donegate.gate.judge_answer import JudgeFailure, parse_answer

    text = '```json\n{"verdict": "done", "requirements": [{"id": "a", "met": true}, ' + (
        '{"id": "tests", "met": true}]}\n```'
    )
    answer = parse_answer(text, frozenset({"a"}))
    assert answer.verdict == "done"
    assert answer.gap_class == "other"
    assert [r.id for r in answer.requirements] == ["a"]
    with pytest.raises(JudgeFailure):
        parse_answer('{"verdict": "done", "detail": 3}', frozenset())


@pytest.mark.parametrize(
    ("judge", "path"),
    [
        (True, "judge"),
        ({"provider": "openai"}, "judge.model"),
        ({"provider": "openai", "model": "m", "base_url": "ftp://x"}, "judge.base_url"),
        ({"provider": "openai", "model": "m", "seam": "stop"}, "judge.seam"),
        ({"provider": "openai", "model": "m", "timeout_s": 0}, "judge.timeout_s"),
        ({"provider": "openai", "model": "m", "scrutiny": "none"}, "judge.scrutiny"),
    ],
)
def test_bad_judge_options_are_rejected_by_path(judge: Any, path: str) -> None:
    from donegate.errors import InvalidInput
    from donegate.gate import parse_options

    with pytest.raises(InvalidInput) as caught:
        parse_options({"judge": judge})
    assert caught.value.path == f"options.{path}"
