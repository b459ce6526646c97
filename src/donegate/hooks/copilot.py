"""GitHub Copilot CLI's and coding agent's hook contract (``.github/hooks/*.json``, version 1).

Events are camelCase (``sessionStart``, ``userPromptSubmitted``, ``postToolUse``, ``agentStop``,
``subagentStop``) and so are their payloads: ``sessionId``, ``cwd``, ``timestamp`` (ms),
``toolName`` with ``toolArgs`` (an object in 1.0.102; a JSON string in older versions, read too),
``stopReason``, but ``stop_hook_active``. Copilot also accepts the VS Code compatible form
(``Stop``, snake_case fields), which this adapter reads as well. No payload names its event (seen
in 1.0.102), so each installed entry sets ``DONEGATE_HOOK_EVENT`` in its ``env``. ``agentStop``
answers ``{"decision": "block", "reason": ...}`` to keep the agent working: Copilot sends the
reason to the model as a user message, and to the hooks as the next ``userPromptSubmitted``'s
prompt. The entry's time limit is ``timeoutSec``.

A subagent's end fires two events: ``agentStop`` under the subagent's own session, naming its
``parentAgentId``, and ``subagentStop`` under the parent's session, naming its ``agentId``. One
stop is gated once: the ``subagentStop``, which donegate files under the parent's session (its
root, baseline and pinned configuration); the ``agentStop`` of a subagent is let go unread.

Copilot CLI (seen in 1.0.102) names every other event of a subagent with the subagent's own
``sessionId`` too, beside ``parentAgentId``. Its tool calls are filed under the parent's session,
whose stops read them (a ``donegate accept`` a subagent ran in its shell is seen there); its
``userPromptSubmitted`` is the parent's task or donegate's own reason, never a person's turn.

A person's prompt opens the agent's turn (what changes until a stop lets the agent go is the
agent's), so its text is read. A background subagent's end reaches the parent as a
``userPromptSubmitted`` whose prompt is a ``<system_notification>``: the host's words, no turn of
the person's; the subagent's writes stay the session's, judged at the parent's next stop.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.hooks import _output
from donegate.jsontext import clean_text
from donegate.session.event import EventKind, HookAnswer, HookEvent, HostOutput, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "copilot"
EVENT_VARIABLE = "DONEGATE_HOOK_EVENT"
STOP_EVENTS = ("agentStop", "subagentStop")
EVENTS = ("sessionStart", "userPromptSubmitted", "postToolUse", *STOP_EVENTS)
_KINDS: dict[str, EventKind] = {
    "sessionStart": "baseline",
    "userPromptSubmitted": "baseline",
    "postToolUse": "tool_use",
    "agentStop": "stop",
    "subagentStop": "stop",
    # The VS Code compatible names.
    "SessionStart": "baseline",
    "UserPromptSubmit": "baseline",
    "PostToolUse": "tool_use",
    "Stop": "stop",
    "SubagentStop": "stop",
}
# The prompt Copilot CLI makes from a background task's end (seen in 1.0.102).
SYSTEM_NOTIFICATION = "<system_notification>"
_FILE_TOOLS = ("create", "edit", "str_replace", "write", "apply_patch")
_SHELL_TOOLS = ("bash", "shell", "powershell")


def parse(payload: Any, *, fallback_cwd: Path | None = None) -> HookEvent:
    """A Copilot payload as a :class:`HookEvent`; raise InvalidInput when unusable."""
    if not isinstance(payload, dict):
        raise InvalidInput(f"hook payload is a JSON object, got {type(payload).__name__}")
    name = _text(payload, "hookEventName", "hook_event_name") or os.environ.get(EVENT_VARIABLE, "")
    cwd_text = _text(payload, "cwd")
    cwd = Path(cwd_text) if cwd_text else (fallback_cwd or Path.cwd())
    kind = _KINDS.get(name, "ignored")
    parent = _text(payload, "parentAgentId", "parent_agent_id")
    if parent and kind in ("stop", "baseline") and name not in ("subagentStop", "SubagentStop"):
        kind = "ignored"  # its subagentStop is the stop gated; its prompt is no person's
    prompt = _text(payload, "prompt")
    if (
        kind == "baseline"
        and prompt is not None
        and prompt.lstrip().startswith(SYSTEM_NOTIFICATION)
    ):
        kind = "ignored"
    session_id = parent if parent and kind == "tool_use" else _session(payload, cwd)
    for key, value in (("sessionId", session_id), ("cwd", str(cwd))):
        # Stored in SQLite and passed to the file system: a NUL or a lone surrogate cannot be.
        if not clean_text(value):
            raise InvalidInput(f"{key} holds a NUL or a lone surrogate: {value[:80]!r}", key)
    return HookEvent(
        host=NAME,
        host_event=name,
        kind=kind,
        session_id=session_id,
        cwd=cwd,
        continuing=payload.get("stop_hook_active") is True,
        subagent=_text(payload, "agentId", "agent_id", "agentName") if "ubagent" in name else None,
        tool_use=_tool_use(payload) if kind == "tool_use" else None,
        last_message=_text(payload, "lastAssistantMessage", "last_assistant_message"),
        prompt=prompt if kind == "baseline" else None,
    )


def _text(payload: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _session(payload: dict[str, Any], cwd: Path) -> str:
    # Older Copilot CLI payloads name no session: one per working directory is the best key.
    found = _text(payload, "sessionId", "session_id")
    if found:
        return found
    return "copilot-" + hashlib.blake2b(str(cwd).encode(), digest_size=8).hexdigest()


def _tool_use(payload: dict[str, Any]) -> ToolUse | None:
    tool = _text(payload, "toolName", "tool_name")
    if tool is None:
        return None
    args = payload.get("toolArgs", payload.get("tool_input"))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            args = {}
    args = args if isinstance(args, dict) else {}
    path = next(
        (args[k] for k in ("path", "file_path", "filePath") if isinstance(args.get(k), str)), None
    )
    command = args.get("command") if tool.lower() in _SHELL_TOOLS else None
    paths = (path,) if path and tool.lower() in _FILE_TOOLS else ()
    if not isinstance(command, str):
        return ToolUse(tool, paths)
    return ToolUse(tool, paths, command, _output.failed(payload), _output.printed(payload))


def render(answer: HookAnswer, event: HookEvent) -> HostOutput:
    """The answer in Copilot's terms: ``decision: block`` keeps the agent working."""
    body: dict[str, str] = {}
    if event.kind == "stop" and answer.decision == "block" and answer.reason:
        body = {"decision": "block", "reason": answer.reason}
    return HostOutput(json.dumps(body) if body else "", 0, answer.notice or "")
