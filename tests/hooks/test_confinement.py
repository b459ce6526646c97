"""``donegate init HOST`` asks the host for its sandbox, and a stop records what confined the
agent as the host's effective settings say: real files in the hosts' formats, a temporary HOME
(and CODEX_HOME, COPILOT_HOME), through the real ``donegate init`` and ``donegate hook``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from donegate.demo import project
from donegate.demo.project import FIXED, payload, run_hook
from donegate.hooks.confinement import confinement
from donegate.ledger import Ledger

CLAUDE = "claude-code sandbox, no unsandboxed fallback"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def state() -> Iterator[Path]:
    # Outside /tmp: every host's sandbox lets commands write there.
    where = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="donegate-state-"))
    yield where
    shutil.rmtree(where, ignore_errors=True)


def env_for(home: Path, state: Path | None = None, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_STATE_HOME", "CODEX_HOME")}
    env.pop("DONEGATE_STATE_DIR", None)
    env.update(HOME=str(home), **more)
    if state is not None:
        env["DONEGATE_STATE_DIR"] = str(state)
    return env


def init(root: Path, host: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "donegate", "init", host, "--root", str(root)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done


def host_home(tmp_path: Path, name: str) -> Path:
    """A host's own home (CODEX_HOME, COPILOT_HOME), empty."""
    where = tmp_path / name
    where.mkdir()
    return where


def installed(tmp_path: Path, home: Path, host: str) -> tuple[Path, dict[str, str]]:
    """A project where ``donegate init host`` ran, and the environment it ran in."""
    repo = project.create(tmp_path / "repo")
    env = env_for(home)
    init(repo, host, env)
    return repo, env


def test_init_claude_code_turns_on_the_sandbox_without_fallback_and_keeps_the_users_own(
    tmp_path: Path, home: Path
) -> None:
    repo = project.create(tmp_path / "repo")
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine: dict[str, Any] = {"sandbox": {"filesystem": {"allowWrite": ["~/.npm"]}}, "model": "opus"}
    settings.write_text(json.dumps(mine))
    env = env_for(home)
    assert confinement("claude-code", repo, env) is None
    init(repo, "claude-code", env)
    data = json.loads(settings.read_text())
    assert data["model"] == "opus"
    assert data["sandbox"]["filesystem"] == mine["sandbox"]["filesystem"]
    assert data["sandbox"]["enabled"] is True
    assert data["sandbox"]["failIfUnavailable"] is True
    assert data["sandbox"]["allowUnsandboxedCommands"] is False
    # The file tools run outside the sandbox: denied donegate's state and the user's settings.
    for rule in ("Edit(~/.local/state/donegate/**)", "Write(~/.claude/**)"):
        assert rule in data["permissions"]["deny"]
    assert confinement("claude-code", repo, env) == CLAUDE
    subprocess.run(
        [
            sys.executable,
            "-m",
            "donegate",
            "init",
            "claude-code",
            "--uninstall",
            "--root",
            str(repo),
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    assert json.loads(settings.read_text()) == mine


def test_a_higher_layer_that_allows_the_unsandboxed_fallback_unconfines(
    tmp_path: Path, home: Path
) -> None:
    repo, env = installed(tmp_path, home, "claude-code")
    local = repo / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"sandbox": {"allowUnsandboxedCommands": True}}))
    assert confinement("claude-code", repo, env) is None
    local.unlink()
    (home / ".claude").mkdir()
    user = {"sandbox": {"enabled": True, "failIfUnavailable": True}}
    (home / ".claude" / "settings.json").write_text(json.dumps(user))
    assert confinement("claude-code", repo, env) == CLAUDE  # the project's false wins over none


def test_a_sandbox_that_may_write_donegate_s_state_confines_nothing(
    tmp_path: Path, home: Path, state: Path
) -> None:
    repo, env = installed(tmp_path, home, "claude-code")
    assert confinement("claude-code", repo, env, state_dir=tmp_path / "state") is None  # /tmp
    assert confinement("claude-code", repo, env, state_dir=repo / ".state") is None
    assert confinement("claude-code", repo, env, state_dir=state) == CLAUDE


def test_a_stop_of_a_confined_claude_code_agent_records_its_sandbox(
    tmp_path: Path, home: Path, state: Path
) -> None:
    repo = project.create(tmp_path / "repo")
    env = env_for(home, state)
    init(repo, "claude-code", env)
    project.git(repo, "add", "-A")
    project.git(repo, "commit", "-qm", "donegate")
    run_hook(payload("SessionStart", "s1", repo, source="startup"), state, env=env)
    (repo / "zipcode.py").write_text(FIXED)
    done = run_hook(payload("Stop", "s1", repo, last_assistant_message="Fixed."), state, env=env)
    assert done.exit_code == 0, done.stderr
    with Ledger(state) as ledger:
        receipt = ledger.recent(1)[0]
    assert receipt.decision_doc["confinement"] == {"confined": True, "by": CLAUDE}


def test_init_codex_asks_for_workspace_write_and_it_counts_once_the_project_is_trusted(
    tmp_path: Path, home: Path
) -> None:
    repo, codex_home = project.create(tmp_path / "repo"), host_home(tmp_path, "codex")
    config = repo / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o4"\nsandbox_mode = "danger-full-access"\n\n[tools]\nweb = true\n')
    env = env_for(home, CODEX_HOME=str(codex_home))
    init(repo, "codex", env)
    data = tomllib.loads(config.read_text())
    assert data == {"model": "o4", "sandbox_mode": "workspace-write", "tools": {"web": True}}
    # An untrusted project's config is not loaded by Codex: nothing confines the agent yet.
    assert confinement("codex", repo, env) is None
    trust = f'[projects."{repo.resolve()}"]\ntrust_level = "trusted"\n'
    (codex_home / "config.toml").write_text(trust)
    assert confinement("codex", repo, env) == "codex sandbox workspace-write"
    # workspace-write lets commands write /tmp: a state directory there is reachable.
    assert confinement("codex", repo, env, state_dir=tmp_path / "state") is None


def test_init_gemini_cli_asks_for_tool_sandboxing_which_counts_in_a_trusted_folder(
    tmp_path: Path, home: Path
) -> None:
    repo, env = installed(tmp_path, home, "gemini-cli")
    data = json.loads((repo / ".gemini" / "settings.json").read_text())
    assert data["security"] == {"toolSandboxing": True}
    assert confinement("gemini-cli", repo, env) is None  # untrusted: its settings are not read
    (home / ".gemini").mkdir()
    rules = {str(repo.parent): "TRUST_FOLDER", str(repo / "sub"): "DO_NOT_TRUST"}
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps(rules))
    assert confinement("gemini-cli", repo, env) == "gemini-cli tool sandbox"
    rules[str(repo)] = "DO_NOT_TRUST"  # the longest rule wins
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps(rules))
    assert confinement("gemini-cli", repo, env) is None


def test_copilot_s_sandbox_counts_only_when_its_policy_denies_donegate_s_state(
    tmp_path: Path, home: Path
) -> None:
    repo, copilot_home = project.create(tmp_path / "repo"), host_home(tmp_path, "copilot")
    env = env_for(home, COPILOT_HOME=str(copilot_home))
    state = home / ".local" / "state" / "donegate"
    sandbox: dict[str, object] = {"enabled": True}
    (copilot_home / "settings.json").write_text(json.dumps({"sandbox": sandbox}))
    # Its default policy reaches the user's profile, where donegate's state lies.
    assert confinement("copilot", repo, env, state_dir=state) is None
    sandbox["userPolicy"] = {"filesystem": {"deniedPaths": [str(state)]}}
    (copilot_home / "settings.json").write_text(json.dumps({"sandbox": sandbox}))
    assert confinement("copilot", repo, env, state_dir=state) == "copilot sandbox"


def test_cursor_offers_no_sandbox_donegate_can_read(tmp_path: Path, home: Path) -> None:
    repo, env = installed(tmp_path, home, "cursor")
    assert confinement("cursor", repo, env) is None


def test_init_says_whether_the_agent_is_now_confined_and_warns_of_a_reachable_state(
    tmp_path: Path, home: Path, state: Path
) -> None:
    repo = project.create(tmp_path / "repo")
    reachable = init(repo, "claude-code", env_for(home, tmp_path / "state")).stderr
    assert (
        f"WARNING: {CLAUDE} lets the agent write donegate's state {tmp_path / 'state'}" in reachable
    )
    assert (
        f"claude-code: the agent is confined: {CLAUDE}"
        in init(repo, "claude-code", env_for(home, state)).stderr
    )
    cursor = init(repo, "cursor", env_for(home, state)).stderr
    assert "cursor: the agent is not known to be confined" in cursor
    assert "Cursor keeps its sandbox in the editor" in cursor
    codex = init(repo, "codex", env_for(home, state)).stderr
    assert "codex: the agent is not known to be confined" in codex  # the project is not trusted
    assert "trust the project, run /hooks" in codex


def test_sandbox_settings_written_in_the_session_do_not_count_as_confinement(
    tmp_path: Path, home: Path, state: Path
) -> None:
    """The attack: an unconfined agent writes Claude Code's sandbox keys into the project's
    local settings, which the host reads only when it starts; read at the stop, they would say
    confined, and `require_confined` would let its stop verify."""
    repo = project.create(tmp_path / "repo")
    config = repo / "donegate.toml"
    config.write_text(config.read_text().replace("[gate]\n", "[gate]\nrequire_confined = true\n"))
    project.git(repo, "commit", "-qam", "require confinement")
    env = env_for(home, state)
    run_hook(payload("SessionStart", "s1", repo, source="startup"), state, env=env)
    run_hook(payload("UserPromptSubmit", "s1", repo, prompt="fix it"), state, env=env)
    local = repo / ".claude" / "settings.local.json"
    local.parent.mkdir(exist_ok=True)
    sandbox = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}
    local.write_text(json.dumps({"sandbox": sandbox}))
    assert confinement("claude-code", repo, env, state_dir=state) == CLAUDE  # what it would say
    (repo / "zipcode.py").write_text(FIXED)
    done = run_hook(payload("Stop", "s1", repo, last_assistant_message="Fixed."), state, env=env)
    assert done.exit_code == 0, done.stderr
    with Ledger(state) as ledger:
        receipt = ledger.recent(1)[0]
    assert (receipt.verdict, receipt.reason) == ("unverified", "unconfined")
    assert "sandbox settings, changed in this session" in done.answer["systemMessage"]


def test_a_permission_the_host_records_mid_session_keeps_the_agent_confined(
    tmp_path: Path, home: Path, state: Path
) -> None:
    """The control: Claude Code itself writes settings.local.json when a person allows a tool;
    its sandbox keys unchanged, the agent is still confined."""
    repo = project.create(tmp_path / "repo")
    env = env_for(home, state)
    init(repo, "claude-code", env)
    project.git(repo, "add", "-A")
    project.git(repo, "commit", "-qm", "donegate")
    run_hook(payload("SessionStart", "s1", repo, source="startup"), state, env=env)
    local = repo / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"permissions": {"allow": ["Bash(pytest:*)"]}}))
    (repo / "zipcode.py").write_text(FIXED)
    done = run_hook(payload("Stop", "s1", repo, last_assistant_message="Fixed."), state, env=env)
    assert done.exit_code == 0, done.stderr
    with Ledger(state) as ledger:
        receipt = ledger.recent(1)[0]
    assert receipt.decision_doc["confinement"] == {"confined": True, "by": CLAUDE}
