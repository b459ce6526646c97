"""A person accepts what an agent wrote: ``donegate accept [PATH...]``.

Accepting is a person's act. The agent has a shell too, so:

- run where a host says an agent's tool is running (the variables hosts set in their shells),
  it refuses (exit 2) and accepts nothing;
- run by an agent anyway (the journal of its tool calls shows the command), every acceptance made
  during that session is withdrawn at its next stop, and the person is told;
- ``init`` also adds a rule that denies the agent the command where the host has one.

The diff of what is being accepted is shown first: content from ``HEAD`` (or nothing, for a new
file) against the file as it is now.

A path is read only as a regular file, never through a symbolic link, never blocking (a FIFO),
and up to :data:`MAX_ACCEPT_BYTES`: anything else is refused, with the reason, and the other paths
are accepted as usual. A person reviews the diff, so it is bounded too: its first
:data:`MAX_DIFF_LINES` lines, each cut at :data:`MAX_LINE_CHARS`, of the first
:data:`MAX_DIFF_BYTES` of each side, each cut said where it is made.
"""

from __future__ import annotations

import difflib
import errno
import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from donegate import gitlisting, statedir
from donegate.record import Record
from donegate.session.authorship import Authorship, Digest
from donegate.session.layout import Layout, locked
from donegate.session.settings import CONFIG_FILE
from donegate.session.workspace import workspace_root
from donegate.timefmt import rfc3339
from donegate.workspace._files import write_atomic
from donegate.workspace.snapshot import blob_id, file_kind, utc_now

# Set by hosts in the shells their agents' tool calls run in.
AGENT_SHELL_VARIABLES = (
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "GEMINI_CLI",
    "CODEX_SANDBOX",
    "CODEX_THREAD_ID",
    "CURSOR_AGENT",
    "COPILOT_AGENT",
    # Copilot CLI's agent shell (seen in 1.0.102); COPILOT_CLI is also set in its hooks' shells.
    "COPILOT_AGENT_SESSION_ID",
)
MAX_DIFF_LINES = 400
MAX_LINE_CHARS = 1000
"""Characters of a diff line shown; the rest is cut, and how much is said."""
MAX_DIFF_BYTES = 1024 * 1024
"""Bytes of each side the diff compares."""
MAX_ACCEPT_BYTES = 64 * 1024 * 1024
"""The largest file accepted: more is refused, never read (no one reviews such a diff)."""


class Candidate(Record):
    """A path to accept: its content now (``None``: absent) and the diff shown for it, or why it
    cannot be accepted (``refused``; then nothing else is known of it)."""

    path: str
    digest: Digest
    diff: str
    refused: str = ""


class Refused(Exception):
    """A path that cannot be read as a regular file; the message says why."""


def agent_shell() -> str | None:
    """The variable that says an agent's tool call runs this process, if one does."""
    return next((name for name in AGENT_SHELL_VARIABLES if os.environ.get(name)), None)


class Acceptance:
    """What ``donegate accept`` works on: one workspace's authorship record."""

    def __init__(self, state_dir: Path, cwd: Path) -> None:
        # Where the state cannot be written (the agent's sandbox), nothing is shown or accepted.
        self.layout = Layout(statedir.writable(state_dir))
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
                if not item.refused:  # nothing is known of it: never recorded as accepted
                    record.accept(item.path, item.digest, how="command", by=by, at=at)
            record.save(self.path)
        if any(item.path == CONFIG_FILE and not item.refused for item in chosen):
            try:
                text = self._read(CONFIG_FILE)
            except Refused:
                return  # replaced since: the next stop pins it, or not, by its digest
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
        except (ValueError, OSError, RuntimeError):  # RuntimeError: a loop of links (3.11, 3.12)
            return Path(path).as_posix()

    def _read(self, path: str) -> bytes | None:
        """The content of ``path``: None when absent, :class:`Refused` unless a regular file."""
        return read_regular(self.root / path)

    def _digest(self, path: str) -> Digest:
        try:
            content = self._read(path)
        except Refused as exc:
            return f"refused:{exc}"  # no content an agent wrote: not listed as its
        return None if content is None else blob_id(self.fmt, content)

    def _candidate(self, path: str) -> Candidate:
        try:
            now = self._read(path)
        except Refused as exc:
            return Candidate(path, None, "", str(exc))
        digest = None if now is None else blob_id(self.fmt, now)
        before = gitlisting.run(self.root, "show", f"HEAD:{path}")
        return Candidate(path, digest, _diff(path, before, now))


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)


def read_regular(path: Path) -> bytes | None:
    """The bytes of the regular file at ``path``, or None when there is none (a directory, as
    the snapshots see it, is none); :class:`Refused` for anything else or an unreadable file."""
    try:
        fd = os.open(path, _OPEN_FLAGS)  # a FIFO opens at once, a last symlink not at all
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise Refused(_not_opened(path, exc)) from None
    try:
        found = os.fstat(fd)
        if stat.S_ISDIR(found.st_mode):
            return None
        if not stat.S_ISREG(found.st_mode):
            raise Refused(f"a {file_kind(found.st_mode)}, not a regular file")
        return _read_capped(fd, found.st_size)
    except OSError as exc:
        raise Refused(f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _not_opened(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        try:
            link = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            link = False
        if link:
            return "a symbolic link: only a regular file is accepted, never read through a link"
        return "a loop of symbolic links on its way"
    return f"cannot be read: {exc.strerror or exc}"


def _read_capped(fd: int, size: int) -> bytes:
    if size > MAX_ACCEPT_BYTES:
        raise Refused(f"{size:,} bytes, more than the {MAX_ACCEPT_BYTES:,} accept reads")
    chunks, held = [], 0
    while chunk := os.read(fd, 1024 * 1024):
        held += len(chunk)
        if held > MAX_ACCEPT_BYTES:  # it grew while read
            raise Refused(f"more than the {MAX_ACCEPT_BYTES:,} bytes accept reads")
        chunks.append(chunk)
    return b"".join(chunks)


def _diff(path: str, before: bytes | None, now: bytes | None) -> str:
    (old, old_cut), (new, new_cut) = _compared(before), _compared(now)
    label_old = f"a/{visible(path)} (HEAD)" if before is not None else "/dev/null"
    label_new = f"b/{visible(path)} (now)" if now is not None else "/dev/null (deleted)"
    lines = list(difflib.unified_diff(old, new, label_old, label_new))
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... {len(lines) - MAX_DIFF_LINES} more lines\n"]
    if old_cut or new_cut:
        lines.append(f"... only the first {MAX_DIFF_BYTES:,} bytes of each side were compared\n")
    return "".join(map(_shown, lines)) or f"(no difference from HEAD in {visible(path)})\n"


def _compared(content: bytes | None) -> tuple[list[str], bool]:
    """The lines of ``content`` the diff compares, and whether they are cut short (mid-line:
    a long line's start is shown, as its own cut)."""
    data = content or b""
    cut = len(data) > MAX_DIFF_BYTES
    return data[:MAX_DIFF_BYTES].decode("utf-8", "replace").splitlines(keepends=True), cut


def _shown(line: str) -> str:
    """A diff line as printed: cut at :data:`MAX_LINE_CHARS`, its controls made visible, and
    ended (a file's last line may have no newline, and would run into what is printed after)."""
    if len(line) <= MAX_LINE_CHARS + 1:  # its newline is not counted
        return line.translate(_VISIBLE) + ("" if line.endswith("\n") else "\n")
    more = len(line.rstrip("\r\n")) - MAX_LINE_CHARS
    return f"{line[:MAX_LINE_CHARS].translate(_VISIBLE)} [... {more:,} more characters not shown]\n"


# What an agent's content could use to redraw the terminal the person reviews it in (an escape
# sequence erasing the lines above, a backspace, text reordered by a bidi control), written as
# its escape instead. Tabs and line ends print as themselves.
_CONTROLS = [*range(0x20), 0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_ESCAPES = {c: f"\\u{c:04x}" if c > 0xFF else f"\\x{c:02x}" for c in _CONTROLS}
_VISIBLE = {c: text for c, text in _ESCAPES.items() if chr(c) not in "\t\n\r"}


def visible(name: str) -> str:
    """A path as printed to the person: every control written as its escape, line ends too (a
    file name is the agent's text, and may hold what redraws a terminal)."""
    return name.translate(_ESCAPES)
