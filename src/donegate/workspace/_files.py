"""Writing files in the state directory so that a concurrent reader never sees half of one."""

from __future__ import annotations

import os
from pathlib import Path

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
