"""Real git repositories in temporary directories for the workspace tests."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
from pathlib import Path
from typing import Any

import pytest

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    """Run real git in ``repo`` and return its stdout."""
    env = {**os.environ, **_GIT_ENV, "HOME": str(repo.parent)}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def write(root: Path, path: str, text: str) -> Path:
    """Create or overwrite ``root/path`` with ``text``."""
    full = root / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text)
    return full


def compiled(root: Path, source: str, name: str | None = None) -> Path:
    """Real bytecode of ``root/source`` in its ``__pycache__`` (as Python or pytest writes it)."""
    src = root / source
    cache = Path(importlib.util.cache_from_source(str(src)))
    target = cache if name is None else cache.with_name(name)
    py_compile.compile(str(src), cfile=str(target), doraise=True)
    return target


def spy_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files snapshots read from now on, in order."""
    from donegate.workspace import snapshot

    read: list[str] = []
    original = snapshot._read

    def spy(path: str, *args: Any) -> Any:
        read.append(Path(path).name)
        return original(path, *args)

    monkeypatch.setattr(snapshot, "_read", spy)
    return read


APP = '''"""The app."""


def add(a, b):
    """Add two numbers."""
    return a + b
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A committed repository: a module, a test, a README, a config file and a .gitignore."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "src/app.py", APP)
    write(
        root,
        "tests/test_app.py",
        "from app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    )
    write(root, "README.md", "# app\n")
    write(root, "pyproject.toml", "[project]\nname = 'app'\n")
    write(root, ".gitignore", "build/\n*.log\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """A state directory outside the working tree."""
    path = tmp_path / "state"
    path.mkdir()
    return path
