"""``donegate doctor`` on a fresh repository, a fully installed one, and each broken state."""

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
from donegate.demo.project import payload, run_hook


def doctor(root: Path, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
    cmd = [sys.executable, "-m", "donegate", "doctor", "--root", str(root), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)


def init(root: Path, host: str, state: Path) -> None:
    """``donegate init HOST`` with the state directory the doctor is asked about: init names it
    in the rules it writes (the signing key denied to the agent)."""
    env = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
    cmd = [sys.executable, "-m", "donegate", "init", host, "--root", str(root)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert "donegate doctor" in done.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return project.create(tmp_path / "repo")


def test_a_fresh_repository_says_what_to_install(repo: Path, tmp_path: Path) -> None:
    done = doctor(repo, tmp_path / "state", "--no-run")
    assert done.returncode == 3
    assert "fix: donegate init claude-code" in done.stderr


@pytest.fixture
def state() -> Iterator[Path]:
    """A state directory outside /tmp, which every host's sandbox lets the agent write."""
    where = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="donegate-state-"))
    yield where
    shutil.rmtree(where, ignore_errors=True)


def test_installed_but_never_fired_then_healthy_after_one_turn(repo: Path, state: Path) -> None:
    init(repo, "claude-code", state)
    never = doctor(repo, state)
    assert never.returncode == 3
    assert "never fired" in never.stderr
    assert "all 1 configured checks ran and observed" in never.stderr
    run_hook(payload("SessionStart", "s1", repo, source="startup"), state)
    healthy = doctor(repo, state)
    assert healthy.returncode == 0, healthy.stderr
    assert "last hook call SessionStart" in healthy.stderr


def test_each_broken_state_is_named_with_its_fix(repo: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    init(repo, "codex", state)
    settings = repo / ".codex" / "hooks.json"
    data = json.loads(settings.read_text())
    del data["hooks"]["Stop"]  # a hook lost
    settings.write_text(json.dumps(data))
    (repo / "donegate.toml").write_text("[gate]\nmax_vetoes = 'many'\n")
    done = doctor(repo, state)
    assert done.returncode == 3
    assert "missing Stop" in done.stderr
    assert "fix: donegate init codex" in done.stderr
    assert "run /hooks" in done.stderr  # Codex skips untrusted hooks
    assert "donegate.toml is invalid" in done.stderr


def test_checks_that_cannot_observe_and_an_unwritable_state_dir(repo: Path, tmp_path: Path) -> None:
    config = repo / "donegate.toml"
    config.write_text(config.read_text().replace(json.dumps(sys.executable), '"/no/such/python"'))
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = doctor(repo, blocker / "state")
    assert done.returncode == 3
    assert "checks that could not observe" in done.stderr
    assert "is not writable" in done.stderr
