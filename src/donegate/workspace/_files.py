"""The files the hook path touches: the tree's read safely, the state directory's written whole.

The tree is the agent's: any of its names may be a FIFO (opening one for reading blocks until a
writer comes), a device, a symlink swapped in after an ``lstat``, or a file of gigabytes. So a
tree file is opened without following a last symlink and without blocking, checked to be a
regular file on the open descriptor (what an earlier ``lstat`` saw may have been replaced), and
read in bounded memory: hashed in chunks, or read whole only up to a limit the caller names.

The state directory is donegate's: a file there is written through a temporary file and a
rename, so that a concurrent reader never sees half of one.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from donegate.workspace import _hashes

# A fresh name is created exclusively (O_EXCL) and never follows a link; tempfile.mkstemp does
# the same, but importing tempfile (shutil, random, bz2, lzma) costs a stop hook 5 ms.
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_TRIES = 100


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = _temporary(path)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _temporary(path: Path) -> tuple[int, str]:
    """A new private file beside ``path`` (mode 0600), opened for writing, and its name."""
    for _ in range(_TRIES):
        tmp = f"{path.parent}{os.sep}.{path.name}.{os.urandom(6).hex()}"
        try:
            return os.open(tmp, _CREATE, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


# O_NONBLOCK: opening a FIFO for reading would wait for a writer; on a regular file it does
# nothing. O_NOFOLLOW: a symlink put in place of a file since its lstat is refused.
_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
CHUNK = 1024 * 1024
# The kernel's own file systems: their "files" never end (/dev/zero, /proc/kcore), block
# (/proc/kmsg) or change at each read. Nothing under them is read as part of a workspace.
PSEUDO = ("/proc", "/sys", "/dev")


def is_pseudo(path: str | Path) -> bool:
    """Whether the resolved ``path`` lies on one of the kernel's own file systems."""
    text = str(path)
    return any(text == top or text.startswith(f"{top}/") for top in PSEUDO)


class NotRegular(Exception):
    """What was opened is not a regular file (a FIFO, a device...): it was never read."""

    def __init__(self, st: os.stat_result) -> None:
        super().__init__(f"not a regular file (mode {st.st_mode:o})")
        self.st = st


def _open(path: str | Path) -> tuple[int, os.stat_result]:
    """A descriptor on the regular file at ``path`` and its stat; raise NotRegular otherwise."""
    fd = os.open(path, _READ)
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegular(st)
    return fd, st


def read_head(path: str | Path, size: int) -> bytes:
    """At most the first ``size`` bytes of the regular file at ``path``."""
    fd, _ = _open(path)
    with os.fdopen(fd, "rb") as f:
        return f.read(size)


def read_capped(path: str | Path, limit: int) -> bytes | None:
    """The whole regular file at ``path``; ``None`` when it holds more than ``limit`` bytes.

    Never more than ``limit + 1`` bytes are read, whatever the file's size says or becomes.
    """
    fd, st = _open(path)
    with os.fdopen(fd, "rb") as f:
        if st.st_size > limit:
            return None
        data = f.read(limit + 1)
    return data if len(data) <= limit else None


def blob_digest(path: str | Path, fmt: str, keep: int) -> tuple[str | None, bytes | None]:
    """The git blob id of the regular file at ``path``, and its content when at most ``keep``.

    A larger file is hashed in chunks of :data:`CHUNK`. A blob id begins with the content's
    size: a file whose size changed while it was read has none (``None``), and the caller
    treats it as unreadable (it is read again at the next snapshot, its stat having changed).
    """
    fd, _ = _open(path)
    with os.fdopen(fd, "rb") as f:
        head = f.read(keep + 1)
        if len(head) <= keep:
            return _hashes.blob_id(fmt, head), head
        size = os.fstat(fd).st_size
        h = _hashes.new(fmt)
        h.update(b"blob %d\0" % size)
        h.update(head)
        done = len(head)
        while done <= size and (chunk := f.read(CHUNK)):
            h.update(chunk)
            done += len(chunk)
    return (h.hexdigest() if done == size else None), None
