"""A host's settings written to switch donegate's hooks off are the judge's business, for every
host donegate installs in: judged by what they say, since the hosts (and people) write the same
files for their own ends. Played through the real hook on a real project.

Each switch here was seen working in the real program (see ``docs`` of the hosts' research): Codex
CLI 0.171.0 lists no hook at all once the project's ``.codex/config.toml`` sets ``[features]
hooks = false`` (or its old name ``codex_hooks``); Gemini CLI 0.61.0 runs no ``AfterAgent`` of
donegate's with ``hooksConfig.enabled = false`` or donegate's command in ``hooksConfig.disabled``;
Copilot CLI 1.0.102 runs no hook with ``disableAllHooks`` in ``.github/copilot/settings.json``,
``.github/copilot/settings.local.json`` or ``.claude/settings.local.json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from donegate.demo import project
from tests.session.support import donegate, last, make_repo, prompt, start, stop

Edit = Callable[[Path], None]


def _json(path: str, change: Callable[[dict[str, object]], None]) -> Edit:
    """An edit of the JSON file ``path``: read (empty when absent), changed, written back."""

    def edit(repo: Path) -> None:
        file = repo / path
        data = json.loads(file.read_text()) if file.exists() else {}
        change(data)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(data, indent=2))

    return edit


def _append(path: str, text: str) -> Edit:
    def edit(repo: Path) -> None:
        file = repo / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text((file.read_text() if file.exists() else "") + text)

    return edit


def _set(key: str, value: object) -> Callable[[dict[str, object]], None]:
    def change(data: dict[str, object]) -> None:
        data[key] = value

    return change


def _gemini_disables_donegate(data: dict[str, object]) -> None:
    hooks = data["hooks"]
    assert isinstance(hooks, dict)
    command = hooks["AfterAgent"][0]["hooks"][0]["command"]
    data["hooksConfig"] = {"disabled": [command]}


def _codex_stop_rewritten(data: dict[str, object]) -> None:
    hooks = data["hooks"]
    assert isinstance(hooks, dict)
    hooks["Stop"][0]["hooks"][0]["command"] += " --quiet || true"


def _delete(path: str) -> Edit:
    def edit(repo: Path) -> None:
        (repo / path).unlink()

    return edit


def _ignored(path: str, then: Edit) -> Edit:
    """The person's .gitignore leaves ``path`` out (as people do with local settings)."""

    def edit(repo: Path) -> None:
        then(repo)

    edit.ignore = path  # type: ignore[attr-defined]
    return edit


OFF = "disableAllHooks"
# (installed host or None, the agent's edit): each must end not verified, told as hooks-off.
SWITCHED_OFF: dict[str, tuple[str | None, Edit]] = {
    "claude-local": (None, _json(".claude/settings.local.json", _set(OFF, True))),
    "claude-local-ignored-by-git": (
        None,
        _ignored(".claude/settings.local.json", _json(".claude/settings.local.json", _set(OFF, 1))),
    ),
    "codex-features-hooks": (
        "codex",
        _append(".codex/config.toml", "\n[features]\nhooks = false\n"),
    ),
    "codex-features-codex_hooks": (
        "codex",
        _append(".codex/config.toml", "features.codex_hooks = false\n"),
    ),
    "codex-stop-rewritten": ("codex", _json(".codex/hooks.json", _codex_stop_rewritten)),
    "gemini-hooks-disabled": (
        "gemini-cli",
        _json(".gemini/settings.json", _set("hooksConfig", {"enabled": False})),
    ),
    "gemini-donegate-disabled": (
        "gemini-cli",
        _json(".gemini/settings.json", _gemini_disables_donegate),
    ),
    "copilot-repo-settings": ("copilot", _json(".github/copilot/settings.json", _set(OFF, True))),
    "copilot-local-settings": (
        "copilot",
        _json(".github/copilot/settings.local.json", _set(OFF, True)),
    ),
    "copilot-disabled-hooks": (
        "copilot",
        _json(".github/copilot/settings.json", _set("disabledHooks", ["9f2c1e0b"])),
    ),
    "copilot-hooks-file-deleted": ("copilot", _delete(".github/hooks/donegate.json")),
}
# The hosts' own writes, and a person's kind: none of them takes donegate's hooks away.
LEFT_ON: dict[str, tuple[str | None, Edit]] = {
    "claude-local-a-tool-allowed": (
        None,
        _json(".claude/settings.local.json", _set("permissions", {"allow": ["Bash(pytest:*)"]})),
    ),
    "codex-a-model-chosen": ("codex", _append(".codex/config.toml", 'model = "gpt-5.5"\n')),
    "codex-hooks-on": ("codex", _append(".codex/config.toml", "\n[features]\nhooks = true\n")),
    "copilot-local-model": (
        "copilot",
        _json(".github/copilot/settings.local.json", _set("model", "gpt-5")),
    ),
}


def _stop_after(tmp_path: Path, host: str | None, edit: Edit) -> tuple[Path, object]:
    repo, state = make_repo(tmp_path), tmp_path / "state"
    if host is not None:  # the person installs donegate for the host, and commits
        done = donegate("init", host, cwd=repo, state=state)
        assert done.returncode == 0, done.stderr
    ignored = getattr(edit, "ignore", None)
    if ignored:
        (repo / ".gitignore").write_text(f"{ignored}\n")
    project.git(repo, "add", "-A")
    project.git(repo, "commit", "-qm", "gate", "--allow-empty")
    start(repo, state, "s1")
    prompt(repo, state, "s1")
    (repo / "zipcode.py").write_text(project.FIXED)  # the honest fix, beside the settings
    edit(repo)
    return state, stop(repo, state, "s1")


@pytest.mark.parametrize("case", sorted(SWITCHED_OFF))
def test_an_agents_write_that_switches_donegates_hooks_off_voids_the_stop(
    tmp_path: Path, case: str
) -> None:
    host, edit = SWITCHED_OFF[case]
    state, done = _stop_after(tmp_path, host, edit)
    assert last(state).verdict != "verified"
    assert done.blocked  # type: ignore[attr-defined]
    assert "[hooks-off]" in done.answer["reason"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", sorted(LEFT_ON))
def test_the_hosts_own_writes_to_the_same_files_leave_the_stop_verified(
    tmp_path: Path, case: str
) -> None:
    host, edit = LEFT_ON[case]
    state, done = _stop_after(tmp_path, host, edit)
    assert last(state).verdict == "verified", done.answer  # type: ignore[attr-defined]


def test_a_gemini_hook_of_the_persons_disabled_is_no_hooks_off(tmp_path: Path) -> None:
    # .gemini/settings.json is a judge file (a run after the agent wrote it does not count), but
    # disabling another hook there, as Gemini CLI's /hooks panel writes it, is not hooks-off.
    edit = _json(".gemini/settings.json", _set("hooksConfig", {"disabled": ["./lint.sh"]}))
    _, done = _stop_after(tmp_path, "gemini-cli", edit)
    assert "[hooks-off]" not in json.dumps(done.answer)  # type: ignore[attr-defined]
