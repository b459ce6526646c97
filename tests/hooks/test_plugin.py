"""The Claude Code plugin: its manifest, its hooks, and a launcher that never traps the agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from donegate.hooks.install import HOSTS

ROOT = Path(__file__).parents[2]
PLUGIN = ROOT / "plugin" / "claude-code"


def test_the_marketplace_entry_points_at_the_plugin() -> None:
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    [entry] = market["plugins"]
    assert (ROOT / entry["source"] / ".claude-plugin" / "plugin.json").is_file()
    assert json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())["name"] == "donegate"


def test_the_plugin_hooks_the_same_events_as_init() -> None:
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == set(HOSTS["claude-code"].events)
    assert hooks["Stop"][0]["hooks"][0]["timeout"] == HOSTS["claude-code"].stop_timeout_s


def test_without_any_donegate_the_launcher_lets_the_agent_stop_and_says_why(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # no donegate, uvx or pipx to be found
    done = _launch(env, tmp_path)
    assert "not installed" in json.loads(done.stdout)["systemMessage"]


def test_the_launcher_passes_over_a_donegate_inside_the_project_and_the_shells_pythonpath(
    tmp_path: Path,
) -> None:
    """An activated project virtualenv puts the agent's ``.venv/bin`` first on ``PATH``."""
    project = tmp_path / "project"
    marker = tmp_path / "agent-code-ran"
    fake = project / ".venv" / "bin" / "donegate"
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!/bin/sh\ntouch {marker}\n")
    fake.chmod(0o755)
    (project / "src").mkdir()
    (project / "src" / "fnmatch.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    real = Path(os.environ.get("VIRTUAL_ENV", sys.prefix)) / "bin"
    env = {
        **os.environ,
        "PATH": f"{fake.parent}:.:{real}:/usr/bin:/bin",
        "PYTHONPATH": "src",
        "CLAUDE_PROJECT_DIR": str(project),
        "DONEGATE_STATE_DIR": str(tmp_path / "state"),
    }
    # The attack's premises: a plain lookup finds the agent's donegate first, and the real one
    # imports the agent's module from PYTHONPATH.
    subprocess.run(["sh", "-c", "donegate"], env=env, cwd=project, check=True)
    assert marker.exists()
    marker.unlink()
    subprocess.run(
        [str(real / "donegate"), "--help"], env=env, cwd=project, capture_output=True, check=False
    )
    assert marker.exists()
    marker.unlink()
    done = _launch(env, project)
    assert not marker.exists()  # neither the planted donegate nor the planted module ran
    assert "could not read this hook call" in done.stdout  # the real donegate answered


def _launch(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The plugin's launcher, run as Claude Code runs a hook: it must always exit 0."""
    return subprocess.run(
        ["/bin/sh", str(PLUGIN / "bin" / "donegate-hook")],
        input="{}",
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
    )
