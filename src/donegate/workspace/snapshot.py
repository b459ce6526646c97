"""A snapshot of a working tree: every file donegate considers, with a content digest.

What is seen: git lists paths (hardened, see :mod:`donegate.gitlisting`), but it is a hint of
where to look, never of what a file holds. Every listed file is ``lstat``-ed and compared with
donegate's own record from the previous snapshot; a file whose record differs, or that was never
seen, is read and hashed. No index entry, stat cache, filter, exclude file or monitor of the
repository can make a changed file look unchanged.

Which files: the index's files; every untracked file except those under the default noise
directories (``.venv/``, ``node_modules/``...; see :data:`~donegate.workspace.patterns.
DEFAULT_IGNORES`); nested repositories and submodules, descended. Ignore rules (the tree's
``.gitignore`` files, the defaults, the caller's ``ignore``) leave a path out only when it cannot
change what a check runs: runner files, importable code (:data:`~donegate.workspace.runnerfiles.
WATCHED`) and the caller's ``watch`` globs are always seen. Default ignores apply to untracked
paths only. Bytecode under ``__pycache__/`` is noise while it matches its source; a ``.pyc``
without a source, or whose header names another source, is seen. ``.git/info/exclude`` and
``core.excludesFile`` are not read.

Digests are git blob ids (``sha1`` or ``sha256`` of ``blob <size>\\0<content>``), so a snapshot
compares directly with ``HEAD``'s tree and git's object database doubles as a store of old
contents. A symlink's digest is that of its target text, as in git; when its target is not
otherwise seen (it leaves the tree, or lies in an ignored place) the target's content is part of
the digest (``link:...``), and the files under a linked directory are listed through the link.
FIFOs, sockets and devices are recorded by kind (``special:...``) and never opened.

Speed: a file whose ``(size, mtime_ns, ctime_ns, inode, mode)`` equals the previous snapshot's is
not read again. The times serve only as a cache key for hashing, never as the time of a write;
the ctime is part of the key because a process cannot set it, so an agent that restores an old
mtime with ``os.utime`` still gets its file read. A file changed too close to the previous
snapshot to tell by its timestamps (git's "racily clean" case) is read again.
"""

from __future__ import annotations

import json
import marshal
import os
import stat
import time
from collections.abc import Callable, Container, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.gitlisting import resolved
from donegate.record import Record
from donegate.timefmt import parse_rfc3339, rfc3339
from donegate.workspace import _git, _hashes
from donegate.workspace._files import (
    NotRegular,
    blob_digest,
    is_pseudo,
    read_capped,
    read_head,
)
from donegate.workspace.patterns import DEFAULT_IGNORES, PathFilter
from donegate.workspace.runnerfiles import WATCHED
from donegate.workspace.walk import Listings, Walker, listings_sized

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    Origin = Literal["git", "walk", "head", "empty"]
else:
    Origin = str  # a Literal for the type checker; its values are str at run time
Clock = Callable[[], datetime]
# Called with (digest, content) for freshly read files small enough to keep as old contents.
Keeper = Callable[[str, bytes], None]

KEEP_LIMIT = 256 * 1024
blob_id = _hashes.blob_id  # a snapshot's digests, by the name its readers know them
FORMAT_VERSION = 1  # entries of five fields (no mode) still read
# The binary stat record (:meth:`Snapshot.to_record`): its tag and version, checked on reading.
RECORD_TAG = "donegate-stat-record"
RECORD_VERSION = 2  # 2 adds the directories' listings; a record of version 1 is still read
_RACY_NS = 2_000_000_000
_LARGE = 256 * 1024
# At most this many files are read through a symlink to a directory the snapshot does not see.
LINKED_LIMIT = 2000
_PYC_HEADER = 16
_SOURCE_LIMIT = 16 * 1024 * 1024


def utc_now() -> datetime:
    """The clock: an aware UTC datetime."""
    return datetime.now(UTC)


class Entry(Record):
    """One file: its digest and donegate's own stat record of it (the hashing cache key).

    A named tuple, not a dataclass: a snapshot holds one per file and loads them by the ten
    thousand at every agent stop. ``size`` is -1 where the record must not be trusted next time
    (the content lies behind a symlink, whose own stat does not change with it).
    """

    digest: str
    size: int = -1
    mtime_ns: int = -1
    ctime_ns: int = -1
    inode: int = -1
    mode: int = -1

    def same_stat(self, st: os.stat_result) -> bool:
        """Whether ``st`` carries the same cache key (and so, the same content)."""
        return (
            self.size == st.st_size
            and self.mtime_ns == st.st_mtime_ns
            and self.ctime_ns == st.st_ctime_ns
            and self.inode == st.st_ino
            and self.mode == st.st_mode
        )

    @property
    def kind(self) -> str:
        """``file``, ``symlink``, ``fifo``, ``socket``, ``device`` or ``unknown`` (no record)."""
        return file_kind(self.mode) if self.mode >= 0 else "unknown"


def file_kind(mode: int) -> str:
    """The kind of file an ``st_mode`` describes."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "directory" if stat.S_ISDIR(mode) else "unknown"


class Snapshot:
    """The files of a tree at one moment, by ``/``-separated path relative to ``root``.

    ``origin`` says what it describes: a git work tree, a plain walk, ``HEAD``'s tree (a session
    without a baseline) or nothing at all (a non-git tree without a baseline: every file is new).
    ``taken_at`` is when donegate finished observing the tree; ``started_ns`` when it began.
    Treat it as immutable. A plain class rather than a dataclass: the hook path defines it at every
    agent stop, and it memoises its fingerprint.
    """

    __slots__ = (
        "_fingerprint",
        "algorithm",
        "entries",
        "listings",
        "origin",
        "renewable",
        "root",
        "started_ns",
        "taken_at",
    )

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
        self.listings: Listings = {}  # each directory's names, for the next walk (see .walk)
        self._fingerprint: str | None = None
        # How many files this snapshot read that the next one could trust by their stat (they
        # were last changed well before it began): their records are worth saving even when
        # the contents came out the same, or a racily clean file is read at every stop.
        self.renewable = 0

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
        watch: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> Snapshot:
        """Observe the tree at ``root`` now, reusing ``previous``'s digests where it can.

        ``ignore`` adds noise patterns to the default ones (they never hide a watched file);
        ``watch`` adds globs that no ignore rule may hide (``protect``); ``exclude`` names paths
        never seen at all (donegate's own state directory inside the tree). ``keep`` receives
        the contents of freshly read small files that git does not already hold.
        """
        top = resolved(root)
        started = time.time_ns()
        seen = Seen(ignore, watch, exclude)
        found = _git.listing(top)
        cache_of = _resolve(previous)
        if found is None:
            return cls._walked(top, cache_of, seen, keep, clock, started)
        walker = _walker(cache_of, top)
        paths = _listed(top, found, walker.files(top, "", seen.enters, None), seen)
        known = found.tracked
        cache = _reusable(cache_of, top, found.object_format)
        hasher = _Hasher(top, found.object_format, cache, seen)
        entries = hasher.run(sorted(paths), known, keep)
        # The listing may have begun before this call (a hook starts it early): the snapshot
        # describes the tree from then on, which keeps the racy-clean horizon honest.
        began = min(started, found.began_ns) if found.began_ns else started
        snap = cls(top, clock(), "git", found.object_format, entries, began)
        snap.listings = walker.listings
        snap.renewable = hasher.renewable(began) + walker.renewable(began, _RACY_NS)
        snap._fingerprint = _unchanged(cache_of, snap)
        return snap

    @classmethod
    def _walked(
        cls,
        top: Path,
        previous: Snapshot | None,
        seen: Seen,
        keep: Keeper | None,
        clock: Clock,
        started: int,
    ) -> Snapshot:
        hasher = _Hasher(top, "sha1", _reusable(previous, top, "sha1"), seen)
        walker = _walker(previous, top)
        entries = hasher.run(sorted(_walk(top, "", seen, walker=walker)), {}, keep)
        snap = cls(top, clock(), "walk", "sha1", entries, started)
        snap.listings = walker.listings
        snap.renewable = hasher.renewable(started) + walker.renewable(started, _RACY_NS)
        snap._fingerprint = _unchanged(previous, snap)
        return snap

    @classmethod
    def from_head(
        cls, root: str | Path, *, ignore: Sequence[str] = (), watch: Sequence[str] = ()
    ) -> Snapshot:
        """``HEAD``'s tree under ``root`` as a snapshot; empty when there is no commit yet."""
        top = resolved(root)
        fmt = _git.object_format(top)
        tree = (_git.head_tree(top) or {}) if fmt else {}
        seen = Seen(ignore, watch)
        entries = {p: Entry(tree[p]) for p in seen.tracked(tree)}
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
            entries = _entries(data["entries"])
            taken_at = parse_rfc3339(data["taken_at"])
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

    def to_record(self) -> bytes:
        """The snapshot as donegate's binary stat record: ``marshal`` of plain values.

        The hashing cache is read at every stop: this loads in a third of the JSON's time.
        ``marshal`` trusts what it reads, as the stat record itself is trusted: both live in
        the state directory, outside the agent's reach (:mod:`donegate.workspace.state`).
        """
        entries = {path: tuple(entry) for path, entry in self.entries.items()}
        head = (RECORD_TAG, RECORD_VERSION, str(self.root), rfc3339(self.taken_at))
        tail = (self.origin, self.algorithm, self.fingerprint, entries, self.listings)
        return marshal.dumps((*head, self.started_ns, *tail))

    @classmethod
    def from_record(cls, data: bytes) -> Snapshot | None:
        """Read :meth:`to_record`'s bytes; ``None`` for anything else (damaged, another version).

        ``None`` means no record, so every file is read and hashed: never taken as unchanged.
        The fingerprint is kept in the same file as the entries it describes, so the two always
        agree.
        """
        try:
            fields = marshal.loads(data)
            if fields[:2] not in ((RECORD_TAG, 1), (RECORD_TAG, RECORD_VERSION)):
                return None
            listings = fields[9] if fields[1] == RECORD_VERSION else {}  # none kept in version 1
            _, _, root, taken_at, started_ns, origin, algorithm, fingerprint, entries = fields[:9]
            if type(entries) is not dict or type(fingerprint) is not str:
                return None
            if not _entry_sized(entries) or not listings_sized(listings):
                return None
            make = tuple.__new__  # spares ten thousand Python calls a stop
            snap = cls(
                Path(root),
                parse_rfc3339(taken_at),
                origin,
                algorithm,
                {path: make(Entry, e) for path, e in entries.items()},
                int(started_ns),
            )
        except (EOFError, ValueError, TypeError, AttributeError, IndexError):
            return None
        snap._fingerprint = fingerprint
        snap.listings = listings
        return snap

    @property
    def fingerprint(self) -> str:
        """A digest of which files hold which contents: equal fingerprints, no writes between."""
        if self._fingerprint is None:
            self._fingerprint = self._digest()
        return self._fingerprint

    def _digest(self) -> str:
        h = _hashes.blake2b(self.algorithm.encode(), digest_size=20)
        entries = self.entries
        # One update of the whole text hashes the same as one per file, and costs less.
        # surrogateescape: a file name that is not UTF-8 is carried as os.fsdecode maps it.
        text = "".join([f"\0{path}\0{entries[path].digest}" for path in sorted(entries)])
        h.update(text.encode("utf-8", "surrogateescape"))
        return h.hexdigest()

    def dumps(self) -> str:
        """The snapshot as compact JSON text."""
        return json.dumps(self.to_json(), separators=(",", ":"))


def _entries(data: dict[str, list[Any]]) -> dict[str, Entry]:
    """Entries from JSON arrays; ``tuple.__new__`` spares ten thousand Python calls a stop."""
    make = tuple.__new__
    return {
        p: make(Entry, e) if len(e) == len(Entry._fields) else Entry(*e) for p, e in data.items()
    }


def _entry_sized(entries: dict[str, Any]) -> bool:
    """Whether every value has an entry's number of fields (values of another type fail later).

    An entry of another length would break the hashing cache's comparisons; one of the right
    length holding anything else compares unequal to every stat, and its file is read.
    """
    return set(map(len, entries.values())) <= {len(Entry._fields)}


def _unchanged(previous: Snapshot | None, new: Snapshot) -> str | None:
    """``previous``'s fingerprint when ``new`` holds exactly its entries, else None.

    The common stop changed nothing: its entries are the very objects of the previous record,
    which a dict comparison confirms by identity, sparing the sort and hash of every path.
    """
    if previous is None or previous.algorithm != new.algorithm:
        return None
    return previous.fingerprint if new.entries == previous.entries else None


def _resolve(previous: Snapshot | Callable[[], Snapshot | None] | None) -> Snapshot | None:
    return previous() if callable(previous) else previous


def _reusable(previous: Snapshot | None, root: Path, fmt: str) -> tuple[dict[str, Entry], int]:
    """The previous entries (same tree, same algorithm), and the racy-clean horizon.

    An entry whose mtime or ctime is not before the horizon was written too close to the
    previous snapshot to trust its timestamps: it is read again.
    """
    if previous is None or previous.root != root or previous.algorithm != fmt:
        return {}, 0
    if previous.origin not in ("git", "walk"):
        return {}, 0
    return previous.entries, previous.started_ns - _RACY_NS


class Seen:
    """Which listed paths a snapshot holds: ignore rules hide noise, never what a check runs."""

    def __init__(
        self, ignore: Sequence[str] = (), watch: Sequence[str] = (), exclude: Sequence[str] = ()
    ) -> None:
        self.noise = PathFilter(DEFAULT_IGNORES)
        self.ignore = PathFilter(ignore)
        self.watched = PathFilter((*WATCHED, *watch))
        self.own = PathFilter(exclude)

    def tracked(self, paths: Iterable[str]) -> list[str]:
        """The tracked ``paths`` seen: all but the caller's noise that no check can run."""
        if not self.ignore.patterns and not self.own.patterns:
            return list(paths)
        return [p for p in paths if not self.own.ignored(p) and self._not_noise(p)]

    def untracked(
        self, root: Path, paths: Iterable[str], plain: Container[str] | None
    ) -> list[str]:
        """The untracked ``paths`` seen; ``plain`` holds those no ``.gitignore`` ignores
        (``None``: all of them)."""
        out: list[str] = []
        for path in paths:
            if self.own.ignored(path):
                continue
            if self.noise.ignored(path):
                if path.endswith(".pyc") and planted_bytecode(root, path):
                    out.append(path)
            elif self._plain(path, plain) or self.watched.ignored(path):
                out.append(path)
        return out

    def _plain(self, path: str, plain: Container[str] | None) -> bool:
        return (plain is None or path in plain) and not self.ignore.ignored(path)

    def _not_noise(self, path: str) -> bool:
        return not self.ignore.ignored(path) or self.watched.ignored(path)

    def enters(self, rel: str, name: str) -> bool:
        """Whether a walk enters the directory ``rel`` (``__pycache__``: for planted bytecode)."""
        if name == ".git" or self.own.ignored_dir(rel):  # a repository's database, not its tree
            return False
        return name == "__pycache__" or not self.noise.ignored_dir(rel)


def planted_bytecode(root: Path, path: str) -> bool:
    """Whether the ``.pyc`` at ``path`` can load code that is not its source's.

    A ``.pyc`` outside ``__pycache__`` is a sourceless module: importable as it lies. One inside
    is loaded only for its source ``<module>.py`` beside the ``__pycache__`` and only when its
    header matches that source (mtime and size, or the source's hash): a missing source or a
    header naming another one is planted. Left open: a body forged under a matching header
    (donegate's own runs read bytecode from a fresh ``PYTHONPYCACHEPREFIX``, never from here).
    """
    parent, _, name = path.rpartition("/")
    package, _, cache_dir = parent.rpartition("/")
    if cache_dir != "__pycache__":
        return True
    source = root / package / f"{name.split('.', 1)[0]}.py"
    try:
        header = read_head(f"{root}{os.sep}{path}", _PYC_HEADER)
        st = os.stat(source)
        return not _header_matches(header, source, st)
    except (OSError, NotRegular):
        return True


def _header_matches(header: bytes, source: Path, st: os.stat_result) -> bool:
    if len(header) < _PYC_HEADER:
        return False
    if int.from_bytes(header[4:8], "little") & 1:  # hash-based (PEP 552)
        from importlib.util import source_hash

        # A source too large to hash here is taken as not matching: its bytecode is seen.
        text = read_capped(source, _SOURCE_LIMIT)
        return text is not None and header[8:16] == source_hash(text)
    mtime = int.from_bytes(header[8:12], "little")
    size = int.from_bytes(header[12:16], "little")
    return mtime == int(st.st_mtime) & 0xFFFFFFFF and size == st.st_size & 0xFFFFFFFF


def _listed(top: Path, found: _git.Listing, walked: list[str], seen: Seen) -> list[str]:
    """The paths seen: the walk's files, told tracked or not (and ignored or not) by git.

    Every tracked path is looked at, walked or not (under a default-ignored directory, or gone);
    an untracked path is noise only by the rules of :class:`Seen`. Files under a nested
    repository are not git's to judge: none of them is taken as ignored. The untracked files
    git lists are looked at too, walked or not: two listings must both miss a file to hide it.
    """
    tracked = found.tracked
    untracked = found.plain.union(walked).difference(tracked)  # set operations run in C
    return [*seen.tracked(tracked), *seen.untracked(top, untracked, _Plain(found))]


class _Plain:
    """The untracked paths no ``.gitignore`` ignores, nested repositories' files included."""

    def __init__(self, found: _git.Listing) -> None:
        self.paths = found.plain
        self.nested = tuple(f"{n}/" for n in found.nested)

    def __contains__(self, path: object) -> bool:
        if path in self.paths:
            return True
        return bool(self.nested) and isinstance(path, str) and path.startswith(self.nested)


def _walk(
    root: Path, prefix: str, seen: Seen, limit: int | None = None, walker: Walker | None = None
) -> list[str]:
    """The files seen under ``root/prefix`` found by walking (no git), as paths from ``root``."""
    found = (walker or Walker()).files(root, prefix, seen.enters, limit)
    return seen.untracked(root, found, None)


def _walker(previous: Snapshot | None, root: Path) -> Walker:
    """A walk that trusts ``previous``'s listings of the same tree, past its racy horizon."""
    if previous is None or previous.root != root:
        return Walker()
    return Walker(previous.listings, previous.started_ns - _RACY_NS)


class _Hasher:
    """Stats a list of paths, then digests the files donegate's record cannot vouch for.

    Stat calls and small files run in this thread; large files are read and hashed in a thread
    pool, where both release the GIL.
    """

    def __init__(
        self, root: Path, fmt: str, reusable: tuple[dict[str, Entry], int], seen: Seen
    ) -> None:
        self.root = root
        self.prefix = f"{root}{os.sep}"
        self.fmt = fmt
        self.cache, self.horizon = reusable
        self.seen = seen
        self.known: dict[str, str] = {}
        self.keep: Keeper | None = None
        self.selected: set[str] = set()
        self.behind_links: set[str] = set()
        self._dirs: set[str] | None = None
        self.hashed: list[tuple[str, Entry]] = []

    def run(self, paths: list[str], known: dict[str, str], keep: Keeper | None) -> dict[str, Entry]:
        """Entries for ``paths``; ``keep`` gets contents that ``known`` (the index) lacks."""
        self.known, self.keep, self.selected = known, keep, set(paths)
        entries: dict[str, Entry] = {}
        todo: list[tuple[str, os.stat_result]] = []
        queue, cache, prefix, horizon = list(paths), self.cache, self.prefix, self.horizon
        lstat, is_dir, is_link = os.lstat, stat.S_ISDIR, stat.S_ISLNK
        for path in queue:  # grows while it runs: files reached through a linked directory
            try:
                st = lstat(prefix + path)
            except FileNotFoundError:
                continue  # listed by git but gone from the tree: a deletion
            except OSError:
                entries[path] = Entry("unreadable:stat")
                continue
            mode = st.st_mode
            if is_dir(mode):
                continue  # a directory git listed (an empty submodule): its files come apart
            if is_link(mode):
                entries[path], reached = self._link(path, st)
                queue.extend(reached)
                continue
            # Entry.same_stat and the racy-clean test, inlined: this runs for every file.
            cached = cache.get(path)
            if (
                cached is not None
                and cached[2] == st.st_mtime_ns
                and cached[3] == st.st_ctime_ns
                and cached[1] == st.st_size
                and cached[4] == st.st_ino
                and cached[5] == mode
                and cached[2] < horizon
                and cached[3] < horizon
            ):
                entries[path] = cached
            else:
                todo.append((path, st))
        self.hashed = self._hash_all(todo)
        entries.update(self.hashed)
        return entries

    def renewable(self, began_ns: int) -> int:
        """How many of the files read a snapshot beginning at ``began_ns`` can vouch for."""
        horizon = began_ns - _RACY_NS
        return sum(1 for _, e in self.hashed if e.mtime_ns < horizon and e.ctime_ns < horizon)

    def _link(self, path: str, st: os.stat_result) -> tuple[Entry, list[str]]:
        """A symlink's entry, and the files to read through it when its target is not seen."""
        full = self.prefix + path
        try:
            base = blob_id(self.fmt, os.fsencode(os.readlink(full)))
            real = os.path.realpath(full)
            target = os.stat(real)
        except OSError:  # dangling, or a loop: its text is all there is to it
            return self._record(base if "base" in locals() else "unreadable:link", st), []
        if is_pseudo(real):  # the kernel's files: endless, blocking or huge, never read
            return self._record(f"link:{base}:pseudo:{file_kind(target.st_mode)}", st, -1), []
        rel = real[len(self.prefix) :] if real.startswith(self.prefix) else None
        if path in self.behind_links:
            return self._record(base, st), []  # one level through links, no loops
        if stat.S_ISDIR(target.st_mode):
            if rel is not None and self._covered(rel):
                return self._record(base, st), []
            return self._through(path, base, st)
        if rel is not None and rel in self.selected:
            return self._record(base, st), []  # the target is seen at its own path
        try:
            content = _read(real, self.fmt, 0)[0] or "unreadable"
        except NotRegular as special:
            content = special_digest(special.st)
        except OSError:
            content = "unreadable"
        # The link's own stat does not change with its target's content: never reused.
        return self._record(f"link:{base}:{content}", st, size=-1), []

    def _through(self, path: str, base: str, st: os.stat_result) -> tuple[Entry, list[str]]:
        files = _walk(self.root, f"{path}/", self.seen, LINKED_LIMIT)
        if len(files) >= LINKED_LIMIT:
            # Too much to read through a link at every stop: a write every time, never settled.
            return self._record(f"unverifiable:link-dir:{time.time_ns()}", st, size=-1), []
        self.behind_links.update(files)
        return self._record(base, st), files

    def _covered(self, rel: str) -> bool:
        """Whether the snapshot already sees files under the directory ``rel``."""
        if self._dirs is None:
            self._dirs = set()
            for path in self.selected:
                parent = path.rpartition("/")[0]
                while parent and parent not in self._dirs:
                    self._dirs.add(parent)
                    parent = parent.rpartition("/")[0]
        return rel in self._dirs

    @staticmethod
    def _record(digest: str, st: os.stat_result, size: int | None = None) -> Entry:
        own = st.st_size if size is None else size
        return Entry(digest, own, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)

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
        return path, self._record(self._digest(path, st), st)

    def _digest(self, path: str, st: os.stat_result) -> str:
        if not stat.S_ISREG(st.st_mode):
            return special_digest(st)  # a FIFO, socket or device: never opened
        try:
            digest, content = _read(self.prefix + path, self.fmt)
        except NotRegular as special:
            return special_digest(special.st)  # swapped for a special file since the lstat
        except OSError:
            digest = content = None
        if digest is None:
            # Fail closed: an unreadable file (or one that changed size while read) is a
            # write whenever its stat changes.
            return f"unreadable:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
        fresh = _git.blob_of(self.known.get(path)) != digest
        if self.keep is not None and content is not None and fresh:
            self.keep(digest, content)
        return digest


def special_digest(st: os.stat_result) -> str:
    """The digest of a file that is not read: its kind (and a device's number)."""
    kind = file_kind(st.st_mode)
    return f"special:{kind}:{st.st_rdev}" if kind == "device" else f"special:{kind}"


def _read(path: str, fmt: str, keep: int = KEEP_LIMIT) -> tuple[str | None, bytes | None]:
    """Every read of a file's content for its digest (tests count them): see blob_digest."""
    return blob_digest(path, fmt, keep)
