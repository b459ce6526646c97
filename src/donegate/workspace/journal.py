"""Writes that the host reported (a hook's tool events), kept beside the session's snapshots.

The snapshot stays the source of truth for *what* changed; the journal adds what a snapshot
cannot see: which tool made a write, the shell command behind it, and a time earlier than
donegate's observation. Lines are appended whole, so parallel hook processes can share a file;
a line that does not parse is skipped (it can only lose annotations, never writes).
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

from donegate.record import Record
from donegate.timefmt import parse_rfc3339, rfc3339
from donegate.workspace.snapshot import utc_now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FILE_NAME = "journal.jsonl"  # in a session's directory of the state directory


class Reported(Record):
    """One write as a host reported it: ``path`` may be ``None`` for a shell command."""

    tool: str
    at: datetime
    path: str | None = None
    command: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "tool": self.tool,
            "at": rfc3339(self.at),
            "path": self.path,
            "command": self.command,
        }


class Journal:
    """An append-only JSON-lines file of :class:`Reported` writes."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(
        self,
        tool: str,
        *,
        path: str | None = None,
        command: str | None = None,
        at: datetime | None = None,
    ) -> Reported:
        """Append one reported write (``at``, an aware datetime, defaults to now)."""
        if at is not None and at.tzinfo is None:
            raise ValueError("a naive datetime is not an instant")
        entry = Reported(tool, at or utc_now(), path, command)
        line = (json.dumps(entry.to_json(), separators=(",", ":")) + "\n").encode()
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(
                fd, line
            )  # one write() per line: appends from several processes interleave whole
        finally:
            os.close(fd)
        return entry

    def entries(self, since: datetime | None = None) -> list[Reported]:
        """The reported writes in order, optionally only those at or after ``since``."""
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return []
        found = [e for e in map(_parse, lines) if e is not None]
        return [e for e in found if since is None or e.at >= since]


def _parse(line: bytes) -> Reported | None:
    try:
        data = json.loads(line)
        at = parse_rfc3339(data["at"])
        return Reported(str(data["tool"]), at, data.get("path"), data.get("command"))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
