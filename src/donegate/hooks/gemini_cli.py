"""Gemini CLI's hook contract.

The base input is Claude Code's (``session_id``, ``cwd``, ``hook_event_name``), with other names:
``BeforeAgent`` is the prompt, ``AfterTool`` the tool report (``write_file`` and ``replace`` name
their file, ``run_shell_command`` its command), and ``AfterAgent`` the stop, carrying the agent's
final words in ``prompt_response``. To send the agent back, ``AfterAgent`` answers
``{"decision": "deny", "reason": ...}`` with exit 0: the reason becomes its next prompt.
"""

from __future__ import annotations

from pathlib import Path

from donegate.hooks import claude_code
from donegate.session.event import HookAnswer, HookEvent, HostOutput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "gemini-cli"
STOP_EVENTS = ("AfterAgent",)
EVENTS = ("SessionStart", "BeforeAgent", "AfterTool", *STOP_EVENTS)
GEMINI = claude_code.Dialect(
    kinds={
        "SessionStart": "baseline",
        "BeforeAgent": "baseline",
        "AfterTool": "tool_use",
        "AfterAgent": "stop",
    },
    file_tools={"write_file": "file_path", "replace": "file_path"},
    shell_tools=frozenset({"run_shell_command"}),
    message_key="prompt_response",
)


def parse(payload: Any, *, fallback_cwd: Path | None = None) -> HookEvent:
    """A Gemini CLI payload as a :class:`HookEvent`."""
    return claude_code.parse(payload, host=NAME, fallback_cwd=fallback_cwd, dialect=GEMINI)


def render(answer: HookAnswer, event: HookEvent) -> HostOutput:
    """The answer in Gemini CLI's terms: ``deny`` sends the agent back."""
    return claude_code.render(answer, event, block="deny")
