"""A snapshot of a working tree: every file donegate considers, with a content digest.

Which files: in a git work tree, the index's files and the untracked files that are not ignored
(``git ls-files``); elsewhere, a walk of the tree. Either way the ignore patterns
(:data:`~donegate.workspace.patterns.DEFAULT_IGNORES` plus the caller's) are left out.

Digests are git blob ids (``sha1`` or ``sha256`` of ``blob <size>\\0<content>``), so a snapshot
compares directly with ``HEAD``'s tree and git's object database doubles as a store of old
contents. A symlink's digest is that of its target text, as in git.

Speed: a file whose ``(size, mtime_ns, ctime_ns, inode)`` equals the previous snapshot's is not
read again. The times serve only as a cache key for hashing, never as the time of a write; the
ctime is part of the key because a process cannot set it, so an agent that restores an old mtime
with ``os.utime`` still gets its file read. A file changed too close to the previous snapshot to
tell by its timestamps (git's "racily clean" case) is read again.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from donegate.errors import InvalidInput
from donegate.gitlisting import resolved
from donegate.workspace import _git
from donegate.workspace.patterns import DEFAULT_IGNORES, PathFilter

Origin = Literal["git", "walk", "head", "empty"]
Clock = Callable[[], datetime]
# Called with (digest, content) for freshly read files small enough to keep as old contents.
Keeper = Callable[[str, bytes], None]

KEEP_LIMIT = 256 * 1024
FORMAT_VERSION = 1
_RACY_NS = 2_000_000_000
_LARGE = 256 * 1024


def utc_now() -> datetime:
    """The clock: an aware UTC datetime."""
    return datetime.now(UTC)


def rfc3339(value: datetime) -> str:
    """``value`` as RFC 3339 in UTC with microseconds and a ``Z``."""
    return value.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


class Entry(NamedTuple):
    """One file: its digest and the stat fields used as the hashing cache key.

    A named tuple, not a dataclass: a snapshot holds one per file and loads them by the ten
    thousand at every agent stop.
    """

    digest: str
    size: int = -1
    mtime_ns: int = -1
    ctime_ns: int = -1
    inode: int = -1

    def same_stat(self, st: os.stat_result) -> bool:
        """Whether ``st`` carries the same cache key (and so, the same content)."""
        return (
            self.size == st.st_size
            and self.mtime_ns == st.st_mtime_ns
            and self.ctime_ns == st.st_ctime_ns
            and self.inode == st.st_ino
        )


class Snapshot:
    """The files of a tree at one moment, by ``/``-separated path relative to ``root``.

    ``origin`` says what it describes: a git work tree, a plain walk, ``HEAD``'s tree (a session
    without a baseline) or nothing at all (a non-git tree without a baseline: every file is new).
    ``taken_at`` is when donegate finished observing the tree; ``started_ns`` when it began.
    Treat it as immutable. A plain class rather than a dataclass: the hook path defines it at every
    agent stop, and it memoises its fingerprint.
    """

    __slots__ = ("_fingerprint", "algorithm", "entries", "origin", "root", "started_ns", "taken_at")

    def __init__(
        self,
        root: Path,
        taken_at: datetime,
        origin: Origin,
        algorithm: str,
        entries: dict[str, Entry] | None = None,
        started_ns: int = 0,
    ) -> None:
        self.root = root
        self.taken_at = taken_at
        self.origin = origin
        self.algorithm = algorithm
        self.entries: dict[str, Entry] = {} if entries is None else entries
        self.started_ns = started_ns
        self._fingerprint: str | None = None

    def _key(self) -> tuple[object, ...]:
        return (
            self.root,
            self.taken_at,
            self.origin,
            self.algorithm,
            self.entries,
            self.started_ns,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Snapshot) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable-looking contents: not hashable

    def __repr__(self) -> str:
        return (
            f"Snapshot(root={self.root!r}, taken_at={self.taken_at!r}, origin={self.origin!r}, "
            f"algorithm={self.algorithm!r}, entries=<{len(self.entries)} files>)"
        )

    @classmethod
    def take(
        cls,
        root: str | Path,
        previous: Snapshot | Callable[[], Snapshot | None] | None = None,
        *,
        ignore: Sequence[str] = (),
        keep: Keeper | None = None,
        clock: Clock = utc_now,
    ) -> Snapshot:
        """Observe the tree at ``root`` now, reusing ``previous``'s digests where it can.

        ``ignore`` adds patterns to the default ones; ``keep`` receives the contents of freshly
        read small files that git does not already hold (for classifying later edits).
        """
        top = resolved(root)
        started = time.time_ns()
        skip = PathFilter((*DEFAULT_IGNORES, *ignore))
        fmt = _git.object_format(top)
        found = _git.listing(top, fmt) if fmt else None
        if found is None:
            return cls._walked(top, _resolve(previous), skip, keep, clock, started)
        paths = skip.keep([*found.tracked, *found.untracked])
        # What git vouches for is its index blob; only the rest is stat'ed and hashed here.
        clean = {p: Entry(found.tracked[p]) for p in paths if p in found.clean}
        rest = sorted({p for p in paths if p not in clean})
        cache = _reusable(_resolve(previous), top, found.object_format) if rest else {}
        hasher = _Hasher(top, found.object_format, cache)
        entries = {**clean, **hasher.run(rest, found.tracked, keep)}
        # The listing may have begun before this call (a hook starts it early): the snapshot
        # describes the tree from then on, which keeps the racy-clean horizon honest.
        began = min(started, found.began_ns) if found.began_ns else started
        return cls(top, clock(), "git", found.object_format, entries, began)

    @classmethod
    def _walked(
        cls,
        top: Path,
        previous: Snapshot | None,
        skip: PathFilter,
        keep: Keeper | None,
        clock: Clock,
        started: int,
    ) -> Snapshot:
        hasher = _Hasher(top, "sha1", _reusable(previous, top, "sha1"))
        entries = hasher.run(sorted(_walk(top, skip)), {}, keep)
        return cls(top, clock(), "walk", "sha1", entries, started)

    @classmethod
    def from_head(cls, root: str | Path, *, ignore: Sequence[str] = ()) -> Snapshot:
        """``HEAD``'s tree under ``root`` as a snapshot; empty when there is no commit yet."""
        top = resolved(root)
        fmt = _git.object_format(top)
        tree = (_git.head_tree(top) or {}) if fmt else {}
        skip = PathFilter((*DEFAULT_IGNORES, *ignore))
        entries = {p: Entry(oid) for p, oid in tree.items() if not skip.ignored(p)}
        return cls(top, utc_now(), "head", fmt or "sha1", entries)

    @classmethod
    def empty(cls, root: str | Path, algorithm: str = "sha1") -> Snapshot:
        """A snapshot with no files: the baseline of a non-git tree never observed before."""
        return cls(Path(root).resolve(), utc_now(), "empty", algorithm, {})

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; :meth:`from_json` reads it back."""
        return {
            "version": FORMAT_VERSION,
            "root": str(self.root),
            "taken_at": rfc3339(self.taken_at),
            "started_ns": self.started_ns,
            "origin": self.origin,
            "algorithm": self.algorithm,
            "entries": self.entries,  # each entry is a tuple, so a JSON array
        }

    @classmethod
    def from_json(cls, data: Any) -> Snapshot:
        """Read a dict written by :meth:`to_json`; raise ``InvalidInput`` on anything else."""
        try:
            if data["version"] != FORMAT_VERSION:
                raise InvalidInput(f"snapshot format {data['version']!r}, expected 1")
            entries = {p: Entry._make(e) for p, e in data["entries"].items()}
            taken_at = datetime.fromisoformat(data["taken_at"].replace("Z", "+00:00"))
            return cls(
                Path(data["root"]),
                taken_at,
                data["origin"],
                data["algorithm"],
                entries,
                int(data["started_ns"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InvalidInput(f"not a donegate snapshot: {exc}") from None

    @property
    def fingerprint(self) -> str:
        """A digest of which files hold which contents: equal fingerprints, no writes between."""
        if self._fingerprint is None:
            self._fingerprint = self._digest()
        return self._fingerprint

    def _digest(self) -> str:
        h = hashlib.blake2b(self.algorithm.encode(), digest_size=20)
        for path in sorted(self.entries):
            h.update(f"\0{path}\0{self.entries[path].digest}".encode())
        return h.hexdigest()

    def dumps(self) -> str:
        """The snapshot as compact JSON text."""
        return json.dumps(self.to_json(), separators=(",", ":"))


def _resolve(previous: Snapshot | Callable[[], Snapshot | None] | None) -> Snapshot | None:
    return previous() if callable(previous) else previous


def _reusable(previous: Snapshot | None, root: Path, fmt: str) -> dict[str, Entry]:
    """The previous entries safe to reuse: same tree, same algorithm, not racily clean."""
    if previous is None or previous.root != root or previous.algorithm != fmt:
        return {}
    if previous.origin not in ("git", "walk"):
        return {}
    horizon = previous.started_ns - _RACY_NS
    return {
        p: e
        for p, e in previous.entries.items()
        if e.size >= 0 and max(e.mtime_ns, e.ctime_ns) < horizon
    }


def _walk(root: Path, skip: PathFilter) -> list[str]:
    """Every file (and symlink) under ``root`` outside ignored directories."""
    return list(_walk_dir(root, "", skip))


def _walk_dir(root: Path, prefix: str, skip: PathFilter) -> Iterator[str]:
    try:
        children = list(os.scandir(root / prefix if prefix else root))
    except OSError:
        return
    for child in children:
        rel = f"{prefix}{child.name}"
        if child.is_dir(follow_symlinks=False):
            if not skip.ignored_dir(rel):
                yield from _walk_dir(root, f"{rel}/", skip)
        elif not skip.ignored(rel):
            yield rel


class _Hasher:
    """Stats a list of paths, then digests the files the cache cannot vouch for.

    Stat calls and small files run in this thread; large files are read and hashed in a thread
    pool, where both release the GIL.
    """

    def __init__(self, root: Path, fmt: str, cache: dict[str, Entry]) -> None:
        self.prefix = f"{root}{os.sep}"
        self.fmt = fmt
        self.cache = cache
        self.known: dict[str, str] = {}
        self.keep: Keeper | None = None

    def run(self, paths: list[str], known: dict[str, str], keep: Keeper | None) -> dict[str, Entry]:
        """Entries for ``paths``; ``keep`` gets contents that ``known`` (the index) lacks."""
        self.known, self.keep = known, keep
        entries: dict[str, Entry] = {}
        todo: list[tuple[str, os.stat_result]] = []
        for path in paths:
            try:
                st = os.lstat(self.prefix + path)
            except FileNotFoundError:
                continue  # listed by git but gone from the tree: a deletion
            except OSError:
                entries[path] = Entry("unreadable:stat")
                continue
            if stat.S_ISDIR(st.st_mode):
                continue  # a nested repository or submodule checkout, not a file of this tree
            cached = self.cache.get(path)
            if cached is not None and cached.same_stat(st):
                entries[path] = cached
            else:
                todo.append((path, st))
        entries.update(self._hash_all(todo))
        return entries

    def _hash_all(self, todo: list[tuple[str, os.stat_result]]) -> list[tuple[str, Entry]]:
        # Small files hash fastest in this thread: hashlib keeps the GIL below 2 KiB and
        # threads contending for it are slower than none. Large files go to a pool.
        small = [item for item in todo if item[1].st_size < _LARGE]
        large = [item for item in todo if item[1].st_size >= _LARGE]
        done = [self._entry(item) for item in small]
        if len(large) < 2:
            return done + [self._entry(item) for item in large]
        from concurrent.futures import ThreadPoolExecutor  # only large files pay for it

        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 2)) as pool:
            return done + list(pool.map(self._entry, large))

    def _entry(self, item: tuple[str, os.stat_result]) -> tuple[str, Entry]:
        path, st = item
        digest = self._digest(path, st)
        return path, Entry(digest, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

    def _digest(self, path: str, st: os.stat_result) -> str:
        full = self.prefix + path
        try:
            if stat.S_ISLNK(st.st_mode):
                return blob_id(self.fmt, os.fsencode(os.readlink(full)))
            content = _read(full)
        except OSError:
            # Fail closed: an unreadable file is a write whenever its stat changes.
            return f"unreadable:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
        digest = blob_id(self.fmt, content)
        if self.keep is not None and len(content) <= KEEP_LIMIT and self.known.get(path) != digest:
            self.keep(digest, content)
        return digest


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def blob_id(fmt: str, content: bytes) -> str:
    """The git blob id of ``content`` under object format ``fmt`` (``sha1`` or ``sha256``)."""
    h = hashlib.new(fmt)
    h.update(b"blob %d\0" % len(content))
    h.update(content)
    return h.hexdigest()
