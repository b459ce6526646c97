"""Playing an agent through the real ``donegate hook claude-code`` process on a real project."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from donegate.demo import project
from donegate.demo.project import HookRun, payload, run_hook
from donegate.ledger import Ledger, Receipt

# The demo project's tests with the one the bug fails turned into one that cannot fail.
WEAKENED_TESTS = project.TESTS.replace(
    'assert normalize(" 94107-1234 ") == "94107"', 'assert normalize(" 94107-1234 ")'
)
# A "fix" that leaves the bug in place: only a weakened judge could call it done.
NOT_A_FIX = project.BUGGY.replace("return zip_code.strip()", "return zip_code.strip()[:10]")


def make_repo(tmp_path: Path, **config: Any) -> Path:
    return project.create(tmp_path / "repo", **config)


def start(repo: Path, state: Path, session: str, cwd: Path | None = None) -> HookRun:
    run = run_hook(payload("SessionStart", session, cwd or repo, source="startup"), state)
    assert run.exit_code == 0, run.stderr
    return run


def prompt(repo: Path, state: Path, session: str) -> HookRun:
    run = run_hook(payload("UserPromptSubmit", session, repo, prompt="go on"), state)
    assert run.exit_code == 0, run.stderr
    return run


def shell(repo: Path, state: Path, session: str, command: str) -> HookRun:
    """What Claude Code's PostToolUse hook reports after the agent ran ``command``."""
    data = payload(
        "PostToolUse",
        session,
        repo,
        tool_name="Bash",
        tool_input={"command": command},
        tool_response={"stdout": "", "stderr": "", "interrupted": False},
    )
    run = run_hook(data, state)
    assert run.exit_code == 0, run.stderr
    return run


def stop(repo: Path, state: Path, session: str, cwd: Path | None = None, **fields: Any) -> HookRun:
    fields.setdefault("last_assistant_message", "Done: the parser handles ZIP+4 now.")
    run = run_hook(payload("Stop", session, cwd or repo, **fields), state)
    assert run.exit_code == 0, run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    return run


def receipts(state: Path, session: str | None = None) -> list[Receipt]:
    with Ledger(state) as ledger:
        return list(reversed(ledger.recent(200, session=session)))


def last(state: Path, session: str | None = None) -> Receipt:
    return receipts(state, session)[-1]


def plain_pytest_passes(repo: Path) -> bool:
    """The control: whether the project's own test command, run directly, is green."""
    done = subprocess.run(
        project.pytest_command(), cwd=repo, capture_output=True, text=True, check=False
    )
    return done.returncode == 0


def donegate(*args: str, cwd: Path, state: Path, env: dict[str, str] | None = None) -> Any:
    """``donegate ARGS`` as a person (or an agent's shell, with ``env``) runs it."""
    import os

    full = {**os.environ, "DONEGATE_STATE_DIR": str(state), **(env or {})}
    for name in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"):
        if not env or name not in env:
            full.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "donegate", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=full,
        check=False,
    )
