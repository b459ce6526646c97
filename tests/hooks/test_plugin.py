"""The Claude Code plugin: its manifest, its hooks, and a launcher that never traps the agent."""

from __future__ import annotations

import json
import os
import subprocess
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
    done = subprocess.run(
        ["/bin/sh", str(PLUGIN / "bin" / "donegate-hook")],
        input="{}",
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0
    assert "not installed" in json.loads(done.stdout)["systemMessage"]
