"""The installer keeps the user's hooks, recognises its own, and takes out exactly those."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from donegate.errors import InvalidInput
from donegate.hooks.install import HOSTS, install, installed, is_ours, uninstall

CMD = "/opt/venv/bin/donegate hook claude-code"
USER_SETTINGS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 5}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
    },
}


def settings(root: Path, host: str = "claude-code") -> Any:
    return json.loads((root / HOSTS[host].settings).read_text())


def seed(root: Path) -> None:
    path = root / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(USER_SETTINGS))


def test_install_into_an_empty_repo(tmp_path: Path) -> None:
    install(tmp_path, "claude-code", CMD)
    hooks = settings(tmp_path)["hooks"]
    assert set(hooks) == set(HOSTS["claude-code"].events)
    stop = hooks["Stop"][0]["hooks"][0]
    assert stop == {"type": "command", "command": CMD, "timeout": 1800}
    assert hooks["PostToolUse"][0]["matcher"].startswith("Write|Edit")


def test_install_keeps_the_users_settings_and_hooks(tmp_path: Path) -> None:
    seed(tmp_path)
    install(tmp_path, "claude-code", CMD)
    data = settings(tmp_path)
    assert data["permissions"]["allow"] == USER_SETTINGS["permissions"]["allow"]
    assert data["hooks"]["PreToolUse"] == USER_SETTINGS["hooks"]["PreToolUse"]
    assert data["hooks"]["Stop"][0] == USER_SETTINGS["hooks"]["Stop"][0]
    assert len(data["hooks"]["Stop"]) == 2


def test_install_is_idempotent(tmp_path: Path) -> None:
    seed(tmp_path)
    install(tmp_path, "claude-code", CMD)
    once = settings(tmp_path)
    install(tmp_path, "claude-code", CMD)
    assert settings(tmp_path) == once


def test_reinstall_with_a_new_command_replaces_the_old_entry(tmp_path: Path) -> None:
    install(tmp_path, "claude-code", CMD)
    install(tmp_path, "claude-code", "python3 -m donegate hook claude-code")
    commands = [h["command"] for g in settings(tmp_path)["hooks"]["Stop"] for h in g["hooks"]]
    assert commands == ["python3 -m donegate hook claude-code"]


def test_uninstall_removes_exactly_donegates_entries(tmp_path: Path) -> None:
    seed(tmp_path)
    install(tmp_path, "claude-code", CMD)
    uninstall(tmp_path, "claude-code")
    assert settings(tmp_path) == USER_SETTINGS
    assert installed(tmp_path, "claude-code") == []


def test_uninstall_of_a_fresh_install_leaves_no_hooks_key(tmp_path: Path) -> None:
    install(tmp_path, "claude-code", CMD)
    uninstall(tmp_path, "claude-code")
    assert settings(tmp_path) == {}


def test_uninstall_without_settings_is_a_no_op(tmp_path: Path) -> None:
    assert uninstall(tmp_path, "claude-code") is None


def test_hosts_do_not_touch_each_others_entries(tmp_path: Path) -> None:
    install(tmp_path, "codex", "donegate hook codex")
    data = settings(tmp_path, "codex")
    assert set(data) == {"hooks"}  # Codex refuses a hooks.json with other root keys
    assert installed(tmp_path, "codex") == list(HOSTS["codex"].events)
    assert installed(tmp_path, "claude-code") == []


def test_a_broken_settings_file_is_reported_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("{not json")
    with pytest.raises(InvalidInput, match="cannot read"):
        install(tmp_path, "claude-code", CMD)
    assert path.read_text() == "{not json"


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("donegate hook claude-code", True),
        ("/home/u/.venv/bin/donegate hook claude-code", True),
        ("'/usr/bin/python3' -m donegate hook claude-code", True),
        ("donegate hook codex", False),
        ("my-donegate-wrapper.sh", False),
        ("donegate hook claude-codex", False),
        (None, False),
    ],
)
def test_recognises_its_own_commands(command: str | None, ours: bool) -> None:
    assert is_ours(command, "claude-code") is ours


def test_gemini_cli_timeouts_are_in_milliseconds(tmp_path: Path) -> None:
    install(tmp_path, "gemini-cli", "donegate hook gemini-cli")
    hooks = settings(tmp_path, "gemini-cli")["hooks"]
    assert hooks["AfterAgent"][0]["hooks"][0]["timeout"] == 1_800_000
    assert hooks["AfterTool"][0]["matcher"] == "write_file|replace|run_shell_command"
    assert installed(tmp_path, "gemini-cli") == list(HOSTS["gemini-cli"].events)


def test_cursor_entries_are_flat_and_only_ours_are_removed(tmp_path: Path) -> None:
    path = tmp_path / ".cursor" / "hooks.json"
    path.parent.mkdir()
    mine = {"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}}
    path.write_text(json.dumps(mine))
    install(tmp_path, "cursor", "donegate hook cursor")
    once = settings(tmp_path, "cursor")
    install(tmp_path, "cursor", "donegate hook cursor")
    assert settings(tmp_path, "cursor") == once
    assert once["hooks"]["stop"] == [
        {"command": "donegate hook cursor", "timeout": 1800, "loop_limit": 10}
    ]
    ours = [e for es in once["hooks"].values() for e in es if is_ours(e["command"], "cursor")]
    assert len(ours) == len(HOSTS["cursor"].events)
    assert all("timeout" in e for e in ours)
    assert once["hooks"]["afterFileEdit"][0] == {"command": "./format.sh"}
    assert set(installed(tmp_path, "cursor")) == set(HOSTS["cursor"].events)
    uninstall(tmp_path, "cursor")
    assert settings(tmp_path, "cursor") == mine


def test_claude_code_denies_the_agent_donegate_accept_and_uninstall_takes_only_that(
    tmp_path: Path,
) -> None:
    seed(tmp_path)
    install(tmp_path, "claude-code", CMD)
    install(tmp_path, "claude-code", CMD)
    deny = settings(tmp_path)["permissions"]["deny"]
    assert deny[:2] == list(HOSTS["claude-code"].deny)
    assert len(deny) == len(set(deny))  # once, however often init runs
    uninstall(tmp_path, "claude-code")
    assert settings(tmp_path)["permissions"] == USER_SETTINGS["permissions"]


def test_gemini_cli_is_never_trapped_by_a_missing_donegate(tmp_path: Path) -> None:
    import subprocess

    missing = str(tmp_path / "gone" / "donegate") + " hook gemini-cli"
    install(tmp_path, "gemini-cli", missing)
    command = settings(tmp_path, "gemini-cli")["hooks"]["AfterAgent"][0]["hooks"][0]["command"]
    # Gemini CLI runs the command in a shell; any status but 0 or 1 with text is a deny.
    bare = subprocess.run(
        ["sh", "-c", missing], input="{}", capture_output=True, text=True, check=False
    )
    assert bare.returncode == 127  # unguarded, this would trap the agent
    assert bare.stderr
    guarded = subprocess.run(
        ["sh", "-c", command], input="{}", capture_output=True, text=True, check=False
    )
    assert guarded.returncode == 0
    assert is_ours(command, "gemini-cli")
    install(tmp_path, "gemini-cli", missing)  # idempotent with the guard too
    assert len(settings(tmp_path, "gemini-cli")["hooks"]["AfterAgent"]) == 1


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("/home/u/.cache/uv/archive-v0/Xk2/", "uvx --from donegate=="),
        ("/home/u/.local/pipx/.cache/8f1e/", "pipx run --spec donegate=="),
        ("/home/u/.local/share/uv/tools/donegate", None),
        ("/home/u/project/.venv", None),
    ],
)
def test_a_zero_install_run_installs_a_command_that_outlives_its_cache(
    prefix: str, expected: str | None
) -> None:
    from donegate.hooks.install import ephemeral_runner

    found = ephemeral_runner(prefix)
    assert (found is None) if expected is None else (found or "").startswith(expected)


def _planted(tree: Path) -> Path:
    """A module of the standard library's name in the agent's tree; it leaves a marker if run."""
    marker = tree / "RAN-AGENT-CODE"
    (tree / "fnmatch.py").write_text(f"open({str(marker)!r}, 'w').close()\nraise SystemExit(0)\n")
    return marker


@pytest.mark.parametrize("where", ["cwd", "PYTHONPATH"])
def test_the_installed_command_never_imports_from_the_agents_tree(
    tmp_path: Path, where: str
) -> None:
    """The hook runs in the agent's tree, with the host's environment (``PYTHONPATH=src``)."""
    import shlex
    import subprocess

    from donegate.hooks import install as installer

    command = installer.hook_command("claude-code")
    assert "-E -P -m donegate hook claude-code" in command
    tree = tmp_path / "src" if where == "PYTHONPATH" else tmp_path
    tree.mkdir(exist_ok=True)
    marker = _planted(tree)
    env = {"PATH": "/usr/bin:/bin", "DONEGATE_STATE_DIR": str(tmp_path / "state")}
    if where == "PYTHONPATH":
        env["PYTHONPATH"] = "src"
    unsafe = command.replace(" -E -P ", " ")
    subprocess.run(shlex.split(unsafe), check=True, cwd=tmp_path, input="{}", text=True, env=env)
    assert marker.exists()  # the attack, without -E -P: the agent's code ran, and exited 0
    marker.unlink()
    done = subprocess.run(
        shlex.split(command),
        check=True,
        cwd=tmp_path,
        input="{}",
        capture_output=True,
        text=True,
        env=env,
    )
    assert not marker.exists()
    assert "could not read this hook call" in done.stdout  # donegate itself answered
