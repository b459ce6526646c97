"""Claude Code's hook contract, and VS Code's reading of the same settings file.

Input: JSON on stdin with ``session_id``, ``cwd``, ``hook_event_name`` and per-event fields.
Output at ``Stop``/``SubagentStop``: exit 0 and ``{"decision": "block", "reason": ...}`` keeps the
agent working; ``{"systemMessage": ...}`` shows a note to the person. Exit 2 also blocks, but
plugin Stop hooks that exit 2 have been seen to halt instead, so donegate always answers in JSON.

VS Code's agent (Copilot Chat) runs the hooks of ``.claude/settings.json`` too, but its Stop
reader honours only ``hookSpecificOutput.decision``/``reason`` (microsoft/vscode-copilot-chat,
``toolCallingLoop.ts``), while Claude Code documents only ``additionalContext`` there. No one
answer serves both, so the payload tells them apart: VS Code's carries a ``timestamp`` and
neither ``permission_mode`` nor ``last_assistant_message``, which Claude Code's Stop always
carries. Such an event is the host ``vscode``, and is answered in VS Code's terms: a veto is
never recorded for a block the host would ignore.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.jsontext import clean_text
from donegate.record import Record
from donegate.session.event import EventKind, HookAnswer, HookEvent, HostOutput, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "claude-code"
VSCODE = "vscode"

STOP_EVENTS = ("Stop", "SubagentStop")
EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", *STOP_EVENTS)


class Dialect(Record):
    """How one host of this family names its events, tools and fields."""

    kinds: Mapping[str, EventKind]
    file_tools: Mapping[str, str]  # tool -> the input key naming the file it wrote
    shell_tools: frozenset[str]
    message_key: str  # the agent's final words at a stop
    failure_events: frozenset[str] = frozenset()


CLAUDE = Dialect(
    kinds={
        "SessionStart": "baseline",
        "UserPromptSubmit": "baseline",
        "PostToolUse": "tool_use",
        "PostToolUseFailure": "tool_use",
        "Stop": "stop",
        "SubagentStop": "stop",
    },
    file_tools={
        "Write": "file_path",
        "Edit": "file_path",
        "MultiEdit": "file_path",
        "NotebookEdit": "notebook_path",
    },
    shell_tools=frozenset({"Bash"}),
    message_key="last_assistant_message",
    failure_events=frozenset({"PostToolUseFailure"}),
)


def parse(
    payload: Any,
    *,
    host: str = NAME,
    fallback_cwd: Path | None = None,
    dialect: Dialect = CLAUDE,
) -> HookEvent:
    """A Claude Code-shaped payload as a :class:`HookEvent`; raise InvalidInput when unusable."""
    if not isinstance(payload, dict):
        raise InvalidInput(f"hook payload is a JSON object, got {type(payload).__name__}")
    name = _text(payload, "hook_event_name") or ("Stop" if "stop_hook_active" in payload else "")
    session = _text(payload, "session_id")
    if not session:
        raise InvalidInput("hook payload has no session_id", path="session_id")
    cwd = _text(payload, "cwd")
    _check_clean(session, "session_id")
    _check_clean(cwd, "cwd")
    if host == NAME and _from_vscode(payload):
        host = VSCODE
    return HookEvent(
        host=host,
        host_event=name,
        kind=dialect.kinds.get(name, "ignored"),
        session_id=session,
        cwd=Path(cwd) if cwd else (fallback_cwd or Path.cwd()),
        continuing=payload.get("stop_hook_active") is True,
        background_tasks=_count(payload.get("background_tasks")),
        # A subagent's stop (SubagentStop, or a Stop that names an agent_id) is not the session's.
        subagent=_subagent(payload, name),
        tool_use=_tool_use(payload, dialect, failed=name in dialect.failure_events),
        last_message=_text(payload, dialect.message_key),
        prompt=_text(payload, "prompt"),
    )


def _check_clean(value: str | None, key: str) -> None:
    # Stored in SQLite and passed to the file system: a NUL or a lone surrogate cannot be.
    if value is not None and not clean_text(value):
        raise InvalidInput(f"{key} holds a NUL or a lone surrogate: {value[:80]!r}", path=key)


def _from_vscode(payload: dict[str, Any]) -> bool:
    return (
        "timestamp" in payload
        and "permission_mode" not in payload
        and "last_assistant_message" not in payload
    )


def _subagent(payload: dict[str, Any], name: str) -> str | None:
    agent = _text(payload, "agent_id")
    if name == "SubagentStop":
        return agent or _text(payload, "agent_type") or "subagent"
    return agent if name in STOP_EVENTS and agent else None


def _text(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) else None


def _count(value: object) -> int:
    if isinstance(value, list | dict):
        return len(value)
    return 1 if value else 0


def _tool_use(payload: dict[str, Any], dialect: Dialect, *, failed: bool) -> ToolUse | None:
    tool = payload.get("tool_name")
    if not isinstance(tool, str):
        return None
    tool_input = payload.get("tool_input")
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    key = dialect.file_tools.get(tool)
    paths = (tool_input[key],) if key and isinstance(tool_input.get(key), str) else ()
    command = tool_input.get("command") if tool in dialect.shell_tools else None
    return ToolUse(tool, paths, command if isinstance(command, str) else None, failed)


def render(answer: HookAnswer, event: HookEvent, *, block: str = "block") -> HostOutput:
    """The answer in Claude Code's terms: JSON on stdout, exit 0.

    ``block`` is the host's word for "keep working" (Gemini CLI says ``deny``).
    """
    body: dict[str, Any] = {}
    blocks = event.kind == "stop" and answer.decision == "block" and bool(answer.reason)
    if blocks and event.host == VSCODE:
        body = {
            "hookSpecificOutput": {
                "hookEventName": event.host_event,
                "decision": "block",
                "reason": answer.reason,
            }
        }
    elif blocks:
        body = {"decision": block, "reason": answer.reason}
    if answer.notice:
        body["systemMessage"] = answer.notice
    return HostOutput(json.dumps(body) if body else "", 0)
