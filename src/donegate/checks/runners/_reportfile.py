"""A report file that only this run can have written.

donegate's reports go to a fresh path in the run's private scratch directory. A runner that can
only write to a path the team configured (``report = "junit:PATH"``) gets a stale file there
removed before the run, and afterwards the file is read only if it is a regular file (never
through a symbolic link), is not the inode that was there before, and was modified after the
run started.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from donegate.record import Record

MAX_REPORT_BYTES = 64 * 1024 * 1024
# Filesystems stamp times from a coarse clock: a file written just after the start may carry a
# time a few milliseconds before it.
_CLOCK_SLACK_NS = 50_000_000


class Before(Record):
    """What was at the configured path before the run, and when the run started."""

    path: Path
    inode: tuple[int, int] | None
    started_ns: int
    problem: str | None = None


def clear(path: Path) -> Before:
    """Remove whatever is at ``path`` (a planted report); say so if it cannot be removed."""
    inode: tuple[int, int] | None = None
    problem = None
    try:
        found = os.lstat(path)
        inode = (found.st_dev, found.st_ino)
        if stat.S_ISDIR(found.st_mode):
            problem = f"the report path {str(path)!r} is a directory"
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        problem = f"a stale report at {str(path)!r} could not be removed: {exc.strerror or exc}"
    return Before(path, inode, time.time_ns(), problem)


def read_fresh(before: Before) -> tuple[bytes | None, str | None]:
    """The report's bytes, or None and why it cannot be believed to come from this run."""
    if before.problem is not None:
        return None, before.problem
    return read(before.path, before)


def read(path: Path, before: Before | None = None) -> tuple[bytes | None, str | None]:
    """Read ``path`` without following a link; with ``before``, also require a fresh file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, f"the runner wrote no report at {str(path)!r}"
    except OSError as exc:
        return None, f"the report {str(path)!r} could not be opened: {exc.strerror or exc}"
    with os.fdopen(fd, "rb") as handle:
        found = os.fstat(handle.fileno())
        if not stat.S_ISREG(found.st_mode):
            return None, f"the report {str(path)!r} is not a regular file"
        if before is not None:
            why = _stale(found, before)
            if why is not None:
                return None, why
        data = handle.read(MAX_REPORT_BYTES + 1)
    if len(data) > MAX_REPORT_BYTES:
        return None, f"the report {str(path)!r} is larger than {MAX_REPORT_BYTES} bytes"
    return data, None


def _stale(found: os.stat_result, before: Before) -> str | None:
    if before.inode == (found.st_dev, found.st_ino):
        return f"the report {str(before.path)!r} is the file that was there before the run"
    if found.st_mtime_ns < before.started_ns - _CLOCK_SLACK_NS:
        return f"the report {str(before.path)!r} is older than the run"
    return None
