"""``donegate init`` through the real console entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from donegate.config import load_config


def init(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "donegate", "init", *args, "--root", str(root)]
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def test_init_installs_hooks_and_a_starter_config_once(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a() -> None:\n    pass\n")
    first = init(tmp_path, "claude-code")
    assert first.returncode == 0, first.stderr
    settings = (tmp_path / ".claude" / "settings.json").read_text()
    starter = (tmp_path / "donegate.toml").read_text()
    assert "pytest" in starter
    config = load_config(tmp_path / "donegate.toml")
    assert [spec.settings.check_type for spec in config.checks] == ["test_run"]
    protect = config.checks[0].settings.protect  # type: ignore[attr-defined]
    assert {"tests/**", "conftest.py", "pytest.ini", "pyproject.toml"} <= set(protect)
    assert "must_pass" in starter
    second = init(tmp_path, "claude-code")
    assert second.returncode == 0
    assert "kept the existing donegate.toml" in second.stderr
    assert (tmp_path / ".claude" / "settings.json").read_text() == settings
    stop = json.loads(settings)["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert stop.endswith("hook claude-code")


def test_uninstall_leaves_the_users_own_hooks(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say hi"}]}]}}
    path.write_text(json.dumps(mine))
    assert init(tmp_path, "claude-code").returncode == 0
    assert init(tmp_path, "claude-code", "--uninstall").returncode == 0
    assert json.loads(path.read_text()) == mine


def test_codex_gets_its_own_hooks_file(tmp_path: Path) -> None:
    assert init(tmp_path, "codex").returncode == 0
    hooks = json.loads((tmp_path / ".codex" / "hooks.json").read_text())
    assert set(hooks) == {"hooks"}
    assert "Stop" in hooks["hooks"]


def test_an_unknown_host_is_a_usage_error(tmp_path: Path) -> None:
    assert init(tmp_path, "emacs").returncode == 2
