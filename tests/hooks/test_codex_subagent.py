"""Codex's subagents (``spawn_agent``) end with ``SubagentStop``: ``init codex`` installs it and
the installed command gates it as Claude Code's is gated, through the real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from donegate.demo import project
from tests.hooks.test_hosts import fixture

WRONG = "def normalize(z):\n    return z\n"  # a wrong fix: test_update still fails


def installed_command(repo: Path, event: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "donegate", "init", "codex", "--root", str(repo)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    hooks = json.loads((repo / ".codex" / "hooks.json").read_text())["hooks"]
    assert event in hooks, f"init codex installed no {event}: {sorted(hooks)}"
    command: str = hooks[event][0]["hooks"][0]["command"]
    return command


def run(command: str, data: dict[str, Any], state: Path) -> dict[str, Any]:
    env = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
    done = subprocess.run(
        command,
        shell=True,
        input=json.dumps(data),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout) if done.stdout.strip() else {}
    return out


def test_a_codex_subagent_s_wrong_fix_is_sent_back_at_its_own_stop(tmp_path: Path) -> None:
    repo = project.create(tmp_path / "repo")
    state = tmp_path / "state"
    command = installed_command(repo, "SubagentStop")
    start = {**fixture("codex-0.144/SessionStart.json"), "cwd": str(repo)}
    run(command, start, state)
    (repo / "zipcode.py").write_text(WRONG)  # the subagent's edit
    stop = {**fixture("codex-0.144/SubagentStop.json"), "cwd": str(repo)}
    answer = run(command, stop, state)
    assert answer["decision"] == "block"
    assert "test_update" in answer["reason"]
    assert set(answer) <= {"continue", "decision", "reason", "stopReason", "systemMessage"}
