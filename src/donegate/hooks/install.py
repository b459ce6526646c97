"""Installing donegate's hooks into a host's settings, and taking exactly them out again.

The installer owns only its own entries: it recognises them by their command, replaces them in
place when run again (idempotent), keeps every hook and setting the user had, and ``uninstall``
removes exactly what it added.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from donegate import statedir
from donegate.errors import InvalidInput
from donegate.hooks import confinement

# Tools whose calls may write files; the PostToolUse journal listens to these.
WRITE_TOOLS = "Write|Edit|MultiEdit|NotebookEdit|Bash|apply_patch"


@dataclass(frozen=True, slots=True)
class HostSettings:
    """Where a host reads its hooks and which events donegate listens to."""

    host: str
    settings: str
    events: dict[str, str | None]  # event -> matcher (None: no matcher)
    stop_events: tuple[str, ...]
    # Twice the starter's test timeout: a host that kills the hook first records nothing.
    stop_timeout_s: int = 1800
    other_timeout_s: int = 30
    timeout_unit: int = 1  # what one second is in the host's own unit (Gemini CLI: ms)
    # Cursor's hooks.json lists {"command": ...} entries per event, with no matcher groups.
    flat: bool = False
    # Permission rules that deny the agent's shell `donegate accept`, where the host has them.
    deny: tuple[str, ...] = ()
    # Gemini CLI turns any exit status but 0 and 1 that prints text into a deny whose text is the
    # agent's next prompt: a missing executable (127) would trap the agent. Never exit otherwise.
    never_fail: bool = False
    # Copilot's entries name the command `bash` and the time limit `timeoutSec`, and its payloads
    # need not name their event: each entry says it in `env`.
    command_key: str = "command"
    timeout_key: str | None = None
    event_env: str | None = None
    loop_limit: int | None = None


HOSTS: dict[str, HostSettings] = {
    "claude-code": HostSettings(
        host="claude-code",
        settings=".claude/settings.json",
        events={
            "SessionStart": None,
            "UserPromptSubmit": None,
            "PostToolUse": WRITE_TOOLS,
            "PostToolUseFailure": WRITE_TOOLS,
            "Stop": None,
            "SubagentStop": None,
        },
        stop_events=("Stop", "SubagentStop"),
        deny=("Bash(donegate accept:*)", "Bash(*donegate accept*)"),
    ),
    "codex": HostSettings(
        host="codex",
        settings=".codex/hooks.json",
        events={
            "SessionStart": None,
            "UserPromptSubmit": None,
            "PostToolUse": WRITE_TOOLS,
            "Stop": None,
            # A subagent started with spawn_agent ends with SubagentStop, not Stop: its writes
            # are judged at its own end, as Claude Code's are.
            "SubagentStop": None,
        },
        stop_events=("Stop", "SubagentStop"),
    ),
    "gemini-cli": HostSettings(
        host="gemini-cli",
        settings=".gemini/settings.json",
        events={
            "SessionStart": None,
            "BeforeAgent": None,
            "AfterTool": "write_file|replace|run_shell_command",
            "AfterAgent": None,
        },
        stop_events=("AfterAgent",),
        timeout_unit=1000,
        never_fail=True,
    ),
    "cursor": HostSettings(
        host="cursor",
        settings=".cursor/hooks.json",
        events={
            "sessionStart": None,
            "beforeSubmitPrompt": None,
            "afterFileEdit": None,
            "stop": None,
        },
        stop_events=("stop",),
        flat=True,
        timeout_key="timeout",
        loop_limit=10,
    ),
    "copilot": HostSettings(
        host="copilot",
        settings=".github/hooks/donegate.json",
        events={
            "sessionStart": None,
            "userPromptSubmitted": None,
            "postToolUse": None,
            "agentStop": None,
            "subagentStop": None,
        },
        stop_events=("agentStop", "subagentStop"),
        flat=True,
        command_key="bash",
        timeout_key="timeoutSec",
        event_env="DONEGATE_HOOK_EVENT",
    ),
}
# Cursor ends a chain of follow-ups itself after loop_limit (10, written above); donegate's own
# cap (max_blocks_in_a_row, 6 by default) must come first, so that the end is on the record.


def hook_command(host: str) -> str:
    """The command the host runs: this installation's donegate, by absolute path, isolated.

    Its interpreter runs with ``-E -P``: no ``PYTHON*`` variable of the host's environment
    (a ``PYTHONPATH=src`` set for the project would put the agent's tree before donegate's own
    packages) and not the working directory, the agent's tree, first on the import path.
    Run through ``uvx`` or ``pipx run``, this donegate lives in a throw-away environment that the
    tool may delete at any time: the hook then names the same runner and this exact version, a
    command that stays valid (``uvx --from donegate==X donegate hook HOST``).
    """
    runner = ephemeral_runner(sys.prefix)
    if runner is not None:
        return f"{runner} hook {host}"
    return f"{shlex.quote(sys.executable)} {SAFE_MODULE_RUN} hook {host}"


# ``python -m`` puts the working directory, the agent's tree, first on the import path: a
# ``json.py`` planted there would run inside the judge. ``-P`` (Python 3.11) leaves it off, and
# ``-E`` leaves out ``PYTHONPATH`` and the other ``PYTHON*`` variables of the host's shell.
SAFE_MODULE_RUN = "-E -P -m donegate"


def ephemeral_runner(prefix: str) -> str | None:
    """The stable command for a donegate running from ``uvx``/``pipx run``'s cache, if it is."""
    from donegate.__about__ import __version__

    parts = Path(prefix).parts
    if "uv" in parts and any(p.startswith("archive-v") or p == "tools" for p in parts):
        if "tools" in parts:  # `uv tool install`: a real, lasting installation
            return None
        return f"uvx --from donegate=={__version__} donegate"
    if "pipx" in parts and ".cache" in parts:
        return f"pipx run --spec donegate=={__version__} donegate"
    return None


def is_ours(command: object, host: str) -> bool:
    """Whether a hook command is one this installer wrote for ``host``."""
    return isinstance(command, str) and bool(
        re.search(rf"\bdonegate\b.*\bhook\s+{re.escape(host)}(\s|$)", command)
    )


def install(root: Path, host: str, command: str | None = None) -> Path:
    """Add (or refresh) donegate's hooks in ``root``'s settings for ``host``; return the file."""
    spec = HOSTS[host]
    path = root / spec.settings
    settings = _read(path)
    hooks = _without_ours(settings.get("hooks", {}), host, path)
    cmd = command or hook_command(host)
    if spec.never_fail:
        cmd = f"{cmd} || true"
    for event, matcher in spec.events.items():
        entry = _flat_entry(spec, event, cmd) if spec.flat else _group(spec, event, matcher, cmd)
        hooks.setdefault(event, []).append(entry)
    if spec.flat:
        settings.setdefault("version", 1)
    settings["hooks"] = hooks
    _add_denials(settings, spec.deny + _confining_denials(host), path)
    confinement.confine_settings(host, settings, path)
    _write(path, settings)
    if host == "codex":
        confinement.confine_codex(root)
    if host == "gemini-cli":
        _make_empty(root, GEMINI_SANDBOX_FILES)
    return path


# Gemini CLI's tool sandbox on Linux (0.61; `security.toolSandboxing`, turned on above) creates
# these empty in the workspace at its first sandboxed command when they are missing: the host's
# files, which a stop would count as the agent's writes (.geminiignore as source, so a turn that
# only looked would run the checks, and be sent back by a red suite it never touched). Made at
# init, they are in the baseline. Left by --uninstall: empty, they change nothing.
GEMINI_SANDBOX_FILES = (".gitignore", ".geminiignore")


def _make_empty(root: Path, names: tuple[str, ...]) -> None:
    for name in names:
        path = root / name
        if not path.exists() and not path.is_symlink():
            path.touch()


def _confining_denials(host: str) -> tuple[str, ...]:
    # Claude Code's file tools run outside its sandbox: permission rules keep them out.
    if host != "claude-code":
        return ()
    return confinement.claude_denials(statedir.resolve(), os.environ)


def _add_denials(settings: dict[str, Any], rules: tuple[str, ...], path: Path) -> None:
    """Accepting an agent's writes is a person's act: deny the agent's shell the command."""
    if not rules:
        return
    permissions = settings.setdefault("permissions", {})
    if not isinstance(permissions, dict) or not isinstance(
        permissions.setdefault("deny", []), list
    ):
        raise InvalidInput(f"{path}: 'permissions' is not an object with a 'deny' list")
    deny = permissions["deny"]
    deny.extend(rule for rule in rules if rule not in deny)


def _remove_denials(settings: dict[str, Any], rules: tuple[str, ...]) -> None:
    permissions = settings.get("permissions")
    if (
        not rules
        or not isinstance(permissions, dict)
        or not isinstance(permissions.get("deny"), list)
    ):
        return
    permissions["deny"] = [rule for rule in permissions["deny"] if rule not in rules]
    if not permissions["deny"]:
        del permissions["deny"]
    if not permissions:
        del settings["permissions"]


def _group(spec: HostSettings, event: str, matcher: str | None, cmd: str) -> dict[str, Any]:
    seconds = spec.stop_timeout_s if event in spec.stop_events else spec.other_timeout_s
    handler = {"type": "command", "command": cmd, "timeout": seconds * spec.timeout_unit}
    group: dict[str, Any] = {"hooks": [handler]}
    return {"matcher": matcher, **group} if matcher is not None else group


def _flat_entry(spec: HostSettings, event: str, cmd: str) -> dict[str, Any]:
    # Every entry carries its timeout: a host that kills a stop's checks first records nothing.
    stop = event in spec.stop_events
    entry: dict[str, Any] = {"type": "command"} if spec.command_key != "command" else {}
    entry[spec.command_key] = cmd
    if spec.timeout_key is not None:
        entry[spec.timeout_key] = spec.stop_timeout_s if stop else spec.other_timeout_s
    if spec.event_env is not None:
        entry["env"] = {spec.event_env: event}
    if stop and spec.loop_limit is not None:
        entry["loop_limit"] = spec.loop_limit
    return entry


def uninstall(root: Path, host: str) -> Path | None:
    """Remove exactly donegate's hooks for ``host``; return the file, or None if there was none."""
    path = root / HOSTS[host].settings
    if not path.exists():
        return None
    settings = _read(path)
    hooks = _without_ours(settings.get("hooks", {}), host, path)
    if hooks:
        settings["hooks"] = hooks
    else:
        settings.pop("hooks", None)
    _remove_denials(settings, HOSTS[host].deny + _confining_denials(host))
    confinement.unconfine_settings(host, settings)
    _write(path, settings)
    return path


def installed(root: Path, host: str) -> list[str]:
    """The events for which donegate's hook is installed in ``root``."""
    path = root / HOSTS[host].settings
    hooks = _read(path).get("hooks", {}) if path.exists() else {}
    return [event for event, groups in hooks.items() if any(_has_ours(g, host) for g in groups)]


def installed_commands(root: Path, host: str) -> list[str]:
    """The distinct commands of donegate's hooks installed in ``root`` for ``host``."""
    path = root / HOSTS[host].settings
    hooks = _read(path).get("hooks", {}) if path.exists() else {}
    found: list[str] = []
    for groups in hooks.values() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            handlers = group.get("hooks", [group]) if isinstance(group, dict) else []
            for handler in handlers if isinstance(handlers, list) else ():
                command = handler.get("command", handler.get("bash"))
                if is_ours(command, host) and command not in found:
                    found.append(command)
    return found


def _has_ours(group: dict[str, Any], host: str) -> bool:
    handlers = group.get("hooks", [group])  # a flat entry is its own handler
    return any(is_ours(h.get("command", h.get("bash")), host) for h in handlers)


def _without_ours(hooks: object, host: str, path: Path) -> dict[str, list[dict[str, Any]]]:
    if not isinstance(hooks, dict):
        raise InvalidInput(f"{path}: 'hooks' is not an object; not touching it", path="hooks")
    kept: dict[str, list[dict[str, Any]]] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise InvalidInput(f"{path}: hooks.{event} is not a list; not touching it")
        kept_groups = [g for g in (_strip_group(g, host) for g in groups) if g is not None]
        if kept_groups:
            kept[event] = kept_groups
    return kept


def _strip_group(group: Any, host: str) -> Any:
    if isinstance(group, dict) and "hooks" not in group:
        command = group.get("command", group.get("bash"))  # a flat entry (Copilot: "bash")
        return None if is_ours(command, host) else group
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return group  # not ours to judge: keep it exactly
    handlers = [
        h for h in group["hooks"] if not (isinstance(h, dict) and is_ours(h.get("command"), host))
    ]
    if not handlers:
        return None
    return {**group, "hooks": handlers}


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}; fix or move it, then run again") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; not touching it")
    return data


def _write(path: Path, settings: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".donegate-tmp")
    tmp.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
