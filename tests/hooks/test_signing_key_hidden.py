"""Claude Code's sandbox lets the agent's commands read the whole machine: ``donegate init
claude-code`` denies them donegate's signing key (a ``Read(...)`` rule, which the sandbox also
applies), ``--uninstall`` takes the rule out again, and ``donegate doctor`` says whether it holds.
The real ``donegate`` processes, a temporary HOME; what the real program does with the rule is in
``tests/hosts/test_claude_code_confined.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from donegate.demo import project

RULE = "Read(~/.local/state/donegate/signing-key.pem)"


def donegate(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "donegate", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)


def test_init_denies_the_key_doctor_says_so_and_uninstall_takes_it_out(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DONEGATE_", "XDG_"))}
    env["HOME"] = str(tmp_path / "home")
    repo = project.create(tmp_path / "repo")
    settings = repo / ".claude" / "settings.json"
    assert donegate(env, "init", "claude-code", "--root", str(repo)).returncode == 0
    assert RULE in json.loads(settings.read_text())["permissions"]["deny"]
    said = donegate(env, "doctor", "--no-run", "--root", str(repo)).stderr
    assert "ok  claude-code: donegate's signing key is denied to the agent" in said
    data = json.loads(settings.read_text())
    data["permissions"]["deny"].remove(RULE)
    settings.write_text(json.dumps(data))
    said = donegate(env, "doctor", "--no-run", "--root", str(repo)).stderr
    assert f"NO  claude-code: the agent can read donegate's signing key: no {RULE}" in said
    assert "fix: donegate init claude-code (denies reading it)" in said
    assert donegate(env, "init", "claude-code", "--root", str(repo)).returncode == 0
    uninstall = ("init", "claude-code", "--uninstall", "--root", str(repo))
    assert donegate(env, *uninstall).returncode == 0
    assert "permissions" not in json.loads(settings.read_text())
