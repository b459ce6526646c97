"""``donegate doctor`` tells hooks that cannot fire (a host's trust gate, each with its fix) from
hooks that have not fired yet, and says whether the agent is confined: the real ``donegate
doctor`` process, a temporary HOME, CODEX_HOME and COPILOT_HOME holding real files in the hosts'
own formats."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from donegate.demo import project
from donegate.hooks.doctor import codex_hook_hash


@pytest.fixture
def state() -> Iterator[Path]:
    """A state directory outside /tmp, which every host's sandbox lets the agent write."""
    where = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="donegate-state-"))
    yield where
    shutil.rmtree(where, ignore_errors=True)


@pytest.fixture
def env(tmp_path: Path, state: Path) -> dict[str, str]:
    for name in ("home", "codex-home", "copilot-home"):
        (tmp_path / name).mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COPILOT_", "GEMINI_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        CODEX_HOME=str(tmp_path / "codex-home"),
        COPILOT_HOME=str(tmp_path / "copilot-home"),
        DONEGATE_STATE_DIR=str(state),
    )
    return env


def donegate(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "donegate", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)


def installed(tmp_path: Path, env: dict[str, str], host: str) -> Path:
    repo = project.create(tmp_path / "repo")
    assert donegate(env, "init", host, "--root", str(repo)).returncode == 0
    return repo


def says(out: str, *parts: str) -> None:
    missing = [part for part in parts if part not in out]
    assert not missing, f"doctor did not say {missing}:\n{out}"


def doctor(repo: Path, env: dict[str, str]) -> str:
    return donegate(env, "doctor", "--no-run", "--root", str(repo)).stderr


CODEX_EVENTS = ("session_start", "user_prompt_submit", "post_tool_use", "stop", "subagent_stop")


def codex_trust(repo: Path, events: tuple[str, ...] = CODEX_EVENTS) -> str:
    """$CODEX_HOME/config.toml as Codex writes it once the project and its hooks are trusted:
    each hook's key and the hash of the hook as installed (the hash is checked against Codex's
    own in tests/hosts/test_codex.py)."""
    hooks = (repo / ".codex" / "hooks.json").resolve()
    installed = json.loads(hooks.read_text())["hooks"]
    names = {name.lower().replace("_", ""): name for name in installed}
    trust = f'[projects."{repo.resolve()}"]\ntrust_level = "trusted"\n\n'
    for event in events:
        group = installed[names[event.replace("_", "")]][0]
        digest = codex_hook_hash(
            names[event.replace("_", "")], group.get("matcher"), group["hooks"][0]
        )
        trust += f'[hooks.state."{hooks}:{event}:0:0"]\ntrusted_hash = "{digest}"\n\n'
    return trust


def test_codex_untrusted_in_codex_home_cannot_fire_and_says_how_to_trust(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = installed(tmp_path, env, "codex")
    trust = codex_trust(repo)
    # Trust recorded in ~/.codex is not Codex's when CODEX_HOME points elsewhere.
    (Path(env["HOME"]) / ".codex").mkdir()
    (Path(env["HOME"]) / ".codex" / "config.toml").write_text(trust)
    out = doctor(repo, env)
    config = Path(env["CODEX_HOME"]) / "config.toml"
    says(
        out,
        f"NO  codex: the project {repo} is not trusted in {config}",
        "trust the project",
        "no trust recorded",
        "run /hooks",
        "codex: its hooks cannot fire here",
    )
    assert "has not fired yet" not in out
    config.write_text(trust)
    out = doctor(repo, env)
    says(
        out,
        f"ok  codex: the project {repo} is trusted",
        "ok  codex: donegate's hooks are trusted",
        "ok  codex: the agent is confined: codex sandbox workspace-write",
        "codex: has not fired yet",
    )


def test_codex_hooks_trusted_but_one_event_not_is_named(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = installed(tmp_path, env, "codex")
    (Path(env["CODEX_HOME"]) / "config.toml").write_text(codex_trust(repo, CODEX_EVENTS[:-1]))
    out = doctor(repo, env)
    says(out, "no trust recorded", "SubagentStop hooks")


def test_codex_hooks_changed_or_disabled_since_trusted_cannot_fire(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Codex runs a hook only while its trusted hash is the hook's own: one edited after the
    person trusted it (here its timeout), or disabled in /hooks, is skipped."""
    repo = installed(tmp_path, env, "codex")
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.write_text(codex_trust(repo))
    says(doctor(repo, env), "ok  codex: donegate's hooks are trusted")
    hooks_file = repo / ".codex" / "hooks.json"
    hooks = json.loads(hooks_file.read_text())
    hooks["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 900
    hooks_file.write_text(json.dumps(hooks))
    out = doctor(repo, env)
    says(
        out,
        "NO  codex: donegate's Stop hooks changed since they were trusted",
        "trust donegate's hooks again",
        "codex: its hooks cannot fire here",
    )
    config.write_text(codex_trust(repo))
    key = f"{hooks_file.resolve()}:subagent_stop:0:0"
    config.write_text(
        config.read_text().replace(
            f'[hooks.state."{key}"]\n', f'[hooks.state."{key}"]\nenabled = false\n'
        )
    )
    says(doctor(repo, env), "NO  codex: donegate's SubagentStop hooks are disabled in")


def test_copilot_in_an_untrusted_folder_cannot_fire(tmp_path: Path, env: dict[str, str]) -> None:
    repo = installed(tmp_path, env, "copilot")
    config = Path(env["COPILOT_HOME"]) / "config.json"
    config.write_text(json.dumps({"trusted_folders": [str(tmp_path / "elsewhere")]}))
    out = doctor(repo, env)
    says(
        out,
        f"NO  copilot: {repo} is not a trusted folder in {config}",
        "trust the folder for future sessions",
        "copilot: its hooks cannot fire here",
    )
    config.write_text(json.dumps({"trusted_folders": [str(tmp_path)], "banner": "never"}))
    out = doctor(repo, env)
    says(
        out,
        f"ok  copilot: {tmp_path} is a trusted folder",
        "copilot: has not fired yet",
        "NO  copilot: nothing known confines the agent",
        "/sandbox enable",
    )


def test_gemini_cli_in_an_untrusted_folder_exits_55_and_doctor_says_so(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = installed(tmp_path, env, "gemini-cli")
    out = doctor(repo, env)
    says(
        out,
        f"NO  gemini-cli: {repo} is not a trusted folder",
        "exits 55",
        "TRUST_FOLDER",
        "gemini-cli: its hooks cannot fire here",
    )
    rules = Path(env["HOME"]) / ".gemini" / "trustedFolders.json"
    rules.parent.mkdir()
    rules.write_text(json.dumps({str(repo / "README.md"): "TRUST_PARENT"}))
    out = doctor(repo, env)
    says(
        out,
        f"ok  gemini-cli: {repo} is a trusted folder",
        "ok  gemini-cli: the agent is confined: gemini-cli tool sandbox",
        "gemini-cli: has not fired yet",
    )


def test_claude_code_confined_and_unconfined_each_said(tmp_path: Path, env: dict[str, str]) -> None:
    repo = installed(tmp_path, env, "claude-code")
    out = doctor(repo, env)
    assert "ok  claude-code: the agent is confined: claude-code sandbox" in out
    local = repo / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"sandbox": {"enabled": False}}))
    out = doctor(repo, env)
    says(out, "NO  claude-code: nothing known confines the agent", "fix: donegate init claude-code")
    local.unlink()
    out = doctor(repo, {**env, "DONEGATE_STATE_DIR": str(tmp_path / "state")})
    says(out, "lets the agent write donegate's state", "fix: set DONEGATE_STATE_DIR")
