"""Host adapters against payloads shaped as each host version sends them (fixtures/<host-ver>)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from donegate.errors import InvalidInput
from donegate.hooks import adapter, claude_code, codex, cursor
from donegate.session.event import HookAnswer

FIXTURES = Path(__file__).parent / "fixtures"


def payload(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def test_claude_code_events_map_to_kinds() -> None:
    kinds = {
        f.name: claude_code.parse(payload(f"claude-code-2.1/{f.name}")).kind
        for f in (FIXTURES / "claude-code-2.1").iterdir()
    }
    assert kinds["SessionStart.json"] == "baseline"
    assert kinds["UserPromptSubmit.json"] == "baseline"
    assert kinds["PostToolUse-Write.json"] == "tool_use"
    assert kinds["PostToolUseFailure-Bash.json"] == "tool_use"
    assert kinds["Stop.json"] == "stop"
    assert kinds["SubagentStop.json"] == "stop"


def test_claude_code_write_tools_name_their_files() -> None:
    for name, path in [
        ("PostToolUse-Write.json", "/home/dev/repo/src/billing/zip.py"),
        ("PostToolUse-Edit.json", "/home/dev/repo/src/billing/zip.py"),
        ("PostToolUse-NotebookEdit.json", "/home/dev/repo/analysis.ipynb"),
    ]:
        event = claude_code.parse(payload(f"claude-code-2.1/{name}"))
        assert event.tool_use is not None
        assert event.tool_use.paths == (path,)


def test_claude_code_bash_is_journalled_as_a_command() -> None:
    event = claude_code.parse(payload("claude-code-2.1/PostToolUseFailure-Bash.json"))
    assert event.tool_use is not None
    assert event.tool_use.command == "pytest -q"
    assert event.tool_use.failed


def test_stop_fields() -> None:
    event = claude_code.parse(payload("claude-code-2.1/Stop.json"))
    assert not event.continuing
    assert event.last_message == "Fixed the zip parser; all tests pass."
    assert event.cwd == Path("/home/dev/repo")
    assert claude_code.parse(payload("claude-code-2.1/Stop-continuing.json")).continuing
    assert (
        claude_code.parse(payload("claude-code-2.1/Stop-background-tasks.json")).background_tasks
        == 1
    )
    assert claude_code.parse(payload("claude-code-2.1/SubagentStop.json")).subagent == "agent_7"


def test_older_claude_code_stop_without_event_name_or_cwd(tmp_path: Path) -> None:
    event = claude_code.parse(payload("claude-code-1.0/Stop.json"), fallback_cwd=tmp_path)
    assert event.kind == "stop"
    assert event.cwd == tmp_path


@pytest.mark.parametrize("bad", [[], "x", {"hook_event_name": "Stop"}, {"session_id": 5}])
def test_unusable_payloads_are_invalid_input(bad: Any) -> None:
    with pytest.raises(InvalidInput):
        claude_code.parse(bad)


def test_claude_code_block_is_json_with_exit_0() -> None:
    event = claude_code.parse(payload("claude-code-2.1/Stop.json"))
    out = claude_code.render(HookAnswer.block("tests failed", notice="sent back"), event)
    assert out.exit_code == 0
    assert json.loads(out.stdout) == {
        "decision": "block",
        "reason": "tests failed",
        "systemMessage": "sent back",
    }


def test_allow_is_silent_or_a_notice() -> None:
    event = claude_code.parse(payload("claude-code-2.1/Stop.json"))
    assert claude_code.render(HookAnswer.allow(), event).stdout == ""
    notice = claude_code.render(HookAnswer.allow("not verified"), event)
    assert json.loads(notice.stdout) == {"systemMessage": "not verified"}


def test_a_block_is_never_sent_for_events_that_are_not_stops() -> None:
    event = claude_code.parse(payload("claude-code-2.1/PostToolUse-Write.json"))
    assert claude_code.render(HookAnswer.block("x"), event).stdout == ""


def test_a_block_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="reason"):
        HookAnswer.block("  ")


def test_codex_apply_patch_names_every_file() -> None:
    event = codex.parse(payload("codex-0.144/PostToolUse-apply_patch.json"))
    assert event.tool_use is not None
    assert event.tool_use.paths == ("src/billing/zip.py", "tests/test_zip_plus4.py")


def test_codex_stop_output_has_only_schema_keys() -> None:
    event = codex.parse(payload("codex-0.144/Stop.json"))
    out = json.loads(codex.render(HookAnswer.block("fix the test", notice="blocked"), event).stdout)
    assert set(out) <= codex.STOP_OUTPUT_KEYS
    assert out["decision"] == "block"
    assert out["reason"] == "fix the test"


def test_codex_continuing_and_null_message() -> None:
    event = codex.parse(payload("codex-0.144/Stop-continuing.json"))
    assert event.continuing
    assert event.last_message is None


def test_registry() -> None:
    assert adapter("claude-code").NAME == claude_code.NAME == "claude-code"
    assert adapter("codex").NAME == codex.NAME == "codex"
    assert adapter("gemini-cli").NAME == "gemini-cli"
    with pytest.raises(KeyError, match="known: claude-code, codex, copilot, cursor, gemini-cli"):
        adapter("emacs")


def test_cursor_events() -> None:
    prompt = cursor.parse(payload("cursor-1.7/beforeSubmitPrompt.json"))
    assert (prompt.kind, prompt.session_id) == ("baseline", "668320d2-2fd8-4888-b33c-2a466fec86e7")
    assert prompt.cwd == Path("/home/dev/repo")
    edit = cursor.parse(payload("cursor-1.7/afterFileEdit.json"))
    assert edit.tool_use is not None
    assert edit.tool_use.paths == ("/home/dev/repo/zipcode.py",)
    stop = cursor.parse(payload("cursor-1.7/stop.json"))
    assert (stop.kind, stop.continuing) == ("stop", False)
    assert cursor.parse(payload("cursor-1.7/stop-followup.json")).continuing
    assert cursor.parse(payload("cursor-1.7/stop-aborted.json")).kind == "ignored"


def test_cursor_answers_are_always_json() -> None:
    stop = cursor.parse(payload("cursor-1.7/stop.json"))
    blocked = cursor.render(HookAnswer.block("fix the tests", notice="n"), stop)
    assert json.loads(blocked.stdout) == {"followup_message": "fix the tests"}
    assert cursor.render(HookAnswer.allow("not verified"), stop).stdout == "{}"
    with pytest.raises(InvalidInput, match="conversation_id"):
        cursor.parse({"hook_event_name": "stop"})


def test_vscode_reading_claude_settings_is_told_apart_and_answered_in_its_terms() -> None:
    # Fixtures from microsoft/vscode-copilot-chat's toolCallingLoop/chatHookService: no
    # permission_mode, no last_assistant_message, a timestamp.
    event = claude_code.parse(payload("vscode-copilot-chat-0.31/Stop.json"))
    assert (event.host, event.kind) == ("vscode", "stop")
    out = json.loads(claude_code.render(HookAnswer.block("run the tests"), event).stdout)
    assert out["hookSpecificOutput"] == {
        "hookEventName": "Stop",
        "decision": "block",
        "reason": "run the tests",
    }
    assert "decision" not in out  # top-level keys are ignored by VS Code for Stop
    sub = claude_code.parse(payload("vscode-copilot-chat-0.31/SubagentStop.json"))
    assert sub.subagent == "runSubagent-3"
    # Claude Code's own Stop stays Claude Code's.
    claude = claude_code.parse(payload("claude-code-2.1/Stop.json"))
    assert claude.host == "claude-code"
    assert json.loads(claude_code.render(HookAnswer.block("x"), claude).stdout)["decision"] == (
        "block"
    )
