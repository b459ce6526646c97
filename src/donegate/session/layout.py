"""The one owner of the state directory's layout: which file holds what, and under which name.

Everything lives outside the agent's working tree (:mod:`donegate.statedir`)::

    receipts.sqlite3, gate.sqlite3                     the ledger and the gate's session history
    locks/<session>.lock                               one stop at a time per session
    locks/stops/<token>.lock                           held while a pending receipt's stop lives
    sessions/<session>/root                            the workspace root pinned at the first call
    workspaces/<workspace>/authorship.json             who wrote what: agents' writes, acceptances
    workspaces/<workspace>/config.accepted.json        the last donegate.toml a person accepted
    workspaces/<workspace>/seen/<host>.json            each host's last hook call (doctor)
    workspaces/<workspace>/sessions/<session>/...      baseline, verified snapshot, journal, pin
    workspaces/<workspace>/sessions/<session>/turn     present while an agent's turn is open
    quarantine/<name>.<time>                           damaged state files, moved aside

Session ids are host-chosen text: :func:`~donegate.workspace.state.session_dir` maps one to a
file name, and every path here uses that one mapping.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from donegate.record import Record
from donegate.workspace.state import session_dir, workspace_id

# A subagent's stop is gated under its own session key, ``<session>#agent-<id>``.
SUBAGENT = "#agent-"


def subagent_session(session_id: str, subagent: str) -> str:
    """The session key a subagent's stop is gated under: its own budgets, its parent's root."""
    return f"{session_id}{SUBAGENT}{subagent}"


def parent_session(session_id: str) -> str | None:
    """The session a subagent's session key belongs to (None: not a subagent's)."""
    parent, found, _ = session_id.partition(SUBAGENT)
    return parent if found else None


class Layout(Record):
    """The paths of one state directory (nothing is created until it is written)."""

    state_dir: Path

    def session_name(self, session_id: str) -> str:
        """The file-system name of a session id (the same for every file of the session)."""
        return session_dir(self.state_dir, self.state_dir, session_id).name

    def lock(self, session_id: str) -> Path:
        return self.state_dir / "locks" / f"{self.session_name(session_id)}.lock"

    def root_pin(self, session_id: str) -> Path:
        return self.state_dir / "sessions" / self.session_name(session_id) / "root"

    def workspace(self, root: Path) -> Path:
        return self.state_dir / "workspaces" / workspace_id(root)

    def session(self, root: Path, session_id: str) -> Path:
        return session_dir(self.state_dir, root, session_id)

    def turn(self, root: Path, session_id: str) -> Path:
        return self.session(root, session_id) / "turn"

    def config_pin(self, root: Path, session_id: str) -> Path:
        return self.session(root, session_id) / "config.json"

    def accepted_config(self, root: Path) -> Path:
        return self.workspace(root) / "config.accepted.json"

    def authorship(self, root: Path) -> Path:
        return self.workspace(root) / "authorship.json"

    def seen(self, root: Path, host: str) -> Path:
        """The last hook call of ``host`` in the workspace: proof the installed hooks fire."""
        return self.workspace(root) / "seen" / f"{host}.json"

    def stop_lock(self, token: str) -> Path:
        """Held by a live stop from before its pending receipt: the receipt names ``token``."""
        return self.state_dir / "locks" / "stops" / f"{token}.lock"

    def workspace_lock(self, root: Path) -> Path:
        return self.workspace(root) / "authorship.lock"

    def quarantine(self, damaged: Path) -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        return self.state_dir / "quarantine" / f"{damaged.name}.{stamp}.{os.getpid()}"


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (created) for the duration of the block."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def hold(path: Path) -> int:
    """A descriptor holding an exclusive ``flock`` on ``path`` (created) until it is closed.

    The kernel releases it when the process dies, however it dies.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def is_locked(path: Path, *, create: bool = True) -> bool:
    """Whether another process holds the ``flock`` on ``path`` right now.

    ``create=False``: a missing file is no lock (and is not created to ask).
    """
    try:
        with path.open("a" if create else "rb") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
            return False
    except OSError:
        return False


def move_aside(layout: Layout, damaged: Path) -> Path | None:
    """Move a damaged state file (and its SQLite companions) into quarantine; where it went."""
    target = layout.quarantine(damaged)
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        damaged.replace(target)
    except OSError:
        return None
    for suffix in ("-wal", "-shm", "-journal"):
        companion = damaged.with_name(damaged.name + suffix)
        if companion.exists():
            companion.replace(target.with_name(target.name + suffix))
    return target
