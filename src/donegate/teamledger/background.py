"""Shipping after a stop, without the stop waiting: a detached ``donegate ledger sync``.

The hook starts it and returns at once; the child has its own session (the host's kill of the
hook's process group does not reach it), no terminal and no pipes to the host. Two at once do
not pile up: ``ledger sync`` holds a lock in the state directory and a second one just leaves.

The lock file says who holds it and by when it must have moved on (its pid and a deadline,
pushed back at each batch), so a sync that finds the lock taken tells a live holder (it leaves
quietly) from a stuck one (past its deadline: frozen, or hung in something unbounded), and says
which. A holder that died holds nothing: the kernel releases its lock, and the next sync ships.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.record import Record
from donegate.teamledger.settings import team_settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess

LOCK_FILE = "ledger-sync.lock"


def ship_in_background(state_dir: Path) -> subprocess.Popen[bytes] | None:
    """Start a detached sync when a team ledger is configured; None when there is none."""
    if team_settings() is None:
        return None
    import subprocess  # only a configured team ledger pays for it, not every stop

    return subprocess.Popen(
        # -P: the hook's working directory is the agent's tree, never on the import path.
        [sys.executable, "-P", "-m", "donegate", "ledger", "sync", "--state-dir", str(state_dir)],
        cwd=state_dir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


class Holder(Record):
    """The sync holding the lock: its pid (0: not written yet) and its deadline (epoch s)."""

    pid: int
    deadline: float

    def stuck(self, now: float) -> bool:
        """Whether the holder is past its deadline without having moved on."""
        return self.pid > 0 and now > self.deadline

    def says(self, now: float) -> str:
        """What a person is told about it."""
        if self.stuck(now):
            late = now - self.deadline
            return (
                f"another sync (pid {self.pid}) holds the lock but is stuck: it has made no "
                f"progress since its deadline passed {late:.0f} s ago; end it (kill {self.pid}) "
                "and the next sync ships these receipts"
            )
        who = f" (pid {self.pid})" if self.pid else ""
        return f"another sync{who} is shipping these receipts"


class SyncLock:
    """The state directory's sync lock as one process sees it: held by it, or by ``holder``."""

    def __init__(self, fd: int, held: bool, budget_s: float) -> None:
        self._fd, self.held, self._budget_s = fd, held, budget_s
        self.holder = None if held else _read_holder(fd)

    def __bool__(self) -> bool:
        return self.held

    def progress(self) -> None:
        """Push the deadline back by the budget: this holder is moving on."""
        if self.held:
            # Fixed width, written at once: a reader never sees half of one and half of another.
            record = f"{os.getpid():>10} {time.time() + self._budget_s:>20.3f}\n".encode()
            os.pwrite(self._fd, record, 0)


@contextmanager
def sync_lock(state_dir: Path, budget_s: float = 60.0) -> Iterator[SyncLock]:
    """The state directory's sync lock, taken if free; ``budget_s``: the holder's deadline.

    A lock file that cannot be opened (a state directory that is not writable) is
    :class:`InvalidInput` naming the directory.
    """
    fd = _open_lock(state_dir)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield SyncLock(fd, False, budget_s)
            return
        lock = SyncLock(fd, True, budget_s)
        lock.progress()
        try:
            yield lock
        finally:
            os.ftruncate(fd, 0)  # released: no holder is named any more
    finally:
        os.close(fd)


def current_holder(state_dir: Path) -> Holder | None:
    """The sync holding ``state_dir``'s lock now, or None (read without taking the lock)."""
    try:
        fd = os.open(state_dir / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return None
    try:
        found = _read_holder(fd)
    finally:
        os.close(fd)
    return found if found.pid else None


def _open_lock(state_dir: Path) -> int:
    try:
        return os.open(state_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise InvalidInput(
            f"state directory {state_dir} cannot be used: its sync lock {LOCK_FILE} cannot be "
            f"opened for writing: {exc.strerror or exc}"
        ) from None


def _read_holder(fd: int) -> Holder:
    # A holder that died (killed) left its record: a pid no longer running holds nothing.
    with contextlib.suppress(ValueError, OSError):
        pid, deadline = os.pread(fd, 64, 0).split()
        if _running(int(pid)):
            return Holder(int(pid), float(deadline))
    return Holder(0, float("inf"))


def _running(pid: int) -> bool:
    if pid <= 0:  # 0 and below name process groups, not a process
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: running
    return True
