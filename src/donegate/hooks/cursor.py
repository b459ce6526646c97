"""Cursor's hook contract (``.cursor/hooks.json``, version 1).

Payloads carry ``conversation_id`` (the session), ``workspace_roots`` (the first is the tree) and
``hook_event_name``. ``afterFileEdit`` names the edited ``file_path``; ``stop`` carries the
turn's ``status`` and ``loop_count``, the number of follow-ups already sent: there is no
``stop_hook_active``. The only way to keep the agent working is ``{"followup_message": ...}``,
which Cursor submits as the next user message; every answer is JSON, ``{}`` included. A stop
whose status is not ``completed`` (the person aborted it, or it errored) is not gated.
"""

from __future__ import annotations

import json
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.jsontext import clean_text
from donegate.session.event import EventKind, HookAnswer, HookEvent, HostOutput, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "cursor"
STOP_EVENTS = ("stop",)
EVENTS = ("sessionStart", "beforeSubmitPrompt", "afterFileEdit", *STOP_EVENTS)
_KINDS: dict[str, EventKind] = {
    "sessionStart": "baseline",
    "beforeSubmitPrompt": "baseline",
    "afterFileEdit": "tool_use",
    "stop": "stop",
}


def parse(payload: Any, *, fallback_cwd: Path | None = None) -> HookEvent:
    """A Cursor payload as a :class:`HookEvent`; raise InvalidInput when unusable."""
    if not isinstance(payload, dict):
        raise InvalidInput(f"hook payload is a JSON object, got {type(payload).__name__}")
    session = payload.get("conversation_id")
    if not isinstance(session, str) or not session:
        raise InvalidInput("hook payload has no conversation_id", path="conversation_id")
    root = _root(payload)
    for key, value in (("conversation_id", session), ("workspace_roots[0]", root)):
        # Stored in SQLite and passed to the file system: a NUL or a lone surrogate cannot be.
        if value is not None and not clean_text(str(value)):
            raise InvalidInput(f"{key} holds a NUL or a lone surrogate: {str(value)[:80]!r}", key)
    name = payload.get("hook_event_name")
    name = name if isinstance(name, str) else ""
    kind = _KINDS.get(name, "ignored")
    if kind == "stop" and payload.get("status", "completed") != "completed":
        kind = "ignored"  # an aborted or failed turn is the person's to handle, not a claim
    return HookEvent(
        host=NAME,
        host_event=name,
        kind=kind,
        session_id=session,
        cwd=root or fallback_cwd or Path.cwd(),
        continuing=_count(payload.get("loop_count")) > 0,
        tool_use=_edit(payload) if kind == "tool_use" else None,
    )


def _root(payload: dict[str, Any]) -> Path | None:
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return Path(roots[0])
    return None


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _edit(payload: dict[str, Any]) -> ToolUse:
    path = payload.get("file_path")
    return ToolUse("afterFileEdit", (path,) if isinstance(path, str) else ())


def render(answer: HookAnswer, event: HookEvent) -> HostOutput:
    """The answer in Cursor's terms: a follow-up message sends the agent back.

    A stop's output has no field for the person, so notices ("NOT verified", a donegate failure)
    go to stderr, which Cursor shows in its Hooks output channel.
    """
    notice = answer.notice or ""
    if event.kind == "stop" and answer.decision == "block" and answer.reason:
        return HostOutput(json.dumps({"followup_message": answer.reason}), 0, notice)
    return HostOutput("{}", 0, notice)
