"""Bytecode for what a test run imports: donegate's compile, used only for the bytes it came from.

A test run reads bytecode from a ``PYTHONPYCACHEPREFIX`` of donegate's, so that no ``.pyc`` that
an agent planted beside the sources is ever used. A fresh, empty one per run makes every run
compile pytest and the standard library anew: more than a second, far more than a small suite's
tests. So the state directory keeps, for each command, a prefix that lasts from run to run,
holding only donegate's own compiles:

- ``entries/`` holds donegate's compile of each source a run imported, named after the sha256 of
  the exact bytes it was compiled from, as a checked-hash pyc (PEP 552: the interpreter compares
  it with the source once more at import). pytest's assertion-rewritten modules are compiled by
  donegate's own pytest when it is the version the run used.
- ``prefixes/<key>/`` is the prefix a run of ``key`` reads, holding links to entries and nothing
  else. Before a run, a link whose source no longer hashes to its entry's name goes (a source is
  hashed again only when its stat may have moved: see below). After it,
  whatever the run wrote there goes too (the code under test could have written anything), and
  for each source the run had to compile itself, donegate compiles its own and links it, for at
  most a quarter of the run's time: a first run costs little more than one without a store.
- A lock makes one run at a time use a prefix; a run that finds it held gets a fresh one.
- ``entries/written-by-donegate/`` holds donegate's compile of a module donegate writes for each
  run under a new name (the witness: the same bytes every time), named by what it is and its
  digest, for Python and for each pytest version; each run's prefix gets links to them.

The prefix's manifest (``prefixes/<key>.list``) records, for each link, its entry's digest and the
source's stat (size, mtime, ctime, inode, device) taken before the bytes were read, as git's index
and the workspace's stat record do. A source whose stat is the one recorded keeps its link without
being read, provided its recorded ctime is older than the manifest's racy horizon: the moment its
run began, less the coarsest filesystem clock's tick (a change within the tick of the recording
could leave the times as recorded). Writing a file moves its ctime, which no unprivileged process
can set back (``os.utime`` sets only the mtime), and a file made anew gets a new ctime even where
it gets the old inode. A manifest of the first format, or one that cannot be read, trusts no stat:
every source is hashed.

The store lives in donegate's state directory, out of the agent's reach, and is trusted as the rest
of that directory is (session state, the authorship record): a process running with donegate's own
rights, the code under test included, could change either, as it could donegate's user
site-packages. A store that cannot be read or written costs time, never correctness: the run
compiles what it lacks, as without one.
Only bytecode of donegate's own interpreter version is kept; other interpreters find nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from stat import S_ISREG
from types import CodeType

from donegate.record import Record
from donegate.sealed._lock import held
from donegate.workspace import _hashes

STORE_DIR = "bytecode"  # under donegate's state directory
# The manifest's first line: this tag, then its racy horizon. Without it (format 1), no stat is
# trusted.
_MANIFEST_TAG = "donegate-bytecode-links 2"
RACY_NS = 2_000_000_000  # as the workspace's stat record: FAT's clock ticks every two seconds
_TAG = sys.implementation.cache_tag
# The names Python and pytest give, under a prefix, to the bytecode of ``<stem>.py``: Python's at
# the default optimisation level, and pytest's with its assertions rewritten (pytest >= 9 writes
# checked-hash pycs too). Other levels, versions and interpreters are left alone.
_NAME = re.compile(rf"(?P<stem>[^/]+)\.{re.escape(_TAG or '-')}(?:-pytest-(?P<pytest>[^/]+))?\.pyc")
_CHECKED_HASH = 0b11  # PEP 552 flags: hash-based, checked against the source at import
# After a run, compiling what it lacked may take this share of the run's time, or this long.
LEARN_SHARE = 0.25
MIN_LEARN_S = 0.2


# Compiles sources (paths) with the run's own pytest within a time (seconds): for each, the
# source, that pytest's version, the sha256 of the bytes compiled and the .pyc (see _rewrites).
Foreign = Callable[[list[str], float], Iterable[tuple[str, str, str, bytes]]]

_now = time.time_ns  # the clock of the racy horizon (a seam for the tests)
_cpu = time.process_time  # the clock of the learning budget (a seam for the tests)
_OURS = "written-by-donegate"  # entries of the modules donegate writes for a run
_held: dict[Path, _Prefix] = {}  # the prefixes this process holds, by path (see recheck)


class _Link(Record):
    """One file of a prefix: the sha256 of the source its entry was compiled from, the file's
    inode, and the source's stat taken before the bytes hashed were read (as :func:`_stat_text`
    writes it; empty for a link of format 1)."""

    digest: str
    inode: int
    stat: str


class _Prefix:
    """A store's prefix for one key, held (locked) by this run."""

    __slots__ = ("began_ns", "key", "linked", "links", "listed", "renew", "root")

    def __init__(self, root: Path, key: str) -> None:
        self.root = root
        self.key = key
        self.links: dict[str, _Link] = {}
        self.listed: dict[str, _Link] = {}
        self.began_ns = 0
        self.renew = False  # whether a link kept was hashed again: the manifest's horizon moves
        self.linked: set[str] = set()  # links to donegate's compiles of what it wrote for the run

    @property
    def path(self) -> Path:
        return self.root / "prefixes" / self.key

    def ready(self) -> None:
        """Keep only the links whose source still hashes to their entry's name, hashing only
        those whose stat is not the one recorded, or was recorded too close to a change."""
        self.began_ns = _now()  # before any stat this run records
        self.listed, horizon = _read_manifest(self._manifest())
        for rel, inode in _files(self.path):
            link = self.listed.get(rel)
            if link is None or link.inode != inode:
                _unlink(self.path, rel)
                continue
            source = _source(rel)
            if link.stat and _unchanged(source, link.stat, horizon):
                self.links[rel] = link
                continue
            digest, stat = _hashed(source)
            if digest == link.digest:
                self.links[rel] = _Link(digest, inode, stat)
                self.renew = True
            else:
                _unlink(self.path, rel)

    def recheck(self, roots: Iterable[Path]) -> None:
        """Drop each link whose source under ``roots`` no longer hashes to its entry's name: the
        sources there were rewritten since :meth:`ready` (a parked run's copy was brought up to
        date in between). Each is hashed: a rewrite within the clock's tick of ready's reading
        could leave its stat as recorded."""
        under = tuple(str(p).rstrip(os.sep) + os.sep for p in roots)
        for rel, link in list(self.links.items()):
            source = _source(rel)
            if source.startswith(under) and _hashed(source)[0] != link.digest:
                del self.links[rel]
                _unlink(self.path, rel)

    def settle(
        self,
        skip: Iterable[Path],
        budget_s: float,
        ours: Mapping[Path, str] | None = None,
        foreign: Foreign | None = None,
    ) -> None:
        """Remove what the run wrote; compile and link donegate's own for what lies outside
        ``skip``, for about ``budget_s`` seconds of CPU (later runs compile the rest), and for the
        modules of ``ours`` the run compiled, keep donegate's compile under what they are.
        ``foreign`` compiles what the run's pytest rewrote when it is not donegate's (see
        :mod:`donegate.sealed._rewrites`), within the same budget, in seconds of the clock."""
        roots = tuple(str(p).lstrip(os.sep) + os.sep for p in skip)
        kinds = {str(source).lstrip(os.sep): kind for source, kind in (ours or {}).items()}
        wanted, written = [], []
        for rel, inode in _files(self.path):
            kept = self.links.get(rel)
            if kept is not None and kept.inode == inode:
                continue
            self.links.pop(rel, None)
            _unlink(self.path, rel)
            if not _well_formed(rel):
                continue
            kind = kinds.get(_source(rel).lstrip(os.sep))
            if kind is not None:
                if rel not in self.linked:  # the run compiled it: donegate's is kept for the next
                    written.append((rel, kind))
            elif not rel.startswith(roots):
                wanted.append(rel)
        for rel, kind in written:  # one module, compiled once per version of it and of pytest
            self._learn_ours(rel, kind)
        # The budget is this process's CPU time, not the clock's: on a loaded machine the clock
        # ran out a few modules in, so which modules were learned hung on the load and on the
        # order the filesystem lists them in (another machine, another order).
        deadline = _cpu() + budget_s
        # Python's own bytecode first: pytest's rewritten modules cost an import of pytest.
        # Then by path, so that two machines learn the same modules in the same budget.
        mine, theirs = _by_rewriter(wanted)
        for rel in sorted(mine, key=lambda rel: ("-pytest-" in rel, rel)):
            if _cpu() >= deadline:
                break
            self._learn(rel)
        left = deadline - _cpu()
        if foreign is not None and theirs and left > 0:
            sources = {_source(rel): rel for rel in sorted(theirs)}
            for source, version, digest, pyc in foreign(list(sources), left):
                self._learn_theirs(sources[source], version, digest, pyc)
        if self.renew or self.links != self.listed:
            _write_atomic(self._manifest(), self._manifest_text().encode())

    def link_ours(self, source: Path, kind: str) -> None:
        """Link each compile kept of ``kind`` with ``source``'s bytes (Python's, or pytest's for
        a version) where the run looks for ``source``'s; the link goes with the run's prefix."""
        try:
            digest = _hashes.new("sha256", source.read_bytes()).hexdigest()
            # Where importlib's cache_from_source puts the bytecode of source, under a prefix.
            folder = self.path.joinpath(*source.parent.parts[1:])
            for entry in (self.root / "entries" / _OURS).iterdir():
                name, _, entry_digest = entry.name.rpartition("-")
                entry_kind, _, compiled_as = name.partition(".")
                if entry_kind == kind and entry_digest == digest:
                    folder.mkdir(parents=True, exist_ok=True)
                    os.link(entry, folder / f"{source.stem}.{compiled_as}")
                    self.linked.add(f"{folder.relative_to(self.path)}/{source.stem}.{compiled_as}")
        except OSError:
            return  # the run compiles it, as without a store

    def _learn_ours(self, rel: str, kind: str) -> None:
        compiled_as = rel.rpartition("/")[2].partition(".")[2]  # cpython-311[-pytest-9.2.0].pyc
        name = f"{kind}.{compiled_as}"
        _kept(_source(rel), lambda digest: self.root / "entries" / _OURS / f"{name}-{digest}", name)

    def _learn_theirs(self, rel: str, version: str, digest: str, pyc: bytes) -> None:
        """Keep the ``.pyc`` the run's pytest made of ``digest``'s bytes, if the source still
        holds them and the name is that pytest's."""
        name = _NAME.fullmatch(rel.rpartition("/")[2])
        read = _read(_source(rel))
        if name is None or name["pytest"] != version or read is None:
            return
        data, stat = read
        if _hashes.new("sha256", data).hexdigest() != digest:
            return  # not the bytes donegate reads: kept for nothing
        if not pyc.startswith(_magic()):
            return
        entry = self.root / "entries" / f"{rel}-{digest}"
        if not entry.exists() and not _write_atomic(entry, pyc):
            return
        _drop_older(entry, f"{Path(rel).name}-")
        self._link_entry(rel, entry, digest, stat)

    def _manifest(self) -> Path:
        return self.root / "prefixes" / f"{self.key}.list"

    def _manifest_text(self) -> str:
        # Every stat below was taken after ready() began, or (a link kept unread) is older than
        # the previous horizon: this run's horizon holds for all of them.
        lines = [f"{_MANIFEST_TAG} {max(0, self.began_ns - RACY_NS)}\n"]
        for rel, link in self.links.items():
            lines.append(f"{link.digest} {link.inode} {link.stat} {rel}\n")
        return "".join(lines)

    def _learn(self, rel: str) -> None:
        kept = _kept(_source(rel), lambda digest: self.root / "entries" / f"{rel}-{digest}", rel)
        if kept is None:
            return
        digest, stat, entry = kept
        self._link_entry(rel, entry, digest, stat)

    def _link_entry(self, rel: str, entry: Path, digest: str, stat: str) -> None:
        """Link ``entry`` (compiled from ``digest``'s bytes, read at ``stat``) as ``rel``."""
        target = self.path / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(entry, target)
            self.links[rel] = _Link(digest, target.stat().st_ino, stat)
        except OSError:
            return  # no hard links here: this source is compiled at every run


@contextlib.contextmanager
def run_prefix(
    root: Path | None,
    key: str,
    fresh: Path,
    skip: Iterable[Path],
    ours: Mapping[Path, str] | None = None,
    foreign: Foreign | None = None,
) -> Iterator[Path]:
    """The ``PYTHONPYCACHEPREFIX`` for one run of ``key``: the store's under ``root``, checked
    before the run and settled after it (sources under ``skip`` are not kept); ``fresh`` (a new
    directory of the run's own) when there is no store, or another run holds it.

    ``ours`` names the modules donegate wrote for this run under a new name (the witness), each
    with what it is: the same bytes at every run, so their compiles are kept under that name and
    linked before each run."""
    if root is None or _TAG is None:
        yield fresh
        return
    store = root / _TAG
    # CPython's own SHA-256: hashlib (OpenSSL, 3 ms to load) only once a source must be read.
    prefix = _Prefix(store, _hashes.sha256_hex(key.encode())[:32])
    lock = store / "prefixes" / f"{prefix.key}.lock"
    with contextlib.suppress(OSError):
        lock.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with held(lock, wait=False) as mine:
        if not mine:
            yield fresh
            return
        prefix.ready()
        ours = ours or {}
        for source, kind in ours.items():
            prefix.link_ours(source, kind)
        started = time.monotonic()
        _held[prefix.path] = prefix
        try:
            yield prefix.path
        finally:
            del _held[prefix.path]
            # A first run (or a new machine in CI, every run) must not cost much more than a run
            # without a store: compiling all a run imported takes about as long as the run did.
            # The run's share is of its wall time, spent in CPU time (see settle).
            budget = max(MIN_LEARN_S, LEARN_SHARE * (time.monotonic() - started))
            prefix.settle(skip, budget, ours, foreign)


def recheck(prefix: Path, roots: Iterable[Path]) -> None:
    """Check again the links of ``prefix`` (one this process holds) whose sources lie under
    ``roots`` (see :meth:`_Prefix.recheck`); a fresh prefix holds none."""
    held_here = _held.get(prefix)
    if held_here is not None:
        held_here.recheck(roots)


def _kept(source: str, entry_for: Callable[[str], Path], name: str) -> tuple[str, str, Path] | None:
    """The digest and stat of ``source`` and the entry (``entry_for`` its digest) holding
    donegate's compile of it, stored now unless it was already; None when it cannot be."""
    read = _read(source)
    if read is None:
        return None
    data, stat = read
    digest = _hashes.new("sha256", data).hexdigest()
    entry = entry_for(digest)
    if not entry.exists() and not _store(entry, data, source, name):
        return None
    return digest, stat, entry


def _store(entry: Path, data: bytes, source: str, rel: str) -> bool:
    """Write donegate's compile of ``data`` (the bytes of ``source``) as ``entry``."""
    # Here, not at the top: needed only after a run that compiled something donegate lacks.
    import importlib.util
    import marshal

    try:
        code = _compiled(data, source, _NAME.fullmatch(Path(rel).name))
    except (SyntaxError, ValueError):
        return False  # the run reports what it could not import; nothing to keep
    if code is None:
        return False
    header = importlib.util.MAGIC_NUMBER + _CHECKED_HASH.to_bytes(4, "little")
    if not _write_atomic(entry, header + importlib.util.source_hash(data) + marshal.dumps(code)):
        return False
    _drop_older(entry, f"{Path(rel).name}-")
    return True


def _compiled(data: bytes, source: str, name: re.Match[str] | None) -> CodeType | None:
    """The code Python (or pytest's assertion rewriter) would make of ``source``; None when
    donegate's own pytest is not the version that the run's named its bytecode after."""
    if name is None or name["pytest"] is None:
        return compile(data, source, "exec", dont_inherit=True)
    try:  # the version first, without pytest itself (a tenth of a second to import)
        from _pytest._version import version
    except ImportError:
        return None
    if version != name["pytest"]:
        return None  # the run's pytest is another: its rewrite may differ from ours
    try:
        from _pytest.assertion.rewrite import rewrite_asserts
    except ImportError:
        return None
    import ast

    # As pytest's own cache does: the ini's enable_assertion_pass_hook is not part of its key.
    tree = ast.parse(data, filename=source)
    rewrite_asserts(tree, data, source, None)
    return compile(tree, source, "exec", dont_inherit=True)


def _by_rewriter(rels: Iterable[str]) -> tuple[list[str], list[str]]:
    """``rels`` donegate can compile (Python's, and pytest's of its own version), and the
    others (pytest's of another version)."""
    named = [(rel, _NAME.fullmatch(rel.rpartition("/")[2])) for rel in rels]
    rewriters = {m["pytest"] for _, m in named if m is not None and m["pytest"] is not None}
    own = _own_pytest() if rewriters else None
    mine: list[str] = []
    theirs: list[str] = []
    for rel, name in named:
        rewriter = name["pytest"] if name is not None else None
        (theirs if rewriter is not None and rewriter != own else mine).append(rel)
    return mine, theirs


def _own_pytest() -> str | None:
    try:  # the version alone, without pytest itself (a tenth of a second to import)
        from _pytest._version import version
    except ImportError:
        return None
    return str(version)


def _magic() -> bytes:
    """This interpreter's bytecode magic number, the first bytes of every ``.pyc`` it reads."""
    import importlib.util

    return importlib.util.MAGIC_NUMBER


def _source(rel: str) -> str:
    # Strings, not paths: this runs for every module of every run (pathlib costs a third).
    folder, _, name = rel.rpartition("/")
    match = _NAME.fullmatch(name)
    assert match is not None
    return f"{os.sep}{folder}{os.sep if folder else ''}{match['stem']}.py"


def _read(path: str) -> tuple[bytes, str] | None:
    """The bytes of ``path``, a regular file, and its stat taken before they were read: a write
    after the stat moves the ctime, so a stat taken after the read could vouch for bytes never
    hashed."""
    try:
        # Non-blocking: opening a FIFO put in a source's place would wait for a writer forever.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        with open(fd, "rb") as handle:
            st = os.fstat(fd)
            if not S_ISREG(st.st_mode):
                return None  # a FIFO or a device: never read
            stat = _stat_text(st)
            return handle.read(), stat
    except OSError:
        return None


def _hashed(path: str) -> tuple[str | None, str]:
    """The sha256 of ``path``'s bytes and its stat (None and no stat if it cannot be read)."""
    read = _read(path)
    return (None, "") if read is None else (_hashes.new("sha256", read[0]).hexdigest(), read[1])


def _unchanged(path: str, recorded: str, horizon: int) -> bool:
    """Whether ``path``'s stat is ``recorded``, with a ctime before ``horizon``: then its bytes
    are those hashed when it was recorded. Links are followed, as reading follows them."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    # Equal texts hold the same ctime: the current one stands for the recorded one.
    return st.st_ctime_ns < horizon and _stat_text(st) == recorded


def _stat_text(st: os.stat_result) -> str:
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}"


def _well_formed(rel: str) -> bool:
    parts = rel.split("/")
    return _NAME.fullmatch(parts[-1]) is not None and ".." not in parts and "" not in parts


def _read_manifest(path: Path) -> tuple[dict[str, _Link], int]:
    """The links ``path`` lists, and its racy horizon: 0, trusting no stat (every source is
    hashed), for a manifest of format 1 or one whose first line is damaged."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}, 0
    head, _, body = text.partition("\n")
    tag, _, horizon = head.rpartition(" ")
    if tag != _MANIFEST_TAG or not _digits(horizon):
        body, horizon = text, "0"  # the links are still read, for their digests
    links = {}
    for line in body.splitlines():
        link = _link(line)
        if link is not None and _well_formed(link[0]):
            links[link[0]] = link[1]
    return links, int(horizon)


def _link(line: str) -> tuple[str, _Link] | None:
    """A manifest's line: ``digest inode size mtime ctime ino dev rel``, or ``digest inode rel``
    (format 1, no stat)."""
    fields = line.split(" ", 7)
    if len(fields) == 8:
        digest, inode, rel, stat = fields[0], fields[1], fields[7], " ".join(fields[2:7])
    else:
        digest, _, rest = line.partition(" ")
        inode, _, rel = rest.partition(" ")
        stat = ""
    return (rel, _Link(digest, int(inode), stat)) if _digits(inode) else None


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()  # int() refuses some of what isdigit() takes


def _files(prefix: Path) -> list[tuple[str, int]]:
    """Everything under ``prefix`` but directories (relative to it), with its inode.

    A link is listed as itself, never followed: one to a directory elsewhere is removed like any
    other file that is not a link to an entry. A loop over a stack, not recursive generators: the
    prefix mirrors each source's whole path, and each file's yield went up through every level.
    """
    found: list[tuple[str, int]] = []
    top = str(prefix)
    stack = [""]
    while stack:
        base = stack.pop()
        try:
            with os.scandir(f"{top}{os.sep}{base}" if base else top) as listing:
                items = list(listing)
        except OSError:
            continue
        for item in items:
            rel = f"{base}/{item.name}" if base else item.name
            try:
                if item.is_dir(follow_symlinks=False):
                    stack.append(rel)
                else:
                    found.append((rel, item.inode()))
            except OSError:
                continue
    return found


def _unlink(prefix: Path, rel: str) -> None:
    """Remove ``rel`` under ``prefix``, and the directories that it leaves empty."""
    path = prefix / rel
    with contextlib.suppress(OSError):
        path.unlink()
        for parent in path.parents:
            if parent == prefix:
                break
            parent.rmdir()  # stops (OSError) at the first that is not empty


def _write_atomic(path: Path, data: bytes) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        import tempfile  # after the run: its import no longer delays the command

        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except OSError:
        return False  # a later run compiles it again
    return True


def _drop_older(entry: Path, stem: str) -> None:
    """Remove the entries of earlier versions of ``entry``'s source."""
    try:
        siblings = [p for p in entry.parent.iterdir() if p.name.startswith(stem) and p != entry]
        for path in siblings:
            if len(path.name) == len(entry.name):  # the same name and a 64-digit digest
                path.unlink(missing_ok=True)
    except OSError:
        return
