"""A host's settings written so that donegate's hooks no longer run: judged by what they say.

Each host reads, from the project, settings that decide which hooks it runs, and each has a
switch that takes them all away (each seen working in the real program; see
``tests/session/test_hooks_off.py``):

=================================  ====================================================
Claude Code                        ``.claude/settings.json``, ``.claude/settings.local.json``:
                                   ``disableAllHooks``
Codex CLI (0.171)                  ``.codex/config.toml``: ``[features] hooks`` (or its old name
                                   ``codex_hooks``) not true; the hooks in ``.codex/hooks.json``
Gemini CLI (0.61)                  ``.gemini/settings.json``: ``hooksConfig.enabled`` not true, a
                                   hook's command in ``hooksConfig.disabled``
Copilot CLI (1.0.102)              ``.github/copilot/settings.json`` and ``settings.local.json``:
                                   ``disableAllHooks``, ``disabledHooks`` (content hashes); it
                                   reads Claude Code's two files too; ``.github/hooks/*.json``
Cursor                             ``.cursor/hooks.json``
=================================  ====================================================

The hosts write these files themselves (Claude Code's local settings when a person allows a
tool, Copilot CLI's when one picks a model, Gemini CLI's from its ``/hooks`` panel), and people
edit them, so a write is judged against the file's content before it. It takes the hooks away
when it:

1. turns on a switch of every hook that was off;
2. adds to a list of disabled hooks one of donegate's (Gemini CLI names a hook by its command),
   or any entry where donegate cannot tell whose hook a key names (Copilot CLI's hashes);
3. removes or rewrites a handler of donegate's (its command, event, matcher, time limit), the
   file deleted or left unreadable included.

A file the host cannot parse has no switch on (the host ignores it or will not start), but no
handler of donegate's either.
"""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from collections.abc import Callable

# donegate's hook command, as ``init`` writes it for any host (``... donegate hook HOST``).
_OURS = re.compile(r"\bdonegate\b.*\bhook\b")

Facts = frozenset[str]  # "off:<what the write did>" and "ours:<one of donegate's handlers>"


def watched(path: str) -> bool:
    """Whether ``path`` (relative to the workspace) is a host's hook settings."""
    return _reader(path) is not None


def reasons(path: str, before: str | None, after: str | None) -> list[str]:
    """What a write of ``path`` from ``before`` to ``after`` (None: absent) did to donegate's
    hooks, in words: none when it left them running."""
    read = _reader(path)
    if read is None:
        return []
    old, new = read(before), read(after)
    found = sorted(fact.removeprefix("off:") for fact in new - old if fact.startswith("off:"))
    if any(fact.startswith("ours:") for fact in old - new):
        found.append("removes or rewrites donegate's hook")
    return found


def _reader(path: str) -> Callable[[str | None], Facts] | None:
    if path in _READERS:
        return _READERS[path]
    if fnmatch.fnmatchcase(path, ".github/hooks/*.json"):
        return _hooks_file
    return None


def _claude(text: str | None) -> Facts:
    data = _object(text)
    return _ours(data.get("hooks")) | _switch(data, "disableAllHooks")


def _copilot(text: str | None) -> Facts:
    data = _object(text)
    listed = data.get("disabledHooks")
    disabled = {f"off:lists {entry!r} in disabledHooks" for entry in _strings(listed)}
    return _claude(text) | disabled


def _gemini(text: str | None) -> Facts:
    data = _object(text)
    found = set(_ours(data.get("hooks")))
    config = data.get("hooksConfig", {})
    if not isinstance(config, dict):
        return frozenset({*found, f"off:sets hooksConfig to {config!r}"})
    if "enabled" in config and config["enabled"] is not True:
        found.add(f"off:sets hooksConfig.enabled to {config['enabled']!r}")
    for name in _strings(config.get("disabled")):
        if _OURS.search(name):  # a hook's name is its command, unless it has a name of its own
            found.add(f"off:lists donegate's hook {name!r} in hooksConfig.disabled")
    return frozenset(found)


def _codex(text: str | None) -> Facts:
    try:
        data = tomllib.loads(text) if text is not None else {}
    except tomllib.TOMLDecodeError:
        return frozenset()  # Codex will not start with it
    tables = [("", data.get("features"))]
    profiles = data.get("profiles")
    for name, profile in profiles.items() if isinstance(profiles, dict) else ():
        if isinstance(profile, dict):  # read when the person starts Codex with --profile NAME
            tables.append((f"profiles.{name}.", profile.get("features")))
    found = set(_ours(data.get("hooks")))
    for where, features in tables:
        for key in ("hooks", "codex_hooks"):
            if isinstance(features, dict) and key in features and features[key] is not True:
                found.add(f"off:sets {where}features.{key} to {features[key]!r}")
    return frozenset(found)


def _hooks_file(text: str | None) -> Facts:
    return _ours(_object(text).get("hooks"))


def _switch(data: dict[str, object], key: str) -> Facts:
    value = data.get(key)
    return frozenset() if value in (None, False) else frozenset({f"off:sets {key}"})


def _ours(hooks: object) -> Facts:
    """donegate's handlers in a ``hooks`` table, each with its event and its group's matcher:
    ``{EVENT: [{"matcher": ..., "hooks": [handler]}]}``, or flat ``{EVENT: [handler]}``."""
    found: set[str] = set()
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, dict):
                continue
            handlers = group.get("hooks", [group])
            shared = {k: v for k, v in group.items() if k != "hooks"} if "hooks" in group else {}
            for handler in handlers if isinstance(handlers, list) else ():
                if isinstance(handler, dict) and _is_ours(handler):
                    found.add("ours:" + json.dumps([event, shared, handler], sort_keys=True))
    return frozenset(found)


def _is_ours(handler: dict[str, object]) -> bool:
    command = handler.get("command", handler.get("bash"))
    return isinstance(command, str) and bool(_OURS.search(command))


def _object(text: str | None) -> dict[str, object]:
    """A JSON object's text (comments allowed, as Gemini and Copilot CLI allow them); an empty
    one for anything else."""
    if text is None:
        return {}
    try:
        data = json.loads(_without_comments(text))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)


def _without_comments(text: str) -> str:
    return _COMMENT.sub(lambda m: m[0] if m[0].startswith('"') else "", text)


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


_READERS: dict[str, Callable[[str | None], Facts]] = {
    ".claude/settings.json": _claude,
    ".claude/settings.local.json": _claude,
    ".codex/config.toml": _codex,
    ".codex/hooks.json": _hooks_file,
    ".gemini/settings.json": _gemini,
    ".cursor/hooks.json": _hooks_file,
    ".github/copilot/settings.json": _copilot,
    ".github/copilot/settings.local.json": _copilot,
}
