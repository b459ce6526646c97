"""The hosts' settings judged alone: each switch, list and handler, as the host reads it."""

from __future__ import annotations

import json

import pytest

from donegate.session.hooksoff import reasons, watched

OURS = "/venv/bin/python -E -P -m donegate hook gemini-cli || true"
GEMINI = {"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": OURS}]}]}}


def test_the_hosts_hook_settings_are_watched_and_nothing_else() -> None:
    for path in (".codex/config.toml", ".github/hooks/lint.json", ".claude/settings.local.json"):
        assert watched(path)
    assert not watched("src/.codex/config.toml")
    assert not watched("package.json")


def test_gemini_settings_with_comments_are_read_as_gemini_reads_them() -> None:
    after = '{\n  // donegate off, quietly\n  "hooksConfig": {"enabled": false}, "url": "a//b"\n}'
    assert reasons(".gemini/settings.json", None, after) == ["sets hooksConfig.enabled to False"]


def test_a_switch_already_off_before_the_write_is_not_the_writes_doing() -> None:
    off = json.dumps({"disableAllHooks": True})
    more = json.dumps({"disableAllHooks": True, "permissions": {"allow": ["Bash(ls)"]}})
    assert reasons(".claude/settings.local.json", off, more) == []
    assert reasons(".claude/settings.local.json", None, off) == ["sets disableAllHooks"]


def test_codex_features_in_a_profile_count_and_an_unparsable_config_has_none() -> None:
    profile = 'profile = "fast"\n[profiles.fast.features]\ncodex_hooks = false\n'
    said = reasons(".codex/config.toml", "", profile)
    assert said == ["sets profiles.fast.features.codex_hooks to False"]
    assert reasons(".codex/config.toml", "", "[features\nhooks = false") == []


@pytest.mark.parametrize(
    "after",
    [
        None,  # the file deleted
        "not json",  # left unreadable: the host reads no hook from it
        json.dumps({"hooks": {}}),
        json.dumps(
            {"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "true"}]}]}}
        ),
        json.dumps(
            {
                "hooks": {
                    "AfterAgent": [{"hooks": [{"command": OURS, "type": "command", "timeout": 1}]}]
                }
            }
        ),
    ],
    ids=["deleted", "unreadable", "hooks-emptied", "command-replaced", "timeout-cut"],
)
def test_donegates_handler_removed_or_rewritten(after: str | None) -> None:
    said = reasons(".gemini/settings.json", json.dumps(GEMINI), after)
    assert said == ["removes or rewrites donegate's hook"]


def test_donegates_handler_moved_or_reformatted_is_left_alone() -> None:
    moved = {"hooks": {"AfterAgent": [{"hooks": [{"command": "./lint.sh", "type": "command"}]},
                                      *GEMINI["hooks"]["AfterAgent"]]}}  # fmt: skip
    assert reasons(".gemini/settings.json", json.dumps(GEMINI), json.dumps(moved, indent=4)) == []


def test_copilot_disabled_hooks_are_content_hashes_so_any_new_one_counts() -> None:
    before = json.dumps({"disabledHooks": ["aa"]})
    after = json.dumps({"disabledHooks": ["aa", "bb"]})
    assert reasons(".github/copilot/settings.json", before, after) == [
        "lists 'bb' in disabledHooks"
    ]
