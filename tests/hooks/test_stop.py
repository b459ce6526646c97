"""The gate at a stop, end to end: real git repositories, real pytest runs, real hook processes."""

from __future__ import annotations

import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from donegate.demo import project
from donegate.demo.project import FIXED, HookRun, payload, run_hook
from donegate.gate import Gate
from donegate.gate.store import GateStore
from donegate.ledger import Ledger

SESSION = "sess-1"


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


def make_repo(tmp_path: Path, **config: Any) -> Path:
    return project.create(tmp_path / "repo", **config)


def start(repo: Path, state: Path, session: str = SESSION) -> None:
    assert run_hook(payload("SessionStart", session, repo, source="startup"), state).exit_code == 0


def stop(repo: Path, state: Path, session: str = SESSION, **fields: Any) -> HookRun:
    fields.setdefault("last_assistant_message", "Done: the parser handles ZIP+4 now.")
    run = run_hook(payload("Stop", session, repo, **fields), state)
    assert run.exit_code == 0, run.stderr
    assert "Traceback" not in run.stdout
    return run


def receipts(state: Path, session: str = SESSION) -> list[Any]:
    with Ledger(state) as ledger:
        return list(reversed(ledger.recent(100, session=session)))


def test_a_turn_that_changed_nothing_is_allowed_without_running_checks(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    run = stop(repo, state, last_assistant_message="The parser lives in zipcode.py.")
    assert run.answer == {}
    [receipt] = receipts(state)
    assert receipt.verdict == "none"
    assert receipt.reason == "no_workspace_write"
    assert receipt.claim == {}


def test_a_real_fix_is_allowed_with_a_verified_receipt(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    (repo / "zipcode.py").write_text(FIXED)
    run = stop(repo, state)
    assert not run.blocked
    [receipt] = receipts(state)
    assert (receipt.verdict, receipt.decision, receipt.reason) == (
        "verified",
        "allow",
        "verified_after_write",
    )
    claim = receipt.claim
    assert [m["target"] for m in claim["mutations"]] == ["zipcode.py"]
    evidence = claim["evidence"][0]
    assert evidence["check_type"] == "test_run"
    assert evidence["verifier"]["kind"] == "independent"
    assert evidence["observed_value"]["passed"] == 2
    assert evidence["at"] > claim["mutations"][0]["at"]
    assert claim["claimed_outcome"] == "Done: the parser handles ZIP+4 now."


def test_a_comment_only_change_is_sent_back_when_the_task_needs_a_change(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path, requires_write=True)
    start(repo, state)
    source = (repo / "zipcode.py").read_text()
    (repo / "zipcode.py").write_text(
        source.replace('"""ZIP codes."""', '"""ZIP codes."""  # fixed')
    )
    run = stop(repo, state)
    assert run.blocked
    assert "cosmetic" in run.answer["reason"].lower() or "comment" in run.answer["reason"].lower()
    assert receipts(state)[0].reason == "no_source_write"


def test_a_comment_only_change_is_allowed_by_default(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    (repo / "zipcode.py").write_text((repo / "zipcode.py").read_text() + "# reviewed\n")
    assert not stop(repo, state).blocked


def test_a_broken_test_is_named_and_the_agent_let_go_once_fixed(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    (repo / "zipcode.py").write_text(FIXED.replace('split("-")[0]', 'split("-")[1]'))
    first = stop(repo, state)
    assert first.blocked
    assert "tests/test_zip.py::test_plain" in first.answer["reason"]
    assert "after your last edit" in first.answer["reason"]
    (repo / "zipcode.py").write_text(FIXED)
    second = stop(repo, state, stop_hook_active=True)
    assert not second.blocked
    assert [r.verdict for r in receipts(state)] == ["refuted", "verified"]


def test_editing_the_protected_test_is_not_verified(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    tests = repo / "tests" / "test_zip.py"
    tests.write_text(
        tests.read_text()
        .replace('== "94107"\n', '== "941071234"\n')
        .replace('normalize("94107")', 'normalize("94107")[:5]')
    )
    (repo / "zipcode.py").write_text(FIXED.replace('.split("-")[0]', '.replace("-", "")'))
    run = stop(repo, state)
    assert run.blocked
    assert "tests/test_zip.py" in run.answer["reason"]
    [receipt] = receipts(state)
    assert receipt.verdict == "unverified"
    assert receipt.claim["evidence"][0]["verifier"]["kind"] == "absent"


def test_a_cosmetic_write_after_a_verified_stop_does_not_reopen_it(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path, requires_write=True)
    start(repo, state)
    (repo / "zipcode.py").write_text(FIXED)
    assert not stop(repo, state).blocked
    (repo / "zipcode.py").write_text(FIXED + "# done\n")
    run = stop(repo, state)
    assert not run.blocked
    last = receipts(state)[-1]
    assert last.reason == "verified_after_write"
    assert last.claim == {}  # nothing ran: the earlier verification still holds


def test_a_source_write_after_a_verified_stop_reopens_it(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    (repo / "zipcode.py").write_text(FIXED)
    assert not stop(repo, state).blocked
    (repo / "zipcode.py").write_text(FIXED.replace("strip()", "rstrip()"))
    run = stop(repo, state)
    assert run.blocked
    assert "test_update" in run.answer["reason"]


def test_a_session_without_a_start_event_uses_head_as_its_baseline(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    (repo / "zipcode.py").write_text(FIXED.replace('split("-")[0]', 'split("-")[1]'))
    run = stop(repo, state, session="late-install")
    assert run.blocked
    [receipt] = receipts(state, "late-install")
    assert [m["target"] for m in receipt.claim["mutations"]] == ["zipcode.py"]


def test_background_tasks_are_never_blocked(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    (repo / "zipcode.py").write_text("broken(")
    run = stop(repo, state, background_tasks=[{"id": "b1", "status": "running"}])
    assert not run.blocked
    assert "background" in run.answer["systemMessage"]
    assert receipts(state)[0].reason == "background_tasks"


def test_warn_mode_lets_the_agent_stop_and_tells_the_person(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path, mode="warn")
    start(repo, state)
    (repo / "zipcode.py").write_text(FIXED.replace('split("-")[0]', 'split("-")[1]'))
    run = stop(repo, state)
    assert not run.blocked
    assert "NOT verified" in run.answer["systemMessage"]
    assert receipts(state)[0].verdict == "refuted"


def test_record_mode_is_silent_but_keeps_the_receipt(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path, mode="record")
    start(repo, state)
    (repo / "zipcode.py").write_text(FIXED.replace('split("-")[0]', 'split("-")[1]'))
    run = stop(repo, state)
    assert run.answer == {}
    assert receipts(state)[0].verdict == "refuted"


def test_a_red_build_is_let_go_attributably_after_the_strict_cap(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path, max_strict_vetoes=2)
    start(repo, state)
    (repo / "zipcode.py").write_text("def normalize(z):\n    return None\n")
    runs = [stop(repo, state, stop_hook_active=i > 0) for i in range(3)]
    assert [r.blocked for r in runs] == [True, True, False]
    assert "strict_veto_cap_reached" in runs[2].answer["systemMessage"]
    assert "NOT verified" in runs[2].answer["systemMessage"]


def test_a_broken_config_never_traps_the_agent(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "donegate.toml").write_text("[gate]\nmax_vetoes = 'many'\n")
    start(repo, state)
    (repo / "zipcode.py").write_text(FIXED)
    run = stop(repo, state)
    assert not run.blocked
    assert "could not check this stop" in run.answer["systemMessage"]
    assert "gate.max_vetoes" in run.answer["systemMessage"]
    [receipt] = receipts(state)
    assert (receipt.verdict, receipt.reason) == ("unverified", "donegate_error")


def test_an_unreadable_payload_is_answered_not_crashed(state: Path) -> None:
    run = run_hook("{not json", state)
    assert run.exit_code == 0
    assert "could not read" in run.answer["systemMessage"]
    assert "Traceback" not in run.stdout + run.stderr


def test_codex_stop_answers_with_schema_keys_only(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    data = payload("Stop", "codex-1", repo, turn_id="t1", model="gpt-5-codex")
    (repo / "zipcode.py").write_text("def normalize(z):\n    return None\n")
    run = run_hook(data, state, host="codex")
    assert run.blocked
    assert set(run.answer) <= {"continue", "decision", "reason", "stopReason", "systemMessage"}


def test_parallel_stop_hooks_agree_and_each_leaves_a_receipt(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    (repo / "zipcode.py").write_text(FIXED)
    with ThreadPoolExecutor(3) as pool:
        runs = list(pool.map(lambda _: stop(repo, state), range(3)))
    assert not any(r.blocked for r in runs)
    reasons = sorted(r.reason for r in receipts(state))
    assert reasons == ["verified_after_write"] * 3
    assert sum(1 for r in receipts(state) if r.claim) == 1  # the tests ran once


def test_post_tool_use_is_journalled(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    tool = {"file_path": str(repo / "zipcode.py"), "content": FIXED}
    data = payload("PostToolUse", SESSION, repo, tool_name="Write", tool_input=tool)
    assert run_hook(data, state).stdout == ""
    journals = list(state.glob("workspaces/*/sessions/*/journal.jsonl"))
    [entry] = [json.loads(line) for line in journals[0].read_text().splitlines()]
    assert entry["path"] == "zipcode.py"
    assert entry["tool"] == "Write"


def test_state_lives_outside_the_working_tree(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    (repo / "zipcode.py").write_text(FIXED)
    stop(repo, state)
    status = sorted(p.name for p in repo.iterdir())
    assert status == [".git", "donegate.toml", "pytest.ini", "tests", "zipcode.py"]
    assert sqlite3.connect(state / "receipts.sqlite3").execute("select count(*) from receipts")


def test_reported_writes_and_commands_ride_along_in_the_claim(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    (repo / "zipcode.py").write_text(FIXED)
    tool = {"file_path": str(repo / "zipcode.py"), "content": FIXED}
    run_hook(payload("PostToolUse", SESSION, repo, tool_name="Edit", tool_input=tool), state)
    bash = {"command": "python -m pytest -q | tail -1"}
    run_hook(payload("PostToolUse", SESSION, repo, tool_name="Bash", tool_input=bash), state)
    assert not stop(repo, state).blocked
    claim = receipts(state)[0].claim
    [mutation] = claim["mutations"]
    assert mutation["reported_by"] == ["Edit"]
    assert mutation["first_reported_at"] <= mutation["at"]
    assert claim["shell_commands"] == ["python -m pytest -q | tail -1"]


def test_soft_and_strict_blocks_together_stop_below_the_hosts_loop_cap(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path, requires_write=True)
    config = repo / "donegate.toml"
    config.write_text(config.read_text().replace("[gate]\n", "[gate]\nmax_blocks_in_a_row = 3\n"))
    start(repo, state)
    first = stop(repo, state)  # nothing written yet: a soft veto
    (repo / "zipcode.py").write_text("def normalize(z):\n    return None\n")
    second = stop(repo, state, stop_hook_active=True)  # red: a strict veto
    third = stop(repo, state, stop_hook_active=True)
    assert [first.blocked, second.blocked, third.blocked] == [True, True, False]
    assert "too many times in a row" in third.answer["systemMessage"]
    assert "NOT verified" in third.answer["systemMessage"]
    assert [r.reason for r in receipts(state)][-1] == "blocks_in_a_row_cap_reached"
    # One history: the gate's own record agrees with the receipt, and its caps start over.
    events = Gate(store=GateStore(state / "gate.sqlite3")).store.events(SESSION)
    assert [(e["confirm"], e["reason"]) for e in events][-1] == (
        True,
        "blocks_in_a_row_cap_reached",
    )
    assert GateStore(state / "gate.sqlite3").counts(SESSION).strict_since_allow == 0


def test_an_agent_cannot_loosen_the_configuration_mid_session(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    config = repo / "donegate.toml"
    config.write_text(
        config.read_text()
        .replace('on_unverified = "block"', 'on_unverified = "record"')
        .replace('"-m", "pytest"', '"-c", "pass", "pytest"')
    )
    (repo / "zipcode.py").write_text("def normalize(z):\n    return None\n")
    run = stop(repo, state)
    assert run.blocked
    # Judged by the pinned file (block mode, the real tests); the write to the judge's own
    # settings also voids the run until a person accepts it.
    assert "'donegate.toml'" in run.answer["reason"]
    assert "donegate accept" not in run.answer["reason"]  # the person's act, never the agent's
    assert "judged by the configuration the session started with" in run.answer["systemMessage"]


def test_a_session_without_a_start_is_judged_by_heads_configuration(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    config = repo / "donegate.toml"
    config.write_text(
        config.read_text().replace('on_unverified = "block"', 'on_unverified = "record"')
    )
    (repo / "zipcode.py").write_text("def normalize(z):\n    return None\n")
    run = stop(repo, state, session="late")
    assert run.blocked


def test_gemini_cli_after_agent_is_gated(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    base = {"session_id": "gem-1", "cwd": str(repo), "timestamp": "2026-11-29T10:00:00Z"}
    assert run_hook({**base, "hook_event_name": "SessionStart"}, state, "gemini-cli").stdout == ""
    (repo / "zipcode.py").write_text("def normalize(z):\n    return None\n")
    said = {"prompt": "fix it", "prompt_response": "Fixed.", "stop_hook_active": False}
    first = run_hook({**base, "hook_event_name": "AfterAgent", **said}, state, "gemini-cli")
    assert first.answer["decision"] == "deny"
    assert "test_zip" in first.answer["reason"]
    (repo / "zipcode.py").write_text(FIXED)
    said["stop_hook_active"] = True
    second = run_hook({**base, "hook_event_name": "AfterAgent", **said}, state, "gemini-cli")
    assert "decision" not in second.answer  # let go (the notice says the agent ran unconfined)
    assert [r.host for r in receipts(state, "gem-1")] == ["gemini-cli", "gemini-cli"]


def test_cursor_stop_is_gated_with_a_follow_up(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    base = {"conversation_id": "cur-1", "generation_id": "g1", "workspace_roots": [str(repo)]}
    prompt = {**base, "hook_event_name": "beforeSubmitPrompt", "prompt": "fix it"}
    assert run_hook(prompt, state, "cursor").answer == {}
    (repo / "zipcode.py").write_text("def normalize(z):\n    return None\n")
    stopped = {**base, "hook_event_name": "stop", "status": "completed", "loop_count": 0}
    first = run_hook(stopped, state, "cursor")
    assert "test_zip" in first.answer["followup_message"]
    aborted = run_hook({**stopped, "status": "aborted"}, state, "cursor")
    assert aborted.answer == {}
    (repo / "zipcode.py").write_text(FIXED)
    second = run_hook({**stopped, "loop_count": 1}, state, "cursor")
    assert second.answer == {}
    assert [r.verdict for r in receipts(state, "cur-1")] == ["refuted", "verified"]


def test_a_stop_leaves_its_commits_in_the_log_for_a_later_process(
    tmp_path: Path, state: Path
) -> None:
    """No checkpoint (and its syncs) at every stop; every receipt is still there to read."""
    repo = make_repo(tmp_path)
    start(repo, state)
    stop(repo, state, last_assistant_message="Nothing to do.")
    stop(repo, state, last_assistant_message="Still nothing.")
    for name in ("receipts.sqlite3", "gate.sqlite3"):
        log = state / f"{name}-wal"
        assert log.is_file()
        assert log.stat().st_size > 0  # the hook's commits, not yet checkpointed
        with sqlite3.connect(state / name) as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert [r.reason for r in receipts(state)] == ["no_workspace_write", "no_workspace_write"]


def test_a_damaged_stat_record_is_moved_aside_and_the_person_told(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state)
    stop(repo, state, last_assistant_message="Nothing to do.")
    [record] = state.glob("workspaces/*/latest.snap")
    record.write_bytes(b"\x00not a record")
    (repo / "zipcode.py").write_text(FIXED)
    run = stop(repo, state)
    told = run.answer.get("systemMessage", "")
    assert "stat record latest.snap could not be used" in told
    assert [p.name.split(".")[:2] for p in (state / "quarantine").iterdir()] == [["latest", "snap"]]
    assert receipts(state)[-1].verdict == "verified"  # every file read again, the fix verified
    assert record.read_bytes() != b"\x00not a record"  # a fresh record took its place
