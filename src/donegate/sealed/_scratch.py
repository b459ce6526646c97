"""A run's private scratch space, made without :mod:`tempfile`.

``tempfile`` brings ``shutil``, ``random``, ``bz2`` and ``lzma`` with it: 7 ms before a collect's
test command can start. A run needs two things of it: a directory of its own (mode 0700, a
random name, so that nobody could have made it, or the report paths in it, beforehand) and an
unnamed file for the command's output. Both are made here as ``tempfile`` makes them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

_TRIES = 100
_FLAGS = os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def temp_root() -> str:
    """Where temporary files go: ``$TMPDIR`` (or ``$TEMP``, ``$TMP``) when it is a directory."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(name)
        if value and os.path.isdir(value):
            return value
    return "/tmp"


def make_dir(prefix: str, under: Path | None = None) -> Path:
    """A new directory under ``under`` (else :func:`temp_root`), mode 0700, its name ``prefix``
    and 16 random hex digits; ``FileExistsError`` only if a hundred random names were all
    taken."""
    root = temp_root() if under is None else str(under)
    for _ in range(_TRIES):
        path = os.path.join(root, f"{prefix}{os.urandom(8).hex()}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return Path(path)
    raise FileExistsError(f"no free directory name under {root}")


def remove_dir(path: Path) -> None:
    """Remove a scratch directory and whatever the run left in it, as far as it can be."""
    import shutil  # after the run: its import no longer delays anything

    shutil.rmtree(path, ignore_errors=True)


def anonymous_file() -> BinaryIO:
    """An open file with no name (gone when closed), for a command's output."""
    root = temp_root()
    unnamed = getattr(os, "O_TMPFILE", 0)
    if unnamed:
        try:
            return os.fdopen(os.open(root, _FLAGS | unnamed, 0o600), "w+b")
        except OSError:
            pass  # a file system without unnamed files: a named one, removed at once
    for _ in range(_TRIES):
        path = os.path.join(root, f".donegate-output-{os.urandom(8).hex()}")
        try:
            fd = os.open(path, _FLAGS | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        os.unlink(path)
        return os.fdopen(fd, "w+b")
    raise FileExistsError(f"no free file name under {root}")
