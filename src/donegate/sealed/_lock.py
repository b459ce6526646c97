"""An exclusive lock on a file, held for a ``with`` block (POSIX ``flock``)."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def held(lock: Path, *, wait: bool) -> Iterator[bool]:
    """Hold ``lock`` (made if missing); yields whether it is held, which is always with ``wait``.

    Without ``wait``, a lock that another process holds, or a file that cannot be opened, yields
    False at once.
    """
    try:
        handle = lock.open("a")
    except OSError:
        if wait:
            raise
        yield False
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            if wait:
                raise
            yield False
            return
        yield True
