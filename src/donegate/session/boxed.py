"""donegate called by the agent itself, from its shell: its hook, or ``donegate accept``.

Neither is the agent's to run: a hook call is the host's report, accepting is the person's act.
From inside the agent's sandbox such a call records nothing, since donegate's state lies outside
every place the sandbox lets a command write: it says so, ending its words with
:data:`~donegate.statedir.NOT_RECORDED`, and exits non-zero. A sandbox that hides the state
instead (a ``/tmp`` or a home of its own) lets the call make a new state directory, which
vanishes with the box: it says that, ending with :data:`~donegate.statedir.NEW_STATE`. The real
hook, outside the box, reads
the host's report of that shell call: the mark in its output, or its command naming donegate's
hook, is kept in the session (``donegate-calls.jsonl``, beside the journal), told to the person at
once, and again at each later stop of the session, whose receipt keeps the words.

This is a report, not the defence: the defence is that the call recorded nothing. An agent that
hides the output (``2>/dev/null``) and spells the command where the host does not show it (in a
script) leaves nothing to see here, and still records nothing.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from donegate.session.event import ToolUse
from donegate.statedir import NEW_STATE, NOT_RECORDED
from donegate.timefmt import rfc3339
from donegate.workspace.snapshot import utc_now

FILE_NAME = "donegate-calls.jsonl"
MAX_SHOWN = 3  # commands quoted in a note
MAX_COMMAND_CHARS = 200
_HOOK_COMMAND = re.compile(r"donegate\b.{0,200}?\bhook\b", re.DOTALL)


def seen(use: ToolUse) -> str | None:
    """How the host's report shows ``use`` calling donegate itself, if it does."""
    if use.output is not None and NOT_RECORDED in use.output:
        return "recorded nothing: donegate's state was out of its reach"
    if use.output is not None and NEW_STATE in use.output:
        return "made a state directory of its own: the real one was out of its sight"
    if use.command is not None and _HOOK_COMMAND.search(use.command):
        return "ran donegate's hook"
    return None


def record(session: Path, use: ToolUse, how: str) -> str:
    """Keep the call in the session's folder ``session``; what the person is told of it now."""
    line = {"at": rfc3339(utc_now()), "command": use.command, "seen": how}
    session.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(session / FILE_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:  # one write() per line: appends from several hook processes interleave whole
        os.write(fd, (json.dumps(line, separators=(",", ":")) + "\n").encode())
    finally:
        os.close(fd)
    return f"donegate: the agent called donegate itself from its shell ({how}): {_quoted(use)}."


def notes(session: Path) -> list[str]:
    """What a stop of the session says of the calls kept in ``session``: nothing if none."""
    try:
        lines = (session / FILE_NAME).read_bytes().splitlines()
    except FileNotFoundError:
        return []
    calls = [c for c in map(_parse, lines) if c is not None]
    if not calls:
        return []
    shown = "; ".join(f"`{_cut(c['command'])}` ({c['seen']})" for c in calls[-MAX_SHOWN:])
    more = f", and {len(calls) - MAX_SHOWN} more" if len(calls) > MAX_SHOWN else ""
    return [
        f"donegate: in this session the agent called donegate itself from its shell "
        f"{len(calls)} time(s): {shown}{more}. Its hook is the host's and accepting is the "
        "person's: nothing such a call did counts."
    ]


def _parse(line: bytes) -> dict[str, str] | None:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    command = data.get("command") or "(a command not reported)"
    return {"command": str(command), "seen": str(data.get("seen"))}


def _quoted(use: ToolUse) -> str:
    return f"`{_cut(use.command or '(a command not reported)')}`"


def _cut(command: str) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= MAX_COMMAND_CHARS else flat[:MAX_COMMAND_CHARS] + "..."
