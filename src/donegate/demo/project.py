"""A small real Python project in a temporary git repository, for the demo and the tests.

``zipcode.normalize`` has a bug (it keeps the ZIP+4 suffix), and the tests say so. Agent sessions
are replayed against it through the real ``donegate hook`` entry point.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUGGY = '''\
"""ZIP codes."""


def normalize(zip_code: str) -> str:
    """The five-digit ZIP code of "94107" or "94107-1234"."""
    return zip_code.strip()
'''

FIXED = '''\
"""ZIP codes."""


def normalize(zip_code: str) -> str:
    """The five-digit ZIP code of "94107" or "94107-1234"."""
    return zip_code.strip().split("-")[0]
'''

TESTS = """\
from zipcode import normalize


def test_plain() -> None:
    assert normalize("94107") == "94107"


def test_update() -> None:
    assert normalize(" 94107-1234 ") == "94107"
"""

CONFIG = """\
[policy]
id = "code-change"
requires = ["test_run"]
max_age_s = 900
on_unverified = "{mode}"

[gate]
requires_write = {requires_write}
max_strict_vetoes = {max_strict_vetoes}

[[checks]]
check_type = "test_run"
command = {command}
expected = {{ exit_code = 0 }}
protect = ["tests/**"]
timeout_s = 120
"""

GIT_ENV = {
    "GIT_AUTHOR_NAME": "demo",
    "GIT_AUTHOR_EMAIL": "demo@example.com",
    "GIT_COMMITTER_NAME": "demo",
    "GIT_COMMITTER_EMAIL": "demo@example.com",
}


def pytest_command(python: str = sys.executable) -> list[str]:
    """The project's test command: this interpreter's pytest, without a cache in the tree."""
    return [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]


def config_text(
    *, mode: str = "block", requires_write: bool = False, max_strict_vetoes: int = 5
) -> str:
    """The project's ``donegate.toml``."""
    return CONFIG.format(
        mode=mode,
        requires_write=str(requires_write).lower(),
        max_strict_vetoes=max_strict_vetoes,
        command=json.dumps(pytest_command()),
    )


def create(root: Path, **config: Any) -> Path:
    """Write the project into ``root`` (created) and commit it; return ``root``."""
    (root / "tests").mkdir(parents=True)
    (root / "zipcode.py").write_text(BUGGY)
    (root / "tests" / "test_zip.py").write_text(TESTS)
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    (root / "donegate.toml").write_text(config_text(**config))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "zipcode with a bug")
    return root


def git(root: Path, *args: str) -> None:
    """Run git in ``root`` with a fixed identity."""
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)


@dataclass(frozen=True)
class HookRun:
    """One hook call's result, as the host sees it."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def answer(self) -> dict[str, Any]:
        """The JSON the hook printed (empty when it printed nothing)."""
        out: dict[str, Any] = json.loads(self.stdout) if self.stdout.strip() else {}
        return out

    @property
    def blocked(self) -> bool:
        """Whether the host is told to keep the agent working."""
        return self.answer.get("decision") == "block"


def payload(event: str, session: str, cwd: Path, **fields: Any) -> dict[str, Any]:
    """A hook payload shaped as Claude Code 2.x sends it."""
    base: dict[str, Any] = {
        "session_id": session,
        "transcript_path": str(cwd / ".transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": event,
    }
    if event in ("Stop", "SubagentStop"):
        base["stop_hook_active"] = False
    return {**base, **fields}


def run_hook(
    data: dict[str, Any] | str,
    state_dir: Path,
    host: str = "claude-code",
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> HookRun:
    """Run ``donegate hook HOST`` as the host would: the payload on stdin, a fresh process.

    ``env`` adds to (or replaces in) this process's environment, as a host's shell would.
    """
    text = data if isinstance(data, str) else json.dumps(data)
    env = {**os.environ, **(env or {}), "DONEGATE_STATE_DIR": str(state_dir)}
    result = subprocess.run(
        [sys.executable, "-m", "donegate", "hook", host],
        input=text,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )
    return HookRun(result.returncode, result.stdout, result.stderr)
