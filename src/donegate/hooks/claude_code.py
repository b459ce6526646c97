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
never recorded for a block the host would ignore. VS Code's references disagree on the common
fields' spelling (``session_id`` on GitHub's page, ``sessionId`` on VS Code's): both are read.
Its ``SubagentStop`` answer is the top-level ``decision``/``reason``, as its reference gives it.

Copilot CLI reads ``.claude/settings.json`` too, and sends VS Code's payload with a
``stop_reason`` (and ``COPILOT_PROJECT_DIR`` in the hook's environment): that event is the host
``copilot``, answered as Copilot's reference says, with a top-level ``decision``.

Claude Code tells the main agent that a background subagent ended with a ``UserPromptSubmit``
whose prompt is a ``<task-notification>``: the host wrote it, not the person, so it is no turn of
the person's, and the subagent's writes stay the session's, judged at its next stop.

What 2.1.197 sends (``tests/hooks/fixtures/claude-code/2.1.197``): the Agent tool runs a subagent
in the foreground unless ``run_in_background`` is true; a stop's ``background_tasks`` lists a
background subagent as ``{"id", "type": "subagent", "status", "description", "agent_type"}``,
at the main ``Stop`` while it runs and, still "running", at its own ``SubagentStop``; a
subagent's tool calls name its ``agent_id`` and are read as the session's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.hooks._output import printed
from donegate.jsontext import clean_text
from donegate.record import Record
from donegate.session.event import EventKind, HookAnswer, HookEvent, HostOutput, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "claude-code"
VSCODE = "vscode"
COPILOT = "copilot"
# The prompt Claude Code makes from a background task's end: the host's words, not the person's.
TASK_NOTIFICATION = "<task-notification>"
# A background task in one of these states is over: it holds no stop back.
_FINISHED = frozenset({"completed", "failed", "killed", "stopped", "cancelled", "canceled"})

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
    name = _text(payload, "hook_event_name", "hookEventName") or (
        "Stop" if "stop_hook_active" in payload else ""
    )
    session = _text(payload, "session_id", "sessionId")
    if not session:
        raise InvalidInput("hook payload has no session_id", path="session_id")
    cwd = _text(payload, "cwd")
    _check_clean(session, "session_id")
    _check_clean(cwd, "cwd")
    if host == NAME:
        host = _host(payload)
    prompt = _text(payload, "prompt")
    kind = dialect.kinds.get(name, "ignored")
    if kind == "baseline" and prompt is not None and _from_host(prompt):
        kind = "ignored"
    subagent = _subagent(payload, name)
    if kind == "tool_use":  # a subagent's tool call: its own stop reads it too
        subagent = _text(payload, "agent_id", "agentId")
    return HookEvent(
        host=host,
        host_event=name,
        kind=kind,
        session_id=session,
        cwd=Path(cwd) if cwd else (fallback_cwd or Path.cwd()),
        continuing=any(payload.get(k) is True for k in ("stop_hook_active", "stopHookActive")),
        background_tasks=_running(payload.get("background_tasks"), subagent),
        # A subagent's stop (SubagentStop, or a Stop that names an agent_id) is not the session's.
        subagent=subagent,
        tool_use=_tool_use(payload, dialect, failed=name in dialect.failure_events),
        last_message=_text(payload, dialect.message_key),
        prompt=prompt,
    )


def _host(payload: dict[str, Any]) -> str:
    """Which host of the family sent a payload to Claude Code's settings file."""
    if "stop_reason" in payload or os.environ.get("COPILOT_PROJECT_DIR"):
        return COPILOT
    return VSCODE if _from_vscode(payload) else NAME


def _from_host(prompt: str) -> bool:
    return prompt.lstrip().startswith(TASK_NOTIFICATION)


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
    agent = _text(payload, "agent_id", "agentId")
    if name == "SubagentStop":
        return agent or _text(payload, "agent_type", "agentType") or "subagent"
    return agent if name in STOP_EVENTS and agent else None


def _text(payload: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str):
            return value
    return None


def _running(tasks: object, agent: str | None) -> int:
    """How many background tasks still run, besides the subagent whose stop this is: a
    background subagent's own ``SubagentStop`` lists itself as running, and was let go unchecked.
    """
    if isinstance(tasks, dict):
        tasks = list(tasks.values())
    if not isinstance(tasks, list):
        return 1 if tasks else 0
    return sum(1 for task in tasks if not _over(task, agent))


def _over(task: object, agent: str | None) -> bool:
    if not isinstance(task, dict):
        return False
    status = task.get("status")
    if isinstance(status, str) and status.lower() in _FINISHED:
        return True
    return agent is not None and task.get("id") == agent


def _tool_use(payload: dict[str, Any], dialect: Dialect, *, failed: bool) -> ToolUse | None:
    tool = payload.get("tool_name")
    if not isinstance(tool, str):
        return None
    tool_input = payload.get("tool_input")
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    key = dialect.file_tools.get(tool)
    # Copilot CLI, running .claude/settings.json's hooks, names the file "path".
    named = [tool_input.get(k) for k in (key, "path")] if key else []
    paths = next(((p,) for p in named if isinstance(p, str)), ())
    if tool not in dialect.shell_tools:
        return ToolUse(tool, paths, None, failed)
    command = tool_input.get("command")
    said = printed(payload)
    return ToolUse(tool, paths, command if isinstance(command, str) else None, failed, said)


def render(answer: HookAnswer, event: HookEvent, *, block: str = "block") -> HostOutput:
    """The answer in Claude Code's terms: JSON on stdout, exit 0.

    ``block`` is the host's word for "keep working" (Gemini CLI says ``deny``).
    """
    body: dict[str, Any] = {}
    blocks = event.kind == "stop" and answer.decision == "block" and bool(answer.reason)
    if blocks and event.host == VSCODE and event.host_event != "SubagentStop":
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
    # Copilot CLI shows a hook's standard error, not a systemMessage it does not document.
    notice = (answer.notice or "") if event.host == COPILOT else ""
    return HostOutput(json.dumps(body) if body else "", 0, notice)
