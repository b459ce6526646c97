"""The agent calling donegate itself from its shell, as the real hook outside its box hears of it
(:mod:`donegate.session.boxed`): Claude Code's report of the shell call carries what the call
printed, and the mark of a call that recorded nothing is told to the person at once and at each
later stop. Played through the real ``donegate hook claude-code``; the confined calls themselves,
with the real program, are in ``tests/hosts/test_claude_code_confined.py``."""

from __future__ import annotations

from pathlib import Path

from donegate.demo import project
from donegate.demo.project import HookRun, payload, run_hook
from donegate.statedir import NOT_RECORDED
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
