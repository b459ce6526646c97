"""What keeps an agent's commands from writing outside its workspace: the host's own sandbox.

The agent's commands run as the same user as donegate, so whatever donegate keeps in that user's
files the agent can rewrite, unless an operating-system sandbox stops it. Whether one does is a
fact of the host's effective settings: :func:`confinement` reads them (the few small files each
host layers: user, project, local, managed) and names what confines the agent, or returns None
when nothing is known to. It is read at every stop and by ``doctor``; ``init`` is the other
side (:func:`confine_settings`, :func:`confine_codex`), asking the host for its sandbox.

A sandbox that may fall back to running a command unsandboxed, or that can write where donegate
keeps its state, confines nothing that matters here: both read as None. What the host's command
line overrides (``codex --sandbox danger-full-access``) is in no file, and so not seen.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.record import Record

TYPE_CHECKING = False  # not typing's: a stop reads this module, and typing costs it 3 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


class Sandbox(Record):
    """A host's sandbox as its settings configure it: its name, where it lets commands write."""

    text: str
    writable: tuple[Path, ...]
    denied: tuple[Path, ...] = ()

    def reaches(self, place: Path) -> bool:
        """Whether a confined command may still write ``place``."""
        inside = [w for w in self.writable if _under(place, w)]
        return bool(inside) and not any(_under(place, d) for d in self.denied)


def confinement(
    host: str, root: Path, env: Mapping[str, str] | None = None, state_dir: Path | None = None
) -> str | None:
    """What confines ``host``'s agent in the workspace ``root``; None when nothing is known to.

    ``state_dir``: donegate's state; a sandbox that lets the agent write there is no confinement.
    """
    sandbox = sandbox_of(host, root, os.environ if env is None else env)
    if sandbox is None or (state_dir is not None and sandbox.reaches(state_dir)):
        return None
    return sandbox.text


def sandbox_of(host: str, root: Path, env: Mapping[str, str]) -> Sandbox | None:
    """The sandbox ``host``'s effective settings configure for ``root``, if any."""
    reader = READERS.get(host)
    try:
        return reader(root, env) if reader is not None else None
    except (OSError, ValueError):  # a settings file that cannot be read confines nothing known
        return None


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def _tmp(env: Mapping[str, str]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys([Path("/tmp"), Path(env.get("TMPDIR") or "/tmp")]))


def _under(place: Path, top: Path) -> bool:
    return os.path.realpath(place).startswith(os.path.realpath(top).rstrip("/") + "/") or (
        os.path.realpath(place) == os.path.realpath(top)
    )


def _json(path: Path) -> dict[str, Any]:
    """A JSON settings file; {} when it is absent, raise ValueError when it is not JSON."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    data = json.loads(text or "{}")
    return data if isinstance(data, dict) else {}


def _toml(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def _table(data: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        value = data.get(key)
        if not isinstance(value, dict):
            return {}
        data = value
    return dict(data)


def _paths(values: object, root: Path, home: Path) -> tuple[Path, ...]:
    if not isinstance(values, list):
        return ()
    found = []
    for value in values:
        if isinstance(value, str) and value:
            text = "/" + value.lstrip("/") if value.startswith("//") else value
            path = home / text[2:] if text.startswith("~/") else Path(text)
            found.append(path if path.is_absolute() else root / path)
    return tuple(found)


# ---- Claude Code: sandbox.* in the merged settings; permissions.deny for the file tools ------

CLAUDE_MANAGED = Path("/etc/claude-code/managed-settings.json")


def claude_layers(root: Path, env: Mapping[str, str]) -> list[Path]:
    """Claude Code's settings files, lowest precedence first."""
    user = Path(env.get("CLAUDE_CONFIG_DIR") or _home(env) / ".claude")
    return [
        user / "settings.json",
        root / ".claude" / "settings.json",
        root / ".claude" / "settings.local.json",
        CLAUDE_MANAGED,
    ]


def _claude(root: Path, env: Mapping[str, str]) -> Sandbox | None:
    merged: dict[str, Any] = {}
    allow_write: list[Any] = []
    for layer in claude_layers(root, env):
        sandbox = _table(_json(layer), "sandbox")
        allow_write.extend(_table(sandbox, "filesystem").get("allowWrite") or [])
        merged.update(sandbox)  # a scalar set in a higher layer wins; the lists add up
    if not (
        merged.get("enabled") is True
        and merged.get("failIfUnavailable") is True
        and merged.get("allowUnsandboxedCommands") is False
    ):
        return None
    home = _home(env)
    writable = (root, *_claude_tmp(env), *_paths(allow_write, root, home))
    writable += tuple(home / place for place in CLAUDE_HOME_WRITABLE)
    return Sandbox("claude-code sandbox, no unsandboxed fallback", writable)


# Where 2.1.197's box lets a command write besides the working directory and allowWrite (its
# bwrap command, and the list in its code): its temporary folder, claude-<uid> in
# $CLAUDE_CODE_TMPDIR, else in $TMPDIR, else /tmp (all of /tmp is counted: another version may
# give more of it); /tmp/claude; and these two of the home, when they exist.
CLAUDE_HOME_WRITABLE = (".claude/debug", ".npm/_logs")


def _claude_tmp(env: Mapping[str, str]) -> tuple[Path, ...]:
    own = [env.get(name) for name in ("CLAUDE_CODE_TMPDIR", "CLAUDE_TMPDIR")]
    return tuple(dict.fromkeys([*_tmp(env), *(Path(p) for p in own if p)]))


# ---- Codex: sandbox_mode of the user's layer and, in a trusted project, the project's ---------

SANDBOX_MODES = ("read-only", "workspace-write")


def codex_home(env: Mapping[str, str]) -> Path:
    """Where Codex keeps its configuration and its trust: ``$CODEX_HOME``, else ``~/.codex``."""
    return Path(env.get("CODEX_HOME") or _home(env) / ".codex")


def codex_trusts_project(user: Mapping[str, Any], root: Path) -> bool:
    """Whether the user's Codex configuration trusts the project at ``root`` (or above it)."""
    projects = _table(user, "projects")
    here = Path(os.path.realpath(root))
    for place in (root, here, *here.parents):
        entry = projects.get(str(place))
        if isinstance(entry, dict) and "trust_level" in entry:
            return bool(entry["trust_level"] == "trusted")
    return False


def _codex(root: Path, env: Mapping[str, str]) -> Sandbox | None:
    user = _toml(codex_home(env) / "config.toml")
    # An untrusted project's .codex/config.toml is not loaded: only the user's layer counts.
    layers = [user]
    if codex_trusts_project(user, root):
        layers.append(_toml(root / ".codex" / "config.toml"))
    mode: object = None
    options: dict[str, Any] = {}
    for layer in layers:
        profile = _table(layer, "profiles", str(layer.get("profile", "")))
        mode = profile.get("sandbox_mode", layer.get("sandbox_mode", mode))
        options.update(_table(layer, "sandbox_workspace_write"))
    if mode not in SANDBOX_MODES:
        return None
    if mode == "read-only":
        return Sandbox("codex sandbox read-only", ())
    return Sandbox("codex sandbox workspace-write", _codex_writable(root, env, options))


def _codex_writable(
    root: Path, env: Mapping[str, str], options: Mapping[str, Any]
) -> tuple[Path, ...]:
    extra = _paths(options.get("writable_roots"), root, _home(env))
    tmp = [] if options.get("exclude_slash_tmp") is True else [Path("/tmp")]
    if options.get("exclude_tmpdir_env_var") is not True and env.get("TMPDIR"):
        tmp.append(Path(env["TMPDIR"]))
    return (root, *extra, *tmp)


# ---- Gemini CLI: security.toolSandboxing, the per-tool sandbox (the whole-CLI one would run
# donegate's hooks inside its container too) --------------------------------------------------


def gemini_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("GEMINI_CLI_HOME") or _home(env)) / ".gemini"


def gemini_trusts(root: Path, env: Mapping[str, str]) -> bool | None:
    """Gemini CLI's trust of the folder ``root``: True, False, or None when no rule says.

    As Gemini CLI 0.61 decides it: the environment first, folder trust off in the user's
    settings, then the longest rule of ``trustedFolders.json`` that holds ``root``.
    """
    forced = env.get("GEMINI_CLI_TRUST_WORKSPACE")
    if env.get("GEMINI_RESTRICTED_MODE") == "true" or forced == "false":
        return False
    user = _json(gemini_dir(env) / "settings.json")
    if forced == "true" or _table(user, "security", "folderTrust").get("enabled") is False:
        return True
    rules_file = (
        env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or gemini_dir(env) / "trustedFolders.json"
    )
    best, verdict = -1, None
    for rule, level in _json(Path(rules_file)).items():
        top = Path(rule).parent if level == "TRUST_PARENT" else Path(rule)
        if _under(root, top) and len(rule) > best and level in GEMINI_LEVELS:
            best, verdict = len(rule), level != "DO_NOT_TRUST"
    return verdict


GEMINI_LEVELS = ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST")


def _gemini(root: Path, env: Mapping[str, str]) -> Sandbox | None:
    system = env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or "/etc/gemini-cli/settings.json"
    layers = [_json(gemini_dir(env) / "settings.json")]
    if gemini_trusts(root, env):  # an untrusted folder's settings are not loaded
        layers.append(_json(root / ".gemini" / "settings.json"))
    layers.append(_json(Path(system)))
    on: object = None
    allowed: list[Any] = []
    for layer in layers:
        on = _table(layer, "security").get("toolSandboxing", on)
        allowed.extend(_table(layer, "tools").get("sandboxAllowedPaths") or [])
    if on is not True:
        return None
    writable = (root, gemini_dir(env) / "tmp", *_paths(allowed, root, _home(env)))
    return Sandbox("gemini-cli tool sandbox", writable)


# ---- Copilot CLI: sandbox.enabled in the user's settings; its default policy lets commands reach
# the user's profile, so only a policy that denies donegate's state keeps the agent out ---------


def copilot_home(env: Mapping[str, str]) -> Path:
    return Path(env.get("COPILOT_HOME") or _home(env) / ".copilot")


def _copilot(root: Path, env: Mapping[str, str]) -> Sandbox | None:
    sandbox = _table(_json(copilot_home(env) / "settings.json"), "sandbox")
    if sandbox.get("enabled") is not True:
        return None
    policy = _table(sandbox, "userPolicy", "filesystem")
    home = _home(env)
    writable = (root, home, *_tmp(env), *_paths(policy.get("readwritePaths"), root, home))
    denied = _paths(policy.get("deniedPaths"), root, home)
    return Sandbox("copilot sandbox", writable, denied)


# ---- init's side: what each host's settings need for the agent to be confined -----------------

CLAUDE_SANDBOX = {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False}
GEMINI_SECURITY = {"toolSandboxing": True}
CODEX_MODE = 'sandbox_mode = "workspace-write"'
_WANTED: dict[str, tuple[str, dict[str, bool]]] = {
    "claude-code": ("sandbox", CLAUDE_SANDBOX),
    "gemini-cli": ("security", GEMINI_SECURITY),
}


def claude_denials(state_dir: Path, env: Mapping[str, str]) -> tuple[str, ...]:
    """Permission rules that keep Claude Code's file tools, which no sandbox wraps, out of
    donegate's state and out of the user's Claude Code settings (where the sandbox is set); and
    keep donegate's signing key from being read (:func:`_signing_keys`)."""
    home = _home(env)
    places = [state_dir, Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude")]
    rules: list[str] = []
    for place in places:
        rules.extend(f"{tool}({_spelled(place, home)}/**)" for tool in ("Edit", "Write"))
    rules.extend(f"Read({_spelled(key, home)})" for key in _signing_keys(state_dir, env))
    return tuple(rules)


def claude_readable_keys(root: Path, env: Mapping[str, str], state_dir: Path) -> tuple[str, ...]:
    """The ``Read(...)`` rules of :func:`claude_denials` for the signing key that no layer of
    Claude Code's settings holds: the agent's commands can read what they name."""
    held: set[str] = set()
    for layer in claude_layers(root, env):
        deny = _table(_json(layer), "permissions").get("deny")
        if isinstance(deny, list):
            held.update(rule for rule in deny if isinstance(rule, str))
    wanted = [r for r in claude_denials(state_dir, env) if r.startswith("Read(")]
    return tuple(r for r in wanted if r not in held)


def _spelled(place: Path, home: Path) -> str:
    """A path as Claude Code's permission rules spell it: ``~/`` in the home, ``//`` elsewhere."""
    where = Path(os.path.abspath(place))
    return f"~/{where.relative_to(home)}" if _under(where, home) else f"/{where}"


def _signing_keys(state_dir: Path, env: Mapping[str, str]) -> list[Path]:
    """donegate's signing key: with it the agent would sign evidence of its own making as
    donegate's. Claude Code's sandbox reads the whole machine but what a ``Read(...)`` rule denies
    (the rule also keeps the Read tool out); it hides a file that exists when a command starts,
    and the rest of the state stays readable and read-only: a call of donegate from inside the
    box still sees it, fails to write it, and says so."""
    try:
        from donegate.signing.keys import KEY_FILE
    except ImportError:  # no signing here (the sign extra): no key is ever made
        return []
    configured = env.get("DONEGATE_SIGNING_KEY")
    return [state_dir / KEY_FILE, *([Path(configured)] if configured else [])]


def confine_settings(host: str, settings: dict[str, Any], path: Path) -> None:
    """Turn on ``host``'s sandbox in its JSON ``settings``, keeping every other key."""
    key, wanted = _WANTED.get(host, ("", {}))
    if not wanted:
        return
    table = settings.setdefault(key, {})
    if not isinstance(table, dict):
        raise InvalidInput(f"{path}: {key!r} is not an object; not touching it", path=key)
    table.update(wanted)


def unconfine_settings(host: str, settings: dict[str, Any]) -> None:
    """Take out the sandbox keys :func:`confine_settings` set, where they still hold its values.

    A person who had set the very same values before ``init`` loses them: the file does not
    say who wrote them, and ``--uninstall`` takes out exactly what ``init`` writes.
    """
    key, wanted = _WANTED.get(host, ("", {}))
    table = settings.get(key)
    if not wanted or not isinstance(table, dict):
        return
    for name, value in wanted.items():
        if table.get(name) == value:
            del table[name]
    if not table:
        del settings[key]


def confine_codex(root: Path) -> Path:
    """Set ``sandbox_mode = "workspace-write"`` in the project's ``.codex/config.toml``.

    The file is edited as text, keeping the rest as the user wrote it: a top-level key goes
    before the first table, and only a ``sandbox_mode`` already at the top level is replaced.
    """
    import tomllib

    path = root / ".codex" / "config.toml"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        mode = tomllib.loads(text).get("sandbox_mode")
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"cannot read {path}: {exc}; fix or move it, then run again") from None
    if mode in SANDBOX_MODES:
        return path
    lines = text.splitlines(keepends=True)
    tables = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[")), len(lines))
    top = [line for line in lines[:tables] if not re.match(r"\s*sandbox_mode\s*=", line)]
    new = "".join([CODEX_MODE + "\n", *top, *lines[tables:]])
    try:
        same = tomllib.loads(new) == {**tomllib.loads(text), "sandbox_mode": "workspace-write"}
    except tomllib.TOMLDecodeError:
        same = False
    if not same:
        raise InvalidInput(f"{path}: could not add {CODEX_MODE} safely; add it at its top")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new, encoding="utf-8")
    return path


# Cursor keeps its sandbox in the editor's own settings, in no file donegate can read or write.
READERS: dict[str, Callable[[Path, Mapping[str, str]], Sandbox | None]] = {
    "claude-code": _claude,
    "codex": _codex,
    "gemini-cli": _gemini,
    "copilot": _copilot,
}
