"""What a host's hook payload means to donegate, and what donegate answers: host-neutral types.

Named tuples rather than dataclasses: a hook process defines these at every agent stop, and a
dataclass costs four times as long to define.

Each host adapter translates its own payload into a :class:`HookEvent` and renders a
:class:`HookAnswer` back in the host's terms. Nothing here knows any particular host.
"""

from __future__ import annotations

from pathlib import Path

from donegate.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    EventKind = Literal["baseline", "tool_use", "stop", "ignored"]
else:
    EventKind = str  # a Literal for the type checker; its values are str at run time


class ToolUse(Record):
    """A tool call the host reports: which files it says it touched, or the command it ran.

    ``output``: what a shell command printed, as the host reports it (its standard output and
    error, or the host's words for its failure), where the host reports it.
    """

    tool: str
    paths: tuple[str, ...] = ()
    command: str | None = None
    failed: bool = False
    output: str | None = None


class HookEvent(Record):
    """One hook call, host-neutral.

    ``continuing`` is true when the agent is already continuing because a stop was blocked
    (Claude Code's and Codex's ``stop_hook_active``): a continuation, never a reset.

    ``confinement`` says what kept the agent's commands from writing outside the workspace (the
    host's own sandbox, as its settings configure it), or None when nothing is known to: then
    the agent could reach donegate's state and runs with donegate's own rights.
    """

    host: str
    host_event: str
    kind: EventKind
    session_id: str
    cwd: Path
    continuing: bool = False
    background_tasks: int = 0
    subagent: str | None = None
    tool_use: ToolUse | None = None
    last_message: str | None = None
    prompt: str | None = None
    confinement: str | None = None


if TYPE_CHECKING:
    Decision = Literal["allow", "block"]
else:
    Decision = str  # a Literal for the type checker; its values are str at run time


class HookAnswer(Record):
    """What donegate tells the host: let the agent stop or send it back, and a note for the person.

    ``reason`` becomes the agent's next instruction on a block; ``notice`` is shown to the person.
    """

    decision: Decision = "allow"
    reason: str | None = None
    notice: str | None = None

    @classmethod
    def allow(cls, notice: str | None = None) -> HookAnswer:
        return cls("allow", None, notice)

    @classmethod
    def block(cls, reason: str, notice: str | None = None) -> HookAnswer:
        if not reason.strip():
            raise ValueError("a block needs a reason the agent can act on")
        return cls("block", reason, notice)


class HostOutput(Record):
    """What the hook process writes and how it exits (``stderr``: for hosts that show only that)."""

    stdout: str
    exit_code: int = 0
    stderr: str = ""
