"""donegate's Claude Code adapter on the payloads Claude Code 2.1.197 itself sent its hooks,
captured in the real-program suite (``tests/hosts/test_claude_code.py``) and kept in
``fixtures/claude-code/2.1.197`` with the machine's paths and ids replaced by placeholders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from donegate.demo import project
from donegate.hooks import claude_code
from donegate.ledger import FILE_NAME, Ledger
from donegate.session.accept import AGENT_SHELL_VARIABLES
from donegate.session.event import HookAnswer, HookEvent
from donegate.session.layout import subagent_session
from tests.hooks.test_hosts import hook

FIXTURES = Path(__file__).parent / "fixtures" / "claude-code" / "2.1.197"
REPO = Path("/home/dev/repo")
SESSION = "5b0c9e1e-2f0a-4d8e-9d0b-7c1f3a2e4b6d"
AGENT = "a4f1c0de9b8e7d6c5"
PLACES = {
    "$REPO": str(REPO),
    "$HOME": "/home/dev",
    "$PROJECT": "-home-dev-repo",
    "$CLAUDE_TMP": "/tmp/claude-1000",
    "$SESSION_ID": SESSION,
    "$AGENT_ID": AGENT,
    "$PROMPT_ID": "0d6e2a4c-1b3f-4e5a-8c7d-9f0e1a2b3c4d",
}
KINDS = {
    "SessionStart.json": "baseline",
    "UserPromptSubmit.json": "baseline",
    "UserPromptSubmit-task-notification.json": "ignored",  # the host's words, not a person's
    "PostToolUse-Write.json": "tool_use",
    "PostToolUse-Write-subagent.json": "tool_use",
    "Stop.json": "stop",
    "Stop-continuing.json": "stop",
    "Stop-background-subagent.json": "stop",
    "Stop-after-task-notification.json": "stop",
    "SubagentStop.json": "stop",
    "SubagentStop-continuing.json": "stop",
    "SubagentStop-background.json": "stop",
    "SubagentStop-background-continuing.json": "stop",
}


def text(name: str, repo: Path = REPO) -> str:
    found = (FIXTURES / name).read_text()
    for place, value in {**PLACES, "$REPO": str(repo)}.items():
        found = found.replace(place, value)
    return found


def payload(name: str, repo: Path = REPO) -> Any:
    return json.loads(text(name, repo))


def parse(name: str) -> HookEvent:
    return claude_code.parse(payload(name))


@pytest.fixture(autouse=True)
def _not_under_copilot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COPILOT_PROJECT_DIR", raising=False)


def test_every_captured_payload_has_an_expected_kind() -> None:
    assert {f.name for f in FIXTURES.glob("*.json")} == set(KINDS)


@pytest.mark.parametrize(("name", "kind"), sorted(KINDS.items()))
def test_every_real_payload_is_read_as_its_kind(name: str, kind: str) -> None:
    assert "$" not in text(name)  # every placeholder is one the tests fill in
    event = parse(name)
    assert (event.kind, event.host, event.session_id, event.cwd) == (
        kind,
        "claude-code",
        SESSION,
        REPO,
    )


def test_a_subagent_s_stop_is_its_own_and_its_writes_are_the_session_s() -> None:
    for name in ("SubagentStop.json", "SubagentStop-background.json"):
        assert parse(name).subagent == AGENT
    for name in ("Stop.json", "Stop-background-subagent.json"):
        assert parse(name).subagent is None
    # A subagent's tool call is its session's (the session id is the parent's) and its own.
    called = parse("PostToolUse-Write-subagent.json")
    assert called.subagent == AGENT
    assert called.session_id == parse("Stop.json").session_id
    write = called.tool_use
    assert write is not None
    assert (write.tool, write.paths) == ("Write", (str(REPO / "zipcode.py"),))


def test_the_stops_say_whether_they_continue() -> None:
    assert not parse("Stop.json").continuing
    assert parse("Stop-continuing.json").continuing
    assert not parse("SubagentStop.json").continuing
    assert parse("SubagentStop-continuing.json").continuing
    assert parse("SubagentStop-background-continuing.json").continuing
    assert parse("Stop.json").last_message == "Done: the subagent fixed normalize."


def test_a_running_background_subagent_holds_the_main_stop_but_not_its_own() -> None:
    """2.1.197 lists a background subagent as ``{"id", "type": "subagent", "status": "running",
    ...}`` at the main Stop, and lists it, as running, at its own SubagentStop too."""
    assert parse("Stop-background-subagent.json").background_tasks == 1
    assert payload("SubagentStop-background.json")["background_tasks"][0]["id"] == AGENT
    assert parse("SubagentStop-background.json").background_tasks == 0
    assert parse("SubagentStop-background-continuing.json").background_tasks == 0
    assert parse("Stop-after-task-notification.json").background_tasks == 0


def test_a_block_of_a_subagent_s_stop_is_json_with_exit_0() -> None:
    out = claude_code.render(HookAnswer.block("fix test_update"), parse("SubagentStop.json"))
    assert (json.loads(out.stdout), out.exit_code) == (
        {"decision": "block", "reason": "fix test_update"},
        0,
    )


def test_the_background_session_replayed_never_ends_verified(tmp_path: Path) -> None:
    """The real background session's payloads, in the order Claude Code sent them, through the
    real ``donegate hook`` on the demo project; the subagent's wrong fix is written where its
    PostToolUse came."""
    repo, state = project.create(tmp_path / "repo", max_strict_vetoes=1), tmp_path / "state"

    def send(name: str) -> dict[str, Any]:
        done = hook("claude-code", payload(name, repo), state)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else {}

    send("SessionStart.json")
    send("UserPromptSubmit.json")
    assert (
        "background tasks are still running"
        in send("Stop-background-subagent.json")["systemMessage"]
    )
    (repo / "zipcode.py").write_text(
        payload("PostToolUse-Write-subagent.json")["tool_input"]["content"]
    )
    send("PostToolUse-Write-subagent.json")
    assert send("SubagentStop-background.json")["decision"] == "block"
    assert send("SubagentStop-background-continuing.json").get("decision") is None  # budget spent
    assert send("UserPromptSubmit-task-notification.json") == {}
    assert send("Stop-after-task-notification.json")["decision"] == "block"
    assert (state / FILE_NAME).exists()
    with Ledger(state) as ledger:
        found = list(reversed(ledger.recent(50)))
    mine = subagent_session(SESSION, AGENT)
    assert [(r.session_id, r.verdict) for r in found] == [
        (SESSION, "none"),
        (mine, "refuted"),
        (mine, "refuted"),
        (SESSION, "refuted"),
    ]


def accepted_by_a_subagent(tmp_path: Path) -> tuple[Path, Callable[[str], dict[str, Any]]]:
    """A subagent weakens the protected test and gets ``donegate accept`` run past the host's
    guards (here the test runs it, as an agent's shell that shed the host's variables would);
    Claude Code reports the subagent's shell call with a PostToolUse naming its ``agent_id``.
    The state folder, and a function that sends a fixture (its answer)."""
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"

    def send(name: str, **change: Any) -> dict[str, Any]:
        done = hook("claude-code", {**payload(name, repo), **change}, state)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else {}

    send("SessionStart.json")
    send("UserPromptSubmit.json")
    tests = repo / "tests" / "test_zip.py"
    weakened = 'normalize(" 94107-1234 ").startswith("94107")'
    tests.write_text(project.TESTS.replace('normalize(" 94107-1234 ") == "94107"', weakened))
    assert weakened in tests.read_text()
    shed = {k: v for k, v in os.environ.items() if k not in AGENT_SHELL_VARIABLES}
    argv = [sys.executable, "-m", "donegate", "accept", "--yes", "tests/test_zip.py"]
    env = {**shed, "DONEGATE_STATE_DIR": str(state)}
    subprocess.run(argv, cwd=repo, env=env, check=True, capture_output=True)
    command = "env -u CLAUDECODE donegate accept --yes tests/test_zip.py"
    shell = {"tool_name": "Bash", "tool_input": {"command": command}, "tool_response": {}}
    send("PostToolUse-Write-subagent.json", **shell)
    return state, send


def test_a_subagent_running_donegate_accept_never_ends_the_session_verified(
    tmp_path: Path,
) -> None:
    state, send = accepted_by_a_subagent(tmp_path)
    send("SubagentStop.json")
    main = send("Stop.json")
    assert main["decision"] == "block"
    assert "accepting is a person's act, so it counts for nothing" in main["systemMessage"]
    with Ledger(state) as ledger:
        assert all(r.verdict != "verified" for r in ledger.recent(50))


def test_a_subagent_s_own_stop_sees_it_ran_donegate_accept(tmp_path: Path) -> None:
    """A subagent's tool calls are journalled in its own session too: its own SubagentStop
    withdraws the acceptance it ran, not only its parent's stop."""
    _, send = accepted_by_a_subagent(tmp_path)
    own = send("SubagentStop.json")
    assert "counts for nothing" in own.get("systemMessage", "")
