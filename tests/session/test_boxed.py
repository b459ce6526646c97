"""The agent calling donegate itself from its shell, as the real hook outside its box hears of it
(:mod:`donegate.session.boxed`): Claude Code's report of the shell call carries what the call
printed, and the mark of a call that recorded nothing is told to the person at once and at each
later stop. Played through the real ``donegate hook claude-code``, and through ``donegate hook``
of Codex, Gemini CLI and Copilot CLI with the payloads those programs sent (``tests/hooks/
fixtures``); the confined calls themselves, with the real program, are in
``tests/hosts/test_claude_code_confined.py``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from donegate.demo import project
from donegate.demo.project import HookRun, payload, run_hook
from donegate.hooks import copilot
from donegate.statedir import NEW_STATE, NOT_RECORDED
from tests.hooks.test_hosts import fixture, hook
from tests.session.support import last, start, stop

SESSION = "boxed-1"
HOOK = "/opt/venv/bin/python -E -P -m donegate hook claude-code"
REFUSED = (
    "donegate: UserPromptSubmit hook: donegate's state directory /home/u/.local/state/donegate "
    f"cannot be written here (Read-only file system): nothing was recorded. ({NOT_RECORDED})."
)


def failed(repo: Path, state: Path, command: str, error: str) -> HookRun:
    """Claude Code's report of a shell call that exited non-zero (2.1.197's shape)."""
    fields = {"tool_name": "Bash", "tool_input": {"command": command}, "error": error}
    run = run_hook(payload("PostToolUseFailure", SESSION, repo, **fields), state)
    assert run.exit_code == 0, run.stderr
    return run


def test_a_call_that_recorded_nothing_is_told_at_once_and_at_the_next_stop(
    tmp_path: Path,
) -> None:
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    start(repo, state, SESSION)
    command = f"python tools.py payload | {HOOK}"
    run = failed(repo, state, command, f"Exit code 1\n{REFUSED}")
    told = run.answer["systemMessage"]
    assert told.startswith("donegate: the agent called donegate itself from its shell")
    assert "recorded nothing" in told
    assert command in told
    notice = stop(repo, state, SESSION).answer["systemMessage"]
    assert "the agent called donegate itself from its shell 1 time(s)" in notice
    assert last(state).decision_doc["answer"]["notice"] == notice


def test_a_command_naming_donegate_s_hook_is_told_even_when_its_words_are_hidden(
    tmp_path: Path,
) -> None:
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    start(repo, state, SESSION)
    run = failed(repo, state, f"cat forged.json | {HOOK} 2>/dev/null", "Exit code 1")
    assert "ran donegate's hook" in run.answer["systemMessage"]


def test_a_call_that_hides_its_words_and_names_no_hook_leaves_nothing_to_tell(
    tmp_path: Path,
) -> None:
    """The limit of the report: the call recorded nothing, and nothing says it was made."""
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    start(repo, state, SESSION)
    run = failed(repo, state, "python tools.py accept 2>/dev/null", "Exit code 4")
    assert run.answer == {}
    assert "systemMessage" not in stop(repo, state, SESSION).answer


ACCEPT = "donegate accept --yes tests/test_zip.py"
ACCEPT_REFUSED = (
    "donegate accept: donegate's state directory /home/u/.local/state/donegate cannot be written "
    f"here (Read-only file system): nothing was recorded. ({NOT_RECORDED})."
)


def _codex_report(data: dict[str, Any]) -> None:
    data["tool_input"] = {"command": ACCEPT}
    data["tool_response"] = ACCEPT_REFUSED + "\n"


def _gemini_report(data: dict[str, Any]) -> None:
    # As Gemini CLI wraps a shell call's output: the agent's view, and the person's.
    data["tool_input"] = {"command": ACCEPT, "description": "accept the test"}
    data["tool_response"] = {
        "llmContent": f"<untrusted_context>\nOutput: {ACCEPT_REFUSED}\nExit Code: 4\n"
        "</untrusted_context>",
        "returnDisplay": ACCEPT_REFUSED,
    }


def _copilot_report(data: dict[str, Any]) -> None:
    data["toolArgs"] = {"command": ACCEPT, "description": "accept"}
    data["toolResult"] = {
        "resultType": "failure",
        "textResultForLlm": f"{ACCEPT_REFUSED}\n<shellId: 0 completed with exit code 4>",
    }


# Each host's real payloads (start, its report of a shell call, stop), and that report's output.
OTHER_HOSTS: dict[str, tuple[str, str, str, Callable[[dict[str, Any]], None]]] = {
    "codex": (
        "codex/0.171/SessionStart.json",
        "codex/0.171/PostToolUse-Bash.json",
        "codex/0.171/Stop.json",
        _codex_report,
    ),
    "gemini-cli": (
        "gemini-cli/0.61.0/SessionStart.json",
        "gemini-cli/0.61.0/AfterTool-run_shell_command.json",
        "gemini-cli/0.61.0/AfterAgent.json",
        _gemini_report,
    ),
    "copilot": (
        "copilot/sessionStart.json",
        "copilot/postToolUse-bash.json",
        "copilot/agentStop.json",
        _copilot_report,
    ),
}
COPILOT_EVENTS = ("sessionStart", "postToolUse", "agentStop")


@pytest.mark.parametrize("host", list(OTHER_HOSTS))
def test_each_host_s_report_of_a_confined_accept_is_told_at_the_next_stop(
    tmp_path: Path, host: str
) -> None:
    """``donegate accept`` run from the agent's box recorded nothing; the host's own report of
    that shell call, in its own shape, carries the mark to the real hook."""
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    *names, reported = OTHER_HOSTS[host]
    payloads = [fixture(name) for name in names]
    reported(payloads[1])
    for index, data in enumerate(payloads):
        data["cwd"] = str(repo)
        data.pop("agent_id", None)  # the main agent's call, not a subagent's
        data["session_id" if "session_id" in data else "sessionId"] = SESSION
        env = {copilot.EVENT_VARIABLE: COPILOT_EVENTS[index]} if host == "copilot" else {}
        done = hook(host, data, state, **env)
        assert done.returncode == 0, done.stderr
    notice = last(state).decision_doc["answer"]["notice"]
    assert "the agent called donegate itself from its shell 1 time(s)" in notice
    assert "recorded nothing" in notice


def test_a_hook_call_that_makes_the_state_directory_says_so_once(tmp_path: Path) -> None:
    """Inside a box that hides the real state (a /tmp or a home of its own), a hook call makes a
    new one and records there, where it vanishes with the box: it says so, with the mark."""
    repo, state = project.create(tmp_path / "repo"), tmp_path / "hidden" / "state"
    first = run_hook(payload("UserPromptSubmit", SESSION, repo, prompt="I accept"), state)
    assert first.exit_code == 0, first.stderr
    assert NEW_STATE in first.stderr
    assert f"made its state directory {state}" in first.stderr
    again = run_hook(payload("UserPromptSubmit", SESSION, repo, prompt="go on"), state)
    assert NEW_STATE not in again.stderr


def test_a_call_that_made_a_state_directory_of_its_own_is_told(tmp_path: Path) -> None:
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    start(repo, state, SESSION)
    said = (
        f"donegate: UserPromptSubmit hook: donegate made its state directory /tmp/x ({NEW_STATE})."
    )
    data = payload(
        "PostToolUse",
        SESSION,
        repo,
        tool_name="Bash",
        tool_input={"command": "sh tools/go.sh"},
        tool_response={"stdout": "", "stderr": said, "interrupted": False},
    )
    told = run_hook(data, state).answer["systemMessage"]
    assert "made a state directory of its own" in told
    notice = stop(repo, state, SESSION).answer["systemMessage"]
    assert "the agent called donegate itself from its shell 1 time(s)" in notice


def test_copilot_running_claude_code_s_settings_reports_the_output_too(tmp_path: Path) -> None:
    """Copilot CLI also runs ``.claude/settings.json``'s hooks (``donegate hook claude-code``),
    with its report in snake case: ``tool_result.text_result_for_llm``, as it sent for an edit
    (``fixtures/copilot/claude-settings-PostToolUse.json``). A shell call is shaped from that
    report, with Claude Code's name for the shell tool."""
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    names = ("UserPromptSubmit", "PostToolUse", "Stop")
    payloads = [fixture(f"copilot/claude-settings-{name}.json") for name in names]
    report = payloads[1]
    report["tool_name"] = "Bash"
    report["tool_input"] = {"command": ACCEPT}
    report["tool_result"] = {"result_type": "failure", "text_result_for_llm": ACCEPT_REFUSED}
    for data in payloads:
        data["cwd"], data["session_id"] = str(repo), SESSION
        done = hook("claude-code", data, state)
        assert done.returncode == 0, done.stderr
    notice = last(state).decision_doc["answer"]["notice"]
    assert "the agent called donegate itself from its shell 1 time(s)" in notice
    assert "recorded nothing" in notice
