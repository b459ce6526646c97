"""Every agent's write is the agent's, and one stop is gated once: subagents in the foreground
and the background, the host's own prompts, and the hosts that read another host's settings.

Each test plays the hosts' payloads (shaped as the real programs send them: see the fixtures)
through the real ``donegate hook`` process on a real project whose tests fail.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from donegate.demo import project
from donegate.ledger import FILE_NAME, Ledger
from tests.hooks.test_hosts import fixture, hook

WRONG = "def normalize(z):\n    return z\n"  # a wrong fix: test_update still fails


def at(name: str, repo: Path, **more: Any) -> dict[str, Any]:
    """A fixture, its working directory the test's repository."""
    data = fixture(name)
    return {**data, "cwd": str(repo), **more}


def receipts(state: Path) -> list[Any]:
    if not (state / FILE_NAME).exists():
        return []
    with Ledger(state) as ledger:
        return list(reversed(ledger.recent(50)))


def answer(done: Any) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout) if done.stdout.strip() else {}
    return out


def test_a_background_subagent_s_wrong_fix_cannot_end_the_session_unnoticed(
    tmp_path: Path,
) -> None:
    """The Agent tool's default: the main stop is let go while the subagent runs; the subagent's
    own stop lists itself as running; its end comes back as a task notification. Each of them
    let the wrong fix through before: the notification was taken for the person's turn."""
    repo = project.create(tmp_path / "repo")
    state = tmp_path / "state"
    answer(hook("claude-code", at("claude-code-2.1/SessionStart.json", repo), state))
    (repo / "zipcode.py").write_text(WRONG)  # the subagent's edit, in the background
    main_stop = at("claude-code-2.1/Stop-background-tasks.json", repo)
    main_stop["background_tasks"] = [{"id": "agent_9", "type": "local_agent", "status": "running"}]
    assert answer(hook("claude-code", main_stop, state)).get("decision") is None  # let go
    own = answer(
        hook("claude-code", at("claude-code-2.1/SubagentStop-background.json", repo), state)
    )
    assert own["decision"] == "block"
    assert "test_update" in own["reason"]
    told = at("claude-code-2.1/UserPromptSubmit-task-notification.json", repo)
    answer(hook("claude-code", told, state))
    final = answer(hook("claude-code", at("claude-code-2.1/Stop.json", repo), state))
    assert final["decision"] == "block"
    assert "test_update" in final["reason"]


def test_a_person_s_prompt_still_makes_their_edit_theirs(tmp_path: Path) -> None:
    """The control: a real prompt between turns takes the tree as the person's, as before."""
    repo = project.create(tmp_path / "repo")
    state = tmp_path / "state"
    answer(hook("claude-code", at("claude-code-2.1/SessionStart.json", repo), state))
    (repo / "zipcode.py").write_text(WRONG)
    answer(hook("claude-code", at("claude-code-2.1/UserPromptSubmit.json", repo), state))
    final = answer(hook("claude-code", at("claude-code-2.1/Stop.json", repo), state))
    assert final.get("decision") is None


def test_copilot_gates_a_subagent_s_stop_once(tmp_path: Path) -> None:
    """Copilot CLI ends a subagent with agentStop (its own session) and subagentStop (the
    parent's): one stop, one test run, one receipt, one budget."""
    repo = project.create(tmp_path / "repo")
    state = tmp_path / "state"
    parent = at("copilot/subagentStop.json", repo)
    start = at("copilot/sessionStart.json", repo, sessionId=parent["sessionId"])
    answer(hook("copilot", start, state, DONEGATE_HOOK_EVENT="sessionStart"))
    (repo / "zipcode.py").write_text(WRONG)
    own = at("copilot/agentStop-subagent.json", repo)
    assert own["parentAgentId"] == parent["sessionId"]  # as Copilot CLI 1.0.102 sent them
    assert answer(hook("copilot", own, state, DONEGATE_HOOK_EVENT="agentStop")) == {}
    assert receipts(state) == []
    sent_back = answer(hook("copilot", parent, state, DONEGATE_HOOK_EVENT="subagentStop"))
    assert sent_back["decision"] == "block"
    assert [(r.host, r.decision) for r in receipts(state)] == [("copilot", "veto")]


def test_copilot_reading_claude_settings_is_answered_as_copilot(tmp_path: Path) -> None:
    """Copilot CLI runs .claude/settings.json's hooks with a VS Code-like Stop (stop_reason):
    its reference reads a top-level decision, which VS Code's wrapped answer is not."""
    repo = project.create(tmp_path / "repo")
    state = tmp_path / "state"
    base = at("copilot/claude-settings-Stop.json", repo)
    answer(hook("claude-code", {**base, "hook_event_name": "SessionStart"}, state))
    (repo / "zipcode.py").write_text(WRONG)
    out = answer(hook("claude-code", base, state, COPILOT_PROJECT_DIR=str(repo)))
    assert out["decision"] == "block"
    assert "hookSpecificOutput" not in out
    assert receipts(state)[-1].host == "copilot"


def test_vscode_s_camel_case_stop_is_gated(tmp_path: Path) -> None:
    """VS Code's Agent hooks page spells the common fields sessionId and hookEventName: such a
    stop had no session_id and went unchecked."""
    repo = project.create(tmp_path / "repo")
    state = tmp_path / "state"
    stop = at("vscode-copilot-chat-0.31/Stop-camelCase.json", repo)
    answer(hook("claude-code", {**stop, "hookEventName": "SessionStart"}, state))
    (repo / "zipcode.py").write_text(WRONG)
    out = answer(hook("claude-code", stop, state))
    assert out["hookSpecificOutput"]["decision"] == "block"
    assert receipts(state)[-1].host == "vscode"


def test_vscode_s_subagent_stop_is_answered_at_the_top_level(tmp_path: Path) -> None:
    """VS Code's reference gives SubagentStop's answer as a top-level decision and reason."""
    repo = project.create(tmp_path / "repo")
    state = tmp_path / "state"
    sub = at("vscode-copilot-chat-0.31/SubagentStop.json", repo)
    answer(hook("claude-code", {**sub, "hook_event_name": "SessionStart"}, state))
    (repo / "zipcode.py").write_text(WRONG)
    out = answer(hook("claude-code", sub, state))
    assert out["decision"] == "block"
    assert "hookSpecificOutput" not in out
