"""A person accepts what an agent wrote: ``donegate accept [PATH...]``.

Accepting is a person's act. The agent has a shell too, so:

- run where a host says an agent's tool is running (the variables hosts set in their shells),
  it refuses (exit 2) and accepts nothing;
- run by an agent anyway (the journal of its tool calls shows the command), every acceptance made
  during that session is withdrawn at its next stop, and the person is told;
- ``init`` also adds a rule that denies the agent the command where the host has one.

The diff of what is being accepted is shown first: content from ``HEAD`` (or nothing, for a new
file) against the file as it is now.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from donegate import gitlisting
from donegate.record import Record
from donegate.session.authorship import Authorship, Digest
from donegate.session.layout import Layout, locked
from donegate.session.settings import CONFIG_FILE
from donegate.session.workspace import workspace_root
from donegate.workspace._files import write_atomic
from donegate.workspace.snapshot import blob_id, rfc3339, utc_now

# Set by hosts in the shells their agents' tool calls run in.
AGENT_SHELL_VARIABLES = (
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "GEMINI_CLI",
    "CODEX_SANDBOX",
    "CODEX_THREAD_ID",
    "CURSOR_AGENT",
    "COPILOT_AGENT",
)
MAX_DIFF_LINES = 400


class Candidate(Record):
    """A path to accept: its content now (``None``: absent) and the diff shown for it."""

    path: str
    digest: Digest
    diff: str


def agent_shell() -> str | None:
    """The variable that says an agent's tool call runs this process, if one does."""
    return next((name for name in AGENT_SHELL_VARIABLES if os.environ.get(name)), None)


class Acceptance:
    """What ``donegate accept`` works on: one workspace's authorship record."""

    def __init__(self, state_dir: Path, cwd: Path) -> None:
        self.layout = Layout(state_dir)
        self.root = workspace_root(cwd)
        self.path = self.layout.authorship(self.root)
        from donegate.workspace._git import object_format

        self.fmt = object_format(self.root) or "sha1"

    def candidates(self, paths: Sequence[str]) -> list[Candidate]:
        """The named paths (relative to the root), or every path still the agent's content."""
        record = Authorship.load(self.path)
        wanted = [self._relative(p) for p in paths] or sorted(self._tainted(record))
        return [self._candidate(p) for p in wanted]

    def accept(self, chosen: Sequence[Candidate], by: str) -> None:
        """Record ``chosen`` as accepted by ``by``, now."""
        at = rfc3339(utc_now())
        with locked(self.layout.workspace_lock(self.root)):
            record = Authorship.load(self.path)
            for item in chosen:
                record.accept(item.path, item.digest, how="command", by=by, at=at)
            record.save(self.path)
        if any(item.path == CONFIG_FILE for item in chosen):
            text = self._read(CONFIG_FILE)
            config = None if text is None else text.decode("utf-8", "replace")
            write_atomic(
                self.layout.accepted_config(self.root), json.dumps({"text": config}).encode()
            )

    def _tainted(self, record: Authorship) -> set[str]:
        return {p for p in record.agent if record.is_tainted(p, self._digest(p))}

    def _relative(self, path: str) -> str:
        full = Path(path) if Path(path).is_absolute() else Path.cwd() / path
        try:
            return full.resolve().relative_to(self.root).as_posix()
        except (ValueError, OSError):
            return Path(path).as_posix()

    def _read(self, path: str) -> bytes | None:
        try:
            return (self.root / path).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def _digest(self, path: str) -> Digest:
        content = self._read(path)
        return None if content is None else blob_id(self.fmt, content)

    def _candidate(self, path: str) -> Candidate:
        now = self._read(path)
        digest = None if now is None else blob_id(self.fmt, now)
        before = gitlisting.run(self.root, "show", f"HEAD:{path}")
        return Candidate(path, digest, _diff(path, before, now))


def _diff(path: str, before: bytes | None, now: bytes | None) -> str:
    old = (before or b"").decode("utf-8", "replace").splitlines(keepends=True)
    new = (now or b"").decode("utf-8", "replace").splitlines(keepends=True)
    label_old = f"a/{path} (HEAD)" if before is not None else "/dev/null"
    label_new = f"b/{path} (now)" if now is not None else "/dev/null (deleted)"
    lines = list(difflib.unified_diff(old, new, label_old, label_new))
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... {len(lines) - MAX_DIFF_LINES} more lines\n"]
    return "".join(lines) or f"(no difference from HEAD in {path})\n"
