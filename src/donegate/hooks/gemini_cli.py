"""Gemini CLI's hook contract, as Gemini CLI 0.61 sends it (``tests/hooks/fixtures/gemini-cli``).

The base input is Claude Code's (``session_id``, ``cwd``, ``hook_event_name``), with other names:
``BeforeAgent`` is the prompt, ``AfterTool`` the tool report (``write_file`` and ``replace`` name
their file, ``run_shell_command`` its command; a subagent's tools report there too, in the
session), and ``AfterAgent`` the stop. To send the agent back, ``AfterAgent`` answers
``{"decision": "deny", "reason": ...}`` with exit 0: the reason becomes its next prompt, and a
``BeforeAgent`` carries it as ``prompt``.

``AfterAgent``'s ``prompt`` stays the person's prompt and its ``prompt_response`` is every round's
text since that prompt, joined by newlines, across blocks too: the agent's final words are its
end. ``stop_hook_active`` is true only on the ``AfterAgent`` of a continuation in which no tool
ran; one in which tools ran ends with it false. Either way it is the same turn's next stop.
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


# What a stop's claim keeps of the agent's words (session.mutations.MAX_OUTCOME_CHARS), from the
# start: of prompt_response, which grows by every round, the end is what the agent says last.
SAID_KEPT = 4000


def parse(payload: Any, *, fallback_cwd: Path | None = None) -> HookEvent:
    """A Gemini CLI payload as a :class:`HookEvent`; of a long ``prompt_response``, its end."""
    event = claude_code.parse(payload, host=NAME, fallback_cwd=fallback_cwd, dialect=GEMINI)
    said = event.last_message
    if said is not None and len(said) > SAID_KEPT:
        event = event._replace(last_message="…" + said[-(SAID_KEPT - 1) :])
    return event


def render(answer: HookAnswer, event: HookEvent) -> HostOutput:
    """The answer in Gemini CLI's terms: ``deny`` sends the agent back."""
    return claude_code.render(answer, event, block="deny")
