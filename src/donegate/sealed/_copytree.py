"""Copying a snapshot's files into a private tree, each one checked against its digest.

Each file is read once through a descriptor opened without following links and without blocking
(a FIFO swapped in after the listing cannot hang the copy), hashed, and written: the bytes hashed
are the bytes written. Where the file system can clone (``FICLONE``: btrfs, XFS, bcachefs), the
copy is a reflink and the clone itself is hashed. A file whose bytes no longer match the
snapshot's digest was changed after donegate hashed it: that is a finding, and the sealed run does
not count.

What the snapshot leaves out (ignored paths) is not donegate's to vouch for. Caches and version
control directories stay out of the copy, so a run starts without the agent's bytecode or test
cache. Everything else ignored (a virtualenv, ``node_modules/``, built extension modules, data
files) is linked to the live path so that runners find it, at the same trust as an unsealed run;
runner files and importable code are never linked: they must come through the snapshot.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import shutil
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from donegate.globs import PathFilter
from donegate.record import Record

# Linux's FICLONE ioctl: _IOW(0x94, 9, int).
FICLONE = 0x40049409
CHUNK = 1 << 20
WORKERS = 4
INLINE = 16  # so few files are copied in the calling thread
# Fresh in every sealed run: a planted .pyc or test cache must not steer it.
NEVER_LINKED = PathFilter(
    (
        ".git/",
        ".hg/",
        ".svn/",
        ".donegate/",
        "__pycache__/",
        ".pytest_cache/",
        ".mypy_cache/",
        ".ruff_cache/",
        ".hypothesis/",
        # Runner files and importable code count only when hashed (in the snapshot).
        "*.py",
        "*.pyc",
        "*.pyo",
        "*.pth",
        "pytest.ini",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "conftest.py",
    )
)
_NO_CLONE = {errno.EOPNOTSUPP, errno.EXDEV, errno.EINVAL, errno.ENOTTY, errno.EBADF, errno.ENOSYS}


class Copied(Record):
    """What copying found: files that did not match, and ignored paths linked to the live tree."""

    findings: list[str]
    linked: list[str]


def blob_hasher(algorithm: str, size: int) -> hashlib._Hash:
    """A hash primed with git's blob header, so that its digest is a git blob id."""
    h = hashlib.new(algorithm)
    h.update(b"blob %d\0" % size)
    return h


class TreeCopier:
    """Copies ``entries`` (path -> expected digest) from ``live`` to ``copy``.

    ``written`` holds, for each file copied whose bytes matched, its digest and the copy's
    ``fstat`` just after writing (what a kept copy records: see :mod:`donegate.sealed._kept`);
    ``symlinks`` the snapshot's links it made.
    """

    def __init__(self, live: Path, copy: Path, algorithm: str) -> None:
        self.live = live
        self.copy = copy
        self.algorithm = algorithm
        self.can_clone = True
        self.dirs: set[str] = set()
        self.written: dict[str, tuple[str, os.stat_result]] = {}
        self.symlinks: list[str] = []  # the snapshot's links, made in the copy

    def run(
        self,
        entries: dict[str, str],
        *,
        present: Iterable[str] = (),
        made: Iterable[str] = ("",),
        dirs: set[str] | None = None,
    ) -> Copied:
        """Copy every entry but those ``present`` (already in the copy, with their bytes), into
        the directories ``made`` and the others it makes; then link what the snapshot left out
        of the copied directories. ``dirs``: the entries' :func:`directories`, if known."""
        dirs = self.dirs = directories(entries) if dirs is None else dirs
        for rel in sorted(dirs.difference(made)):
            os.mkdir(self._copy_path(rel), 0o700)
        skip = set(present)
        items = sorted(item for item in entries.items() if item[0] not in skip)
        if len(items) <= INLINE:  # a kept copy's refresh: threads (and their import) cost more
            findings = self._one(items)
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=WORKERS) as pool:
                results = pool.map(self._one, [items[i::WORKERS] for i in range(WORKERS)])
                findings = [f for batch in results for f in batch]
        linked = self._link_ignored(dirs, entries)
        return Copied(sorted(findings), linked)

    def _copy_path(self, rel: str) -> str:
        return os.path.join(self.copy, rel)

    def _live_path(self, rel: str) -> str:
        return os.path.join(self.live, rel)

    def _one(self, batch: list[tuple[str, str]]) -> list[str]:
        findings = []
        for rel, digest in batch:
            try:
                finding = self._copy_entry(rel, digest)
            except OSError as exc:  # fail closed: a file that could not be copied is no copy
                finding = f"{rel}: could not be copied ({exc.strerror or exc})"
            if finding is not None:
                findings.append(finding)
        return findings

    def _copy_entry(self, rel: str, digest: str) -> str | None:
        if not _is_digest(digest):
            return f"{rel}: donegate could not read it when hashing ({digest})"
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            src = os.open(self._live_path(rel), flags)
        except FileNotFoundError:
            return f"{rel}: deleted after donegate hashed it"
        except OSError as exc:
            if exc.errno != errno.ELOOP:  # ELOOP: the last component is a symlink
                raise
            return self._copy_link(rel, digest)
        try:
            return self._copy_file(rel, digest, src)
        finally:
            os.close(src)

    def _copy_link(self, rel: str, digest: str) -> str | None:
        target = os.readlink(os.fsencode(self._live_path(rel)))
        got = blob_hasher(self.algorithm, len(target))
        got.update(target)
        if got.hexdigest() != digest:
            return _changed(rel, digest, got.hexdigest())
        if rel in self.dirs:
            return None  # the snapshot holds the files below it: the copy has them as a directory
        os.symlink(self._link_target(rel, os.fsdecode(target)), self._copy_path(rel))
        self.symlinks.append(rel)
        return None

    def _link_target(self, rel: str, target: str) -> str:
        """The target in the copy: inside the tree, the copy's file; outside, the same file."""
        parent = os.path.dirname(self._live_path(rel))
        absolute = os.path.normpath(os.path.join(parent, target))
        inside = absolute == str(self.live) or absolute.startswith(f"{self.live}{os.sep}")
        if not inside:
            return absolute  # relative to the copy it would point elsewhere: pin it
        if os.path.isabs(target):
            return os.path.join(self.copy, os.path.relpath(absolute, self.live))
        return target

    def _copy_file(self, rel: str, digest: str, src: int) -> str | None:
        st = os.fstat(src)
        if not stat.S_ISREG(st.st_mode):
            return f"{rel}: no longer a regular file ({stat.filemode(st.st_mode)})"
        mode = (st.st_mode & 0o777) | 0o600
        dst = os.open(self._copy_path(rel), os.O_RDWR | os.O_CREAT | os.O_EXCL, mode)
        try:
            got = self._transfer(src, dst, st.st_size)
            if got == digest:
                self.written[rel] = (digest, os.fstat(dst))
        finally:
            os.close(dst)
        return None if got == digest else _changed(rel, digest, got)

    def _transfer(self, src: int, dst: int, size: int) -> str:
        """Copy ``src`` into ``dst``; the digest of the bytes that ``dst`` now holds."""
        if self.can_clone and size >= CHUNK:
            try:
                fcntl.ioctl(dst, FICLONE, src)
                return _digest_of(dst, self.algorithm)
            except OSError as exc:
                if exc.errno not in _NO_CLONE:
                    raise
                self.can_clone = False  # this file system cannot: don't ask again
        if size < CHUNK:
            data = os.read(src, size + 1)  # one byte more: a file that grew is read whole below
            if len(data) <= size:
                h = blob_hasher(self.algorithm, len(data))
                h.update(data)
                _write_all(dst, data)
                return h.hexdigest()
            os.lseek(src, 0, os.SEEK_SET)
        return _stream(src, dst, self.algorithm)

    def _link_ignored(self, dirs: set[str], entries: dict[str, str]) -> list[str]:
        """Link, in each copied directory, the live children the snapshot left out."""
        linked = []
        for rel in sorted(dirs):
            for name in _children(self._live_path(rel) if rel else str(self.live)):
                child = f"{rel}/{name}" if rel else name
                if child in entries or child in dirs or _never_linked(child):
                    continue
                os.symlink(self._live_path(child), self._copy_path(child))
                linked.append(child)
        return linked


def _never_linked(child: str) -> bool:
    return NEVER_LINKED.ignored(child) or NEVER_LINKED.ignored_dir(child)


def _children(path: str) -> Iterable[str]:
    try:
        with os.scandir(path) as found:
            return [entry.name for entry in found]
    except OSError:
        return []


def directories(entries: Iterable[str]) -> set[str]:
    """Every directory that holds an entry, ``""`` (the root) included."""
    dirs = {""}
    for parent in {rel.rpartition("/")[0] for rel in entries}:
        missing = parent
        while missing not in dirs:
            dirs.add(missing)
            missing = missing.rpartition("/")[0]
    return dirs


def _is_digest(digest: str) -> bool:
    return len(digest) in (40, 64) and all(c in "0123456789abcdef" for c in digest)


def _changed(rel: str, expected: str, got: str) -> str:
    return f"{rel}: changed after donegate hashed it (hashed {expected[:12]}, copied {got[:12]})"


def _digest_of(fd: int, algorithm: str) -> str:
    size = os.fstat(fd).st_size
    h = blob_hasher(algorithm, size)
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, CHUNK):
        h.update(chunk)
    return h.hexdigest()


def _stream(src: int, dst: int, algorithm: str) -> str:
    """Copy in chunks, then hash what ``dst`` holds (the size is known only at the end)."""
    while chunk := os.read(src, CHUNK):
        _write_all(dst, chunk)
    return _digest_of(dst, algorithm)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def remove(path: Path) -> None:
    """Remove a tree, even one whose tests made directories read-only."""
    shutil.rmtree(path, onerror=_writable_and_retry)


def _writable_and_retry(func: Callable[..., Any], path: str, _exc: Any) -> None:
    with contextlib.suppress(OSError):
        parent = os.path.dirname(path)
        os.chmod(parent, stat.S_IRWXU)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, stat.S_IRWXU)
        func(path)
