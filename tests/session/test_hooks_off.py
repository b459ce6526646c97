"""A host's local settings that switch every hook off are the judge's business: Claude Code
writes .claude/settings.local.json itself when a person allows a tool, so the file is judged by
what it says. Played through the real hook on a real project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from donegate.demo import project
from tests.session.support import last, make_repo, prompt, start, stop


@pytest.mark.parametrize(
    ("settings", "verified"),
    [
        ({"disableAllHooks": True}, False),
        ({"permissions": {"allow": ["Bash(pytest:*)"]}}, True),  # what the host writes itself
    ],
    ids=["hooks-off", "a-tool-allowed"],
)
def test_local_settings_that_switch_hooks_off_void_the_stop(
    tmp_path: Path, settings: dict[str, object], verified: bool
) -> None:
    repo, state = make_repo(tmp_path), tmp_path / "state"
    start(repo, state, "s1")
    prompt(repo, state, "s1")
    (repo / "zipcode.py").write_text(project.FIXED)
    local = repo / ".claude" / "settings.local.json"
    local.parent.mkdir(exist_ok=True)
    local.write_text(json.dumps(settings))
    done = stop(repo, state, "s1")
    assert (last(state).verdict == "verified") is verified
    if not verified:
        assert done.blocked
        assert "[hooks-off]" in done.answer["reason"]
