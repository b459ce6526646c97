"""OpenAI Codex CLI's hook contract.

The event names and input fields follow Claude Code's, so parsing is shared; two things differ:
- Stop output is validated against a schema with ``additionalProperties: false`` (``continue``,
  ``decision``, ``reason``, ``stopReason``, ``suppressOutput``, ``systemMessage``): one extra key
  and Codex ignores the hook, which would silently let every stop through. Output is filtered to
  exactly those keys.
- File edits arrive as ``apply_patch`` calls whose input holds ``*** Update File: path`` envelopes.
- ``stop_hook_active`` stays true once set, so it is never read as "first stop of the turn".
- A subagent started with ``spawn_agent`` fires ``UserPromptSubmit`` with its task, naming its
  ``agent_id`` (seen in 0.171.0): the main agent wrote that prompt, so it is no person's turn and
  not the task a judge is shown. Its end is ``SubagentStop``, gated as Claude Code's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from donegate.hooks import claude_code
from donegate.session.event import HookAnswer, HookEvent, HostOutput, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "codex"
STOP_OUTPUT_KEYS = frozenset(
    {"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage"}
)
EVENTS = claude_code.EVENTS
_PATCH_PATH = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$", re.M)


def parse(payload: Any, *, fallback_cwd: Path | None = None) -> HookEvent:
    """A Codex payload as a :class:`HookEvent`."""
    event = claude_code.parse(payload, host=NAME, fallback_cwd=fallback_cwd)
    if event.kind == "baseline" and isinstance(payload.get("agent_id"), str):
        return event._replace(kind="ignored")  # a subagent's task: the main agent's words
    tool_use = event.tool_use
    if tool_use is not None and tool_use.tool == "apply_patch":
        paths = tuple(dict.fromkeys(_patch_paths(payload.get("tool_input"))))
        return event._replace(tool_use=ToolUse(tool_use.tool, paths, None, tool_use.failed))
    return event


def _patch_paths(value: object) -> list[str]:
    if isinstance(value, str):
        return [m.strip() for m in _PATCH_PATH.findall(value)]
    if isinstance(value, dict):
        return [p for item in value.values() for p in _patch_paths(item)]
    if isinstance(value, list):
        return [p for item in value for p in _patch_paths(item)]
    return []


def render(answer: HookAnswer, event: HookEvent) -> HostOutput:
    """The answer in Codex's terms, restricted to the keys its Stop schema allows."""
    out = claude_code.render(answer, event)
    if not out.stdout:
        return out
    body = {k: v for k, v in json.loads(out.stdout).items() if k in STOP_OUTPUT_KEYS}
    return HostOutput(json.dumps(body), out.exit_code)
