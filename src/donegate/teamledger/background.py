"""Shipping after a stop, without the stop waiting: a detached ``donegate ledger sync``.

The hook starts it and returns at once; the child has its own session (the host's kill of the
hook's process group does not reach it), no terminal and no pipes to the host. Two at once do
not pile up: ``ledger sync`` holds a lock in the state directory and a second one just leaves.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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


@contextmanager
def sync_lock(state_dir: Path) -> Iterator[bool]:
    """Hold the state directory's sync lock if free; yields whether this process holds it."""
    fd = os.open(state_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
