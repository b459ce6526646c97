"""A sealed copy kept from stop to stop, and brought up to date with only what changed.

Copying every file at every stop costs in proportion to the tree, not to the change: on a
10,000-file tree the copy alone took longer than the tests it was made for. Where the agent cannot
write donegate's state directory (its commands run in the host's sandbox), the copy can outlive
the stop: at the next one it is compared with the new snapshot, every file that does not hold the
snapshot's bytes for its path goes, and only what is missing is copied, checked against its
digest as a fresh copy's files are.

How a kept file is known to hold those bytes without reading it: the manifest written after each
refresh records, for each file, the digest it was checked against when copied and the copy's
stat just after writing (size, mtime, ctime, inode, mode). Writing a file moves its ctime, which
no unprivileged process can set back, and a file made anew gets a new ctime even where it reuses
the inode; so a file the last run changed (the checks run in this copy and may write to it) has
another stat, and is copied again. A change made within the file system clock's tick of the
copy's writing would leave its stat as recorded: a file whose ctime is not older than the last
refresh's start, less a tick, is hashed again before it is kept (as git does with its racily
clean entries); past that one reading, its stat vouches for it. The tick is the file system's:
two seconds where it keeps whole seconds (FAT, HFS+), else a generous bound on a kernel's
coarse clock.

Where the last stop's runs were watched (see :mod:`donegate.sealed._watch`), the stat of each file
need not be read at all: the watch names the files the runs wrote to and the names they made,
the kernel's word for every process, and a refresh trusts the manifest for the rest of the copy
(the files, the directories and the links it made, which the manifest lists too). Only a watch
that saw nothing it could not account for is kept, beside the manifest it belongs to (a random
token pairs the two); otherwise the refresh walks the copy as above.

The manifest is trusted as the rest of the state directory is: only where no process of the agent
can write it. Elsewhere (an unconfined agent) the caller makes a fresh copy at every stop, which
reads every live file again; the kept copy is not used.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from donegate.record import Record
from donegate.sealed._copytree import CHUNK, blob_hasher, remove
from donegate.sealed._watch import Seen

MANIFEST = "manifest"
WATCHED = "watched"  # what a watch of the last stop's runs saw, for the manifest of its token
_FORMAT = "donegate-kept-copy 2"
_FORMATS = ("donegate-kept-copy 1", _FORMAT)  # the first lists no directories or links
# A file system that keeps whole seconds (FAT ticks every two); a kernel's coarse clock ticks
# at least every 10 ms (HZ=100), and may lag the clock donegate reads by as much.
RACY_NS = 2_000_000_000
FINE_RACY_NS = 50_000_000

_now = time.time_ns  # the clock of the racy horizon (a seam for the tests)


# One file of the kept copy: the digest its bytes were checked against, and the copy's stat then
# (size, mtime, ctime, inode, mode). A plain list, as JSON reads it: a manifest holds one per
# file of the tree, read and written at every stop.
Kept = list[str | int]


def kept(digest: str, st: os.stat_result) -> Kept:
    """The record of a file just written with ``digest``'s bytes, from its ``fstat``."""
    return [digest, *_stat_of(st)]


def _stat_of(st: os.stat_result) -> list[str | int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode]


class Manifest(Record):
    """What the last refresh left: the files it vouches for, and its racy horizon; the
    directories and links it made (None: not listed); and what the watch of the runs after it
    saw (None: no watch vouches for them, and the copy is walked)."""

    files: dict[str, Kept]
    horizon_ns: int
    dirs: frozenset[str] | None = None
    links: tuple[str, ...] = ()
    watched: Seen | None = None


def take_manifest(place: Path) -> Manifest:
    """The manifest of the copy at ``place``, removed from disk with what its runs' watch saw: a
    refresh that dies half-way leaves none, and the next one trusts no file of the copy.
    Unreadable: an empty one."""
    empty = Manifest({}, 0)
    data, seen = _taken(place / MANIFEST), _taken(place / WATCHED)
    try:
        # marshal, not JSON: ten times faster for the ten thousand rows of a tree, and the file
        # is read only where the agent cannot write it (see the module's doc).
        form, horizon, files, *listed = marshal.loads(data)
    except (ValueError, TypeError, EOFError):
        return empty
    # Rows are checked as they are used: a malformed one matches no file.
    if form not in _FORMATS or type(horizon) is not int or type(files) is not dict:
        return empty
    if form != _FORMAT or len(listed) != 3:
        return Manifest(files, horizon)
    dirs, links, token = listed
    if type(dirs) is not list or type(links) is not list:
        return Manifest(files, horizon)
    return Manifest(files, horizon, frozenset(dirs), tuple(links), _watched(seen, token))


def _taken(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""
    finally:
        with contextlib.suppress(OSError):
            path.unlink()


def _watched(data: bytes, token: object) -> Seen | None:
    """The watch's record, if it is the one of the manifest with ``token``."""
    try:
        ours, written, made = marshal.loads(data)
    except (ValueError, TypeError, EOFError):
        return None
    if ours != token or type(written) is not list or type(made) is not list:
        return None
    return Seen(frozenset(written), frozenset(made))


def write_manifest(
    place: Path,
    files: Mapping[str, Kept],
    began_ns: int,
    dirs: Iterable[str] = (),
    links: Iterable[str] = (),
) -> str:
    """Record ``files`` as the copy holds them, for a refresh that began at ``began_ns``, with
    the ``dirs`` and ``links`` it made; the manifest's token (see :func:`write_watched`)."""
    # The file system's tick, read off a file just written: whole seconds, or finer.
    temporary = place / f".{MANIFEST}.tmp"
    temporary.write_bytes(b"")
    whole_seconds = os.stat(temporary).st_ctime_ns % 1_000_000_000 == 0
    # Every stat recorded was taken after the refresh began, or was trusted under the previous
    # horizon, which is older: this refresh's horizon holds for all of them.
    horizon = max(0, began_ns - (RACY_NS if whole_seconds else FINE_RACY_NS))
    token = os.urandom(16).hex()
    rows = (_FORMAT, horizon, dict(files), sorted(dirs), sorted(links), token)
    temporary.write_bytes(marshal.dumps(rows))
    os.replace(temporary, place / MANIFEST)
    return token


def write_watched(place: Path, token: str, seen: Seen) -> None:
    """Keep what the watch of the runs on the copy saw, for the manifest of ``token``: only for
    runs that ended with every process they started (see :mod:`donegate.sealed._watch`)."""
    temporary = place / f".{WATCHED}.tmp"
    temporary.write_bytes(marshal.dumps((token, sorted(seen.written), sorted(seen.made))))
    os.replace(temporary, place / WATCHED)


class Pruned(Record):
    """What a kept copy still holds for the new snapshot: files (with their records) and dirs."""

    files: dict[str, Kept]
    dirs: set[str]


def prune(
    copy: Path,
    entries: Mapping[str, tuple[str, int]],
    dirs: set[str],
    manifest: Manifest,
    algorithm: str,
) -> Pruned:
    """Remove from ``copy`` everything that is not the snapshot's bytes at its path.

    ``entries`` maps each path of the snapshot to its digest and its live mode (-1 unknown);
    ``dirs`` are the directories that hold them. Kept: directories in ``dirs`` and regular files
    the manifest vouches for with the entry's digest. Gone: every other file, directory, link
    (links are made anew at each refresh, from the snapshot and the live tree) or special file.
    """
    files: dict[str, Kept] = {}
    present = {""}
    _writable_dir(copy)
    stack = [""]
    while stack:
        where = stack.pop()
        prefix = f"{where}/" if where else ""
        with os.scandir(copy / where if where else copy) as found:
            children = list(found)
        for child in children:
            rel = prefix + child.name
            st = child.stat(follow_symlinks=False)
            if rel in dirs and stat.S_ISDIR(st.st_mode):
                if st.st_mode & stat.S_IRWXU != stat.S_IRWXU:
                    os.chmod(child.path, stat.S_IRWXU)  # a test may have made it read-only
                present.add(rel)
                stack.append(rel)
                continue
            record, entry = manifest.files.get(rel), entries.get(rel)
            if record is not None and entry is not None and _holds(record, entry, st, manifest):
                racy = st.st_ctime_ns >= manifest.horizon_ns
                # Racily clean: its stat could hide a change made just after it was taken.
                if not racy or _digest(child.path, st.st_size, algorithm) == entry[0]:
                    files[rel] = record
                    continue
            _remove(child.path, st)
    return Pruned(files, present)


def prune_watched(
    copy: Path, entries: Mapping[str, tuple[str, int]], dirs: set[str], manifest: Manifest
) -> Pruned | None:
    """:func:`prune` without reading the copy, where a watch vouches for what the last runs did
    to it (``manifest.watched``); None where none does. Removed: what the runs made or wrote
    to, the links the last refresh made (each refresh makes them anew), the files the new
    snapshot does not hold with their digest and mode, and the directories it no longer has."""
    watched, made_dirs = manifest.watched, manifest.dirs
    if watched is None or made_dirs is None:
        return None
    for rel in sorted({*watched.made, *manifest.links}):
        _gone(copy / rel)
    files: dict[str, Kept] = {}
    for rel, record in manifest.files.items():
        entry = entries.get(rel)
        if entry is not None and rel not in watched.written and _listed_holds(record, entry):
            files[rel] = record
        else:
            _gone(copy / rel)
    gone = made_dirs.difference(dirs)
    for rel in gone:
        if rel.rpartition("/")[0] not in gone:  # else removed with its parent
            with contextlib.suppress(FileNotFoundError):
                remove(copy / rel)
    return Pruned(files, set(made_dirs.intersection(dirs)))


def _listed_holds(record: Kept, entry: tuple[str, int]) -> bool:
    """Whether the kept file of ``record``, as recorded, holds ``entry``'s bytes and mode."""
    if type(record) is not list or len(record) != 6 or record[0] != entry[0]:
        return False
    # The live file's mode changed (made executable, say): copy it again.
    mode, live_mode = record[5], entry[1]
    return live_mode == -1 or (type(mode) is int and mode & 0o7777 == (live_mode & 0o7777) | 0o600)


def _gone(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _holds(record: Kept, entry: tuple[str, int], st: os.stat_result, manifest: Manifest) -> bool:
    """Whether the kept file of ``record``, now of stat ``st``, still holds ``entry``'s bytes
    with its mode. Field by field: this runs for every file of the tree at every stop."""
    if not _listed_holds(record, entry):
        return False
    if record[1] != st.st_size or record[2] != st.st_mtime_ns or record[3] != st.st_ctime_ns:
        return False
    return record[4] == st.st_ino and record[5] == st.st_mode


def _digest(path: str, size: int, algorithm: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        h = blob_hasher(algorithm, size)
        read = 0
        while chunk := f.read(CHUNK):
            h.update(chunk)
            read += len(chunk)
    return h.hexdigest() if read == size else None


def _writable_dir(path: Path) -> None:
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"the kept copy is not a directory: {path}")
    if st.st_mode & stat.S_IRWXU != stat.S_IRWXU:
        os.chmod(path, stat.S_IRWXU)


def _remove(path: str, st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode):
        remove(Path(path))
    else:
        os.unlink(path)


def began() -> int:
    """The moment a refresh begins, on the racy horizon's clock."""
    return _now()


def clear(path: Path) -> None:
    """Remove a directory of the kept place that is rebuilt at each refresh (the import links)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        remove(path)
