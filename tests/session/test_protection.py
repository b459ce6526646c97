"""Protection measured against what a person accepted, at every stop, across sessions.

Each test plays the attack for real through the real hook process on a real project, and first
shows (``plain_pytest_passes``) that the tree it leaves is green to a plain test run: without the
defence, the stop would have verified with the bug still there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from donegate.demo import project
from tests.session.support import (
    NOT_A_FIX,
    WEAKENED_TESTS,
    donegate,
    last,
    make_repo,
    plain_pytest_passes,
    prompt,
    receipts,
    shell,
    start,
    stop,
)

TEST_FILE = "tests/test_zip.py"


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


def test_a_test_weakened_in_one_session_does_not_judge_the_next(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    (repo / TEST_FILE).write_text(WEAKENED_TESTS)
    assert stop(repo, state, "s1").blocked  # the protected write is caught in its own session
    project.git(repo, "commit", "-qam", "tests")  # agents commit: that launders nothing
    start(repo, state, "s2")
    (repo / "zipcode.py").write_text(NOT_A_FIX)
    assert plain_pytest_passes(repo)  # the attack: green, with the bug still there
    run = stop(repo, state, "s2")
    assert run.blocked
    assert last(state).verdict != "verified"
    assert "'tests/test_zip.py' (protected by 'tests/**')" in run.answer["reason"]
    assert "ask the person" in run.answer["reason"]
    assert "donegate accept" not in run.answer["reason"]  # the person's act, never the agent's


def test_a_person_accepts_the_agents_test_and_the_next_run_counts(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    extra = project.TESTS + '\n\ndef test_blank() -> None:\n    assert normalize("") == ""\n'
    (repo / TEST_FILE).write_text(extra)
    stop(repo, state, "s1")
    accepted = donegate("accept", "--yes", TEST_FILE, cwd=repo, state=state)
    assert accepted.returncode == 0, accepted.stderr
    assert "+def test_blank" in accepted.stdout  # the diff is shown first
    start(repo, state, "s2")
    (repo / "zipcode.py").write_text(project.FIXED)
    assert not stop(repo, state, "s2").blocked
    assert last(state).verdict == "verified"


def test_a_person_who_edits_the_tests_then_prompts_runs_nothing(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    stop(repo, state, "s1", last_assistant_message="What should I do?")
    # The person writes a new test between turns, then asks the agent to make it pass.
    extra = project.TESTS + '\n\ndef test_blank() -> None:\n    assert normalize("") == ""\n'
    (repo / TEST_FILE).write_text(extra)
    prompt(repo, state, "s1")
    (repo / "zipcode.py").write_text(project.FIXED)
    assert not stop(repo, state, "s1").blocked
    assert last(state).verdict == "verified"


def test_a_config_loosened_in_one_session_does_not_judge_the_next(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    config = repo / "donegate.toml"
    loose = config.read_text().replace('on_unverified = "block"', 'on_unverified = "record"')
    config.write_text(loose.replace('protect = ["tests/**"]', "protect = []"))
    stop(repo, state, "s1")
    start(repo, state, "s2")  # a new session id would pin the loosened file
    (repo / TEST_FILE).write_text(WEAKENED_TESTS)
    (repo / "zipcode.py").write_text(NOT_A_FIX)
    assert plain_pytest_passes(repo)
    run = stop(repo, state, "s2")
    assert run.blocked  # judged by the accepted file: block mode, tests protected
    assert last(state).verdict != "verified"
    assert "no person has accepted" in run.answer.get("systemMessage", "")


def test_a_test_only_turn_that_weakens_a_test_is_not_let_go_as_no_write(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    (repo / TEST_FILE).write_text(WEAKENED_TESTS)
    assert plain_pytest_passes(repo)  # the weakened test no longer sees the bug
    run = stop(repo, state, "s1")
    assert run.blocked
    assert last(state).reason != "no_workspace_write"


def test_deleting_the_protected_test_after_a_green_run_reopens_verification(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    (repo / "zipcode.py").write_text(project.FIXED)
    assert not stop(repo, state, "s1").blocked
    (repo / TEST_FILE).unlink()
    (repo / "zipcode.py").write_text(project.BUGGY)  # and the bug comes back
    run = stop(repo, state, "s1", stop_hook_active=False)
    assert run.blocked
    assert last(state).verdict != "verified"


def test_a_rename_that_moves_the_protected_test_out_is_a_protected_write(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    (repo / "attic").mkdir()
    (repo / TEST_FILE).rename(repo / "attic" / "test_zip.py")
    (repo / "zipcode.py").write_text(NOT_A_FIX)
    assert plain_pytest_passes(repo) is False  # the command names tests/: nothing collected
    run = stop(repo, state, "s1")
    assert run.blocked
    receipt = last(state)
    targets = {m["target"] for m in receipt.claim["mutations"]}
    assert {"attic/test_zip.py", TEST_FILE} <= targets


def test_an_agent_cannot_accept_its_own_writes(tmp_path: Path, state: Path) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    (repo / TEST_FILE).write_text(WEAKENED_TESTS)
    refused = donegate("accept", "--yes", cwd=repo, state=state, env={"CLAUDECODE": "1"})
    assert refused.returncode == 2
    assert "person's act" in refused.stderr
    # The agent's shell hides the variable and accepts anyway: its journal gives it away.
    sneaked = donegate("accept", "--yes", TEST_FILE, cwd=repo, state=state)
    shell(repo, state, "s1", f"env -u CLAUDECODE donegate accept --yes {TEST_FILE}")
    assert sneaked.returncode == 0
    (repo / "zipcode.py").write_text(NOT_A_FIX)
    run = stop(repo, state, "s1")
    assert run.blocked
    assert "counts for nothing" in run.answer["systemMessage"]


def test_a_hook_killed_mid_check_leaves_an_interrupted_receipt(tmp_path: Path, state: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from donegate.demo.project import payload

    repo = make_repo(tmp_path)
    (repo / "tests" / "test_slow.py").write_text(
        "import time\n\ndef test_slow() -> None:\n    time.sleep(20)\n"
    )
    project.git(repo, "add", "-A")
    project.git(repo, "commit", "-qm", "slow")
    start(repo, state, "s1")
    (repo / "zipcode.py").write_text(project.FIXED)
    env = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
    hook = subprocess.Popen(
        [sys.executable, "-m", "donegate", "hook", "claude-code"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    assert hook.stdin is not None
    hook.stdin.write(json.dumps(payload("Stop", "s1", repo)).encode())
    hook.stdin.close()
    while not [r for r in receipts(state) if r.reason == "pending"]:
        time.sleep(0.1)  # the receipt exists before the checks run
    os.killpg(hook.pid, signal.SIGKILL)  # the host's timeout, without mercy
    hook.wait()
    assert receipts(state)[-1].reason == "pending"
    (repo / "tests" / "test_slow.py").unlink()
    run = stop(repo, state, "s1", stop_hook_active=True)
    assert "never finished" in run.answer.get("systemMessage", "")
    first = receipts(state)[0]
    assert (first.reason, first.verdict) == ("interrupted", "unverified")


def test_a_corrupt_ledger_is_moved_aside_and_the_stop_still_recorded(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    (state / "receipts.sqlite3").write_bytes(b"this is not a database" * 100)
    (repo / "zipcode.py").write_text(project.FIXED)
    run = stop(repo, state, "s1")
    assert "moved to" in run.answer.get("systemMessage", "")
    assert last(state).verdict == "verified"
    assert list((state / "quarantine").iterdir())


def test_a_payload_cwd_in_a_nested_repository_is_judged_against_the_pinned_root(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    nested = repo / "decoy"
    nested.mkdir()
    project.git(nested, "init", "-q")
    (nested / "README.md").write_text("nothing to see\n")
    (repo / "zipcode.py").write_text(NOT_A_FIX)
    (repo / TEST_FILE).write_text(WEAKENED_TESTS)
    run = stop(repo, state, "s1", cwd=nested)
    assert run.blocked
    assert "judged against" in run.answer.get("systemMessage", "")
    assert last(state).workspace == str(repo.resolve())


def test_a_subagents_stop_has_its_own_budget_and_the_parent_is_judged_on_everything(
    tmp_path: Path, state: Path
) -> None:
    from donegate.gate.store import GateStore

    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    (repo / "zipcode.py").write_text(NOT_A_FIX)
    sub = stop(repo, state, "s1", hook_event_name="SubagentStop", agent_id="a1")
    assert sub.blocked
    assert last(state).session_id == "s1#agent-a1"
    store = GateStore(state / "gate.sqlite3")
    assert store.counts("s1").strict == 0  # the parent's caps are untouched
    assert store.counts("s1#agent-a1").strict == 1
    store.close()
    parent = stop(repo, state, "s1")
    assert parent.blocked  # the subagent's write is the session's too
    assert last(state, "s1").claim["mutations"][0]["target"] == "zipcode.py"


def test_a_corrupt_gate_state_is_moved_aside_and_the_stop_still_decided(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    (state / "gate.sqlite3").write_bytes(b"garbage" * 1000)
    (repo / "zipcode.py").write_text(NOT_A_FIX)
    run = stop(repo, state, "s1")
    assert run.blocked  # decided, not let go by a failure
    assert "moved to" in run.answer.get("systemMessage", "")


def test_a_stops_receipt_and_collected_evidence_are_signed_and_verify_elsewhere(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    (repo / "zipcode.py").write_text(project.FIXED)
    assert not stop(repo, state, "s1").blocked
    receipt = last(state)
    assert receipt.decision_doc["dsse"]["signatures"]
    assert all("dsse" in item for item in receipt.claim["evidence"])
    public = donegate("key", "show", cwd=repo, state=state)
    assert public.returncode == 0, public.stderr
    (tmp_path / "ci.pub").write_text(public.stdout)
    (tmp_path / "claim.json").write_text(json.dumps(receipt.claim))
    args = ("verify", str(tmp_path / "claim.json"), "--trust-key", str(tmp_path / "ci.pub"))
    assert donegate(*args, cwd=repo, state=state).returncode == 0
    forged = json.loads(json.dumps(receipt.claim))
    forged["evidence"][0]["observed_value"]["failed"] = 0
    forged["evidence"][0]["observed_value"]["passed"] = 99
    (tmp_path / "claim.json").write_text(json.dumps(forged))
    assert donegate(*args, cwd=repo, state=state).returncode == 3


def test_the_hosts_own_local_settings_write_does_not_void_an_honest_fix(
    tmp_path: Path, state: Path
) -> None:
    repo = make_repo(tmp_path)
    start(repo, state, "s1")
    # Claude Code records a person's "always allow" here during the session.
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text('{"permissions": {"allow": ["Bash"]}}')
    (repo / "zipcode.py").write_text(project.FIXED)
    assert not stop(repo, state, "s1").blocked
    assert last(state).verdict == "verified"
