"""Where Claude Code's box lets the agent's commands write, as donegate reads it: 2.1.197's
bubblewrap command and code open, besides the project and the temporary folder, ``~/.claude/debug``
and ``~/.npm/_logs`` (where they exist) and ``claude-<uid>`` in ``$CLAUDE_CODE_TMPDIR``. A state
directory there is reachable, so not confined (the real box, tried place by place, is in
``tests/hosts/test_claude_code_confined.py``)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from donegate.hooks.confinement import CLAUDE_SANDBOX, confinement

CONFINED = "claude-code sandbox, no unsandboxed fallback"


@pytest.fixture
def base() -> Iterator[Path]:
    """A folder outside /tmp, all of which donegate counts as the box's."""
    where = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="donegate-roots-"))
    yield where
    shutil.rmtree(where, ignore_errors=True)


def sandboxed(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps({"sandbox": CLAUDE_SANDBOX}))
    return repo


@pytest.mark.parametrize(
    ("state", "more"),
    [
        ("home/.claude/debug/donegate", {}),
        ("home/.npm/_logs/donegate", {}),
        ("claude-tmp/claude-0/donegate", {"CLAUDE_CODE_TMPDIR": "claude-tmp"}),
    ],
)
def test_a_state_directory_where_the_box_writes_is_not_confined(
    base: Path, state: str, more: dict[str, str]
) -> None:
    repo = sandboxed(base)
    env = {"HOME": str(base / "home"), **{k: str(base / v) for k, v in more.items()}}
    default = base / "home/.local/state/donegate"
    assert confinement("claude-code", repo, env, default) == CONFINED
    assert confinement("claude-code", repo, env, base / state) is None
