"""What happened to a kept copy while its checks ran, told by the kernel (Linux's inotify).

At each stop the kept copy must hold the snapshot's bytes and nothing else. The checks run in it
and may write to it, so a refresh that knows nothing of the last run stats every file of the
copy (see :mod:`donegate.sealed._kept`): on a 10,000-file tree, a third of what the stop spends
before its run. A watch on each directory of the copy, from the moment the copy is ready until
every process of its runs is gone, tells instead which files the runs wrote to, whoever wrote
and by whatever path: the kernel reports each write, change of mode or times, and each write-mode
close (which covers writes through a memory map) to the watch of the directory that holds the
name the file was opened by.

A name made in a directory of the copy is followed too (the next refresh removes it): a file a
test writes beside its sources, a report. A hard link made to a file of the copy is such a name,
and writes through it are reported at it, not at the file's own name: so a name made counts only
if, when the watch ends, it is no directory and no regular file with another link.
What a watch cannot follow, it does not vouch for, and the next refresh walks the whole copy:
a name removed or renamed anywhere (a hard link made, written through and removed leaves no
other trace), a directory made (what happens inside it is not watched), any change to a
directory of the copy, an event queue that overflowed, a watch the kernel dropped, or a
directory that could not be watched.

Processes the runs left behind could write after the watch ends. A run in the checks' sandbox
leaves none (its process namespace dies with its first process); a run outside it may (a
process that left the run's group), so a watch vouches for nothing once such a run was started
in its copy (:func:`note_unisolated`), whenever it was started.
"""

from __future__ import annotations

import os
import stat
import struct
import sys
from collections.abc import Iterable
from pathlib import Path

from donegate.record import Record

# From <sys/inotify.h>: the same values on every Linux architecture.
_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x002, 0x004, 0x008
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x040, 0x080, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_ONLYDIR, _DONT_FOLLOW = 0x01000000, 0x02000000
_NONBLOCK, _CLOEXEC = 0o4000, 0o2000000
_WRITES = _MODIFY | _ATTRIB | _CLOSE_WRITE
_NAMES = _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE | _DELETE_SELF | _MOVE_SELF
# What a watch can account for, on a name that is no directory. Any other bit refuses: the
# kernel's own (a queue overflow, a watch dropped, an unmount) and the one that marks a
# directory among them.
_FOLLOWED = _WRITES | _CREATE
_MASK = _WRITES | _NAMES | _ONLYDIR | _DONT_FOLLOW
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name, NUL-padded
# The directories where this process started a run outside the checks' sandbox.
_unisolated: set[str] = set()


def note_unisolated(run_dir: Path) -> None:
    """Say that a run was started in ``run_dir`` outside the checks' sandbox: no watch of a
    copy that holds it vouches for what happened there (see the module's doc)."""
    _unisolated.add(os.path.abspath(run_dir))


class Seen(Record):
    """What a watch saw: the copy's files ``written`` to, and the names ``made`` (paths in the
    copy); a name made and then written is in both."""

    written: frozenset[str]
    made: frozenset[str]


class Watch:
    """A watch on every directory of a copy; :meth:`seen` ends it and says what it saw."""

    def __init__(self, root: Path, fd: int, dirs: dict[int, str]) -> None:
        self.root = root
        self._fd: int | None = fd
        self._dirs = dirs  # watch descriptor -> the directory's path in the copy ("" the root)

    @classmethod
    def start(cls, root: Path, dirs: Iterable[str]) -> Watch | None:
        """Watch ``root`` and its directories ``dirs`` (paths from it); None where that cannot
        be done whole (not Linux, no inotify, too many directories for the user's limit)."""
        libc = _libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(_NONBLOCK | _CLOEXEC)
        if fd < 0:
            return None
        watched: dict[int, str] = {}
        for rel in sorted({"", *dirs}):
            path = os.fsencode(os.path.join(root, rel) if rel else root)
            wd = libc.inotify_add_watch(fd, path, _MASK)
            if wd < 0:
                _close_soon(fd)
                return None
            watched[wd] = rel
        return cls(root, fd, watched)

    def seen(self) -> Seen | None:
        """End the watch: what it saw since it began, or None if anything happened that it
        cannot account for (see the module's doc)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return None
        try:
            seen = _seen(_drain(fd), self._dirs)
            if seen is None or _holds_unisolated(self.root) or not _fresh(self.root, seen.made):
                return None
            return seen
        except OSError:
            return None
        finally:
            _close_soon(fd)

    def close(self) -> None:
        """End the watch without reading it."""
        fd, self._fd = self._fd, None
        if fd is not None:
            _close_soon(fd)


def _close_soon(fd: int) -> None:
    """Close ``fd`` on a thread of its own: closing a descriptor that held watches waits for the
    kernel to release them (a grace period: some 14 ms here), which the stop need not wait for.
    Nothing is read from it any more; the process's end closes it if the thread has not."""
    import threading

    threading.Thread(target=os.close, args=(fd,), name="donegate-unwatch", daemon=True).start()


def _drain(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return b"".join(chunks)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _seen(data: bytes, dirs: dict[int, str]) -> Seen | None:
    written: set[str] = set()
    made: set[str] = set()
    at = 0
    while at < len(data):
        wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
        at += _EVENT.size
        name = data[at : at + size].rstrip(b"\0")
        at += size
        where = dirs.get(wd)
        if where is None or mask & ~_FOLLOWED or not name:
            return None  # a name gone, a directory changed or made, an overflow: not followed
        rel = os.fsdecode(name)
        rel = f"{where}/{rel}" if where else rel
        (made if mask & _CREATE else written).add(rel)
    return Seen(frozenset(written), frozenset(made))


def _holds_unisolated(root: Path) -> bool:
    top = os.path.abspath(root)
    return any(run == top or run.startswith(f"{top}{os.sep}") for run in _unisolated)


def _fresh(root: Path, made: Iterable[str]) -> bool:
    """Whether each name made is no directory and no second link to a file."""
    for rel in made:
        try:
            st = os.lstat(os.path.join(root, rel))
        except FileNotFoundError:
            return False  # made and gone: its removal was an event, so this is a race at most
        if stat.S_ISDIR(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_nlink != 1):
            return False
    return True


def _libc() -> _Inotify | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return _Inotify()
    except (OSError, AttributeError):
        return None


class _Inotify:
    """The two calls of libc's that Python's standard library does not offer."""

    def __init__(self) -> None:
        import ctypes  # only a stop that runs checks in a kept copy pays for it

        libc = ctypes.CDLL(None, use_errno=True)
        self.inotify_init1 = libc.inotify_init1
        self.inotify_init1.argtypes = [ctypes.c_int]
        self.inotify_init1.restype = ctypes.c_int
        self.inotify_add_watch = libc.inotify_add_watch
        self.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.inotify_add_watch.restype = ctypes.c_int
