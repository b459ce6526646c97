"""What a shell command printed, as each host's report of the call carries it.

- Claude Code: ``tool_response`` with ``stdout`` and ``stderr``, or the ``error`` of its
  ``PostToolUseFailure``;
- Codex: ``tool_response`` is the text itself;
- Gemini CLI: ``tool_response`` with ``llmContent`` (the agent's view, with the exit code) and
  ``returnDisplay`` (the person's);
- Copilot CLI: ``toolResult`` with ``textResultForLlm``, and, running Claude Code's settings,
  ``tool_result`` with ``text_result_for_llm``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_OUTPUT_CHARS = 64 * 1024  # of each part: read, never kept
_REPORTS = ("tool_response", "toolResult", "tool_result")
_PARTS = ("stdout", "stderr", "llmContent", "returnDisplay", "textResultForLlm")
_PARTS_SNAKE = ("text_result_for_llm",)


def printed(payload: dict[str, Any]) -> str | None:
    """The output of the shell call ``payload`` reports, from whichever host sent it."""
    parts: list[object] = []
    for key in _REPORTS:
        report = payload.get(key)
        if isinstance(report, dict):
            parts += [report.get(k) for k in (*_PARTS, *_PARTS_SNAKE)]
        else:
            parts.append(report)
    parts.append(payload.get("error"))
    found = [p[-MAX_OUTPUT_CHARS:] for p in parts if isinstance(p, str) and p]
    return "\n".join(found) if found else None


def failed(payload: dict[str, Any]) -> bool:
    """Whether Copilot CLI's report says the call failed (``resultType``, ``result_type``)."""
    for key in ("toolResult", "tool_result"):
        report = payload.get(key)
        if isinstance(report, dict):
            return "failure" in (report.get("resultType"), report.get("result_type"))
    return False
