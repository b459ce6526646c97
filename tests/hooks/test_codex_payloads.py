"""donegate's Codex adapter on the payloads Codex CLI 0.171.0 itself sent its hooks, captured in
the real-program suite (``tests/hosts/test_codex.py``) and kept in ``fixtures/codex/0.171`` with
the machine's paths replaced by ``$REPO`` and ``$CODEX_HOME``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from donegate.hooks import codex
from donegate.session.event import HookAnswer

FIXTURES = Path(__file__).parent / "fixtures" / "codex" / "0.171"
REPO = Path("/home/dev/repo")


def payload(name: str) -> Any:
    text = (FIXTURES / name).read_text()
    return json.loads(text.replace("$REPO", str(REPO)).replace("$CODEX_HOME", "/home/dev/.codex"))


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("SessionStart.json", "baseline"),
        ("UserPromptSubmit.json", "baseline"),
        ("PostToolUse-apply_patch.json", "tool_use"),
        ("PostToolUse-Bash.json", "tool_use"),
        ("PostToolUse-Bash-subagent.json", "tool_use"),
        ("PreToolUse-Bash-apply_patch-heredoc.json", "ignored"),  # not installed, not read
        ("Stop.json", "stop"),
        ("Stop-continuing.json", "stop"),
        ("SubagentStop.json", "stop"),
        ("SubagentStop-continuing.json", "stop"),
    ],
)
def test_every_real_payload_is_read_as_its_kind(name: str, kind: str) -> None:
    event = codex.parse(payload(name))
    assert event.kind == kind
    assert event.cwd == REPO
    assert event.host == "codex"


def test_a_patch_names_the_file_it_updates() -> None:
    event = codex.parse(payload("PostToolUse-apply_patch.json"))
    assert event.tool_use is not None
    assert event.tool_use.tool == "apply_patch"
    assert event.tool_use.paths == ("tests/test_zip.py",)


def test_a_shell_call_is_bash_with_its_command() -> None:
    event = codex.parse(payload("PostToolUse-Bash.json"))
    assert event.tool_use is not None
    assert event.tool_use.tool == "Bash"
    assert event.tool_use.command is not None
    assert "donegate accept --yes tests/test_zip.py" in event.tool_use.command


def test_the_stops_say_whether_they_continue_and_whose_they_are() -> None:
    first, again = codex.parse(payload("Stop.json")), codex.parse(payload("Stop-continuing.json"))
    assert (first.continuing, again.continuing) == (False, True)
    assert first.subagent is None
    assert first.last_message == "Done: normalize handles ZIP+4 codes now."
    sub = codex.parse(payload("SubagentStop.json"))
    assert sub.subagent == payload("SubagentStop.json")["agent_id"]
    assert sub.session_id == payload("SubagentStop.json")["session_id"]  # the parent's session
    assert codex.parse(payload("SubagentStop-continuing.json")).continuing


def test_a_subagent_s_task_is_no_turn_of_the_person_s() -> None:
    """Codex fires UserPromptSubmit for the task a spawned subagent starts with (it names the
    ``agent_id``): the main agent wrote that prompt, so it is neither the person's task nor a
    person's turn."""
    data = payload("UserPromptSubmit-subagent.json")
    assert data["agent_id"]
    assert codex.parse(data).kind == "ignored"
    assert codex.parse(payload("UserPromptSubmit.json")).kind == "baseline"


def test_a_block_answers_with_the_stop_schema_s_keys_only() -> None:
    for name in ("Stop.json", "SubagentStop.json"):
        event = codex.parse(payload(name))
        out = codex.render(HookAnswer.block("fix test_update", notice="sent back"), event)
        body = json.loads(out.stdout)
        assert set(body) <= codex.STOP_OUTPUT_KEYS
        assert (body["decision"], body["reason"], out.exit_code) == ("block", "fix test_update", 0)
