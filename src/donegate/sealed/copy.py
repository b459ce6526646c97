"""A sealed run: the checks run on a private copy of the exact bytes donegate hashed at a stop.

::

    with seal(snapshot, state_dir=state_dir) as sealed:
        done = collect(claim, config, sealed=sealed)

The copy lives in the state directory (``<state>/sealed/<name>/tree``), outside the working tree
and outside what host sandboxes let an agent write, so no process of the agent can change it
while the checks run. Every file is checked against the snapshot's digest as it is copied; a file
changed since (or deleted, or unreadable) is a finding, and a run with findings does not count.
The code under test is imported from the copy even when the project is installed in editable
mode (see :mod:`donegate.sealed._importroots`); the project's virtualenv, ``node_modules/`` and
other ignored paths are linked to the live tree (see :mod:`donegate.sealed._copytree`).

The copy is removed when the ``with`` block ends, whatever ends it. A copy whose owner died (a
hook killed mid-check) is removed by the next seal: each owner holds a lock on its copy.

With ``keep``, for an agent that cannot write the state directory, the workspace's copy is kept
(``<state>/sealed/kept-<key>/``) and the next seal brings it up to date with only what changed
(see :mod:`donegate.sealed._kept`): sealing then costs in proportion to the change, not to the
tree. A kept copy unused for :data:`KEEP_FOR_S`, or whose workspace is gone, is swept.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from donegate import statedir
from donegate.record import Record
from donegate.sealed import _kept, _watch
from donegate.sealed._bytecode import STORE_DIR
from donegate.sealed._copytree import TreeCopier, directories, remove
from donegate.sealed._importroots import import_roots, site_dirs_of
from donegate.sealed._lock import held

if TYPE_CHECKING:
    from donegate.workspace import Snapshot

SEALED_DIR = "sealed"
LOCK_FILE = "lock"
# A copy younger than this may still be taking its lock: never swept.
SWEEP_AFTER_S = 60.0
KEPT_PREFIX = "kept-"
WORKSPACE_FILE = "workspace"  # a kept copy's workspace path, to sweep it once that is gone
KEEP_FOR_S = 14 * 24 * 3600.0


class Sealed(Record):
    """A sealed copy of a workspace.

    ``root`` is the copy of ``workspace``; ``pythonpath`` the import roots to put first so that
    the code under test is imported from the copy; ``findings`` say why a run on this copy would
    not be a run on the hashed bytes (empty when it would be); ``linked`` lists the ignored paths
    linked to the live tree; ``bytecode`` is the state directory's bytecode store, for the runs;
    ``lasting``: the copy is kept at this path for the next stop (see ``keep``).
    """

    root: Path
    pythonpath: tuple[str, ...]
    findings: list[str]
    workspace: Path
    linked: tuple[str, ...] = ()
    bytecode: Path | None = None
    lasting: bool = False

    @property
    def counts(self) -> bool:
        """Whether a run on this copy is a run on the hashed bytes."""
        return not self.findings

    def workdir(self, base_dir: Path) -> Path | None:
        """The copy of ``base_dir``; None when it lies outside the sealed workspace."""
        try:
            return self.root / Path(base_dir).resolve().relative_to(self.workspace)
        except ValueError:
            return None

    def unsealed(self, text: str) -> str:
        """``text`` with the copy's paths written as the workspace's, for evidence and feedback."""
        return text.replace(str(self.root), str(self.workspace))


@contextlib.contextmanager
def seal(
    snapshot: Snapshot,
    *,
    state_dir: str | Path | None = None,
    site_dirs: Iterable[Path] | None = None,
    keep: bool = False,
) -> Iterator[Sealed]:
    """A private copy of ``snapshot``'s files, checked byte for byte, removed afterwards.

    ``state_dir`` defaults to donegate's state directory; ``site_dirs`` (where to look for the
    project's editable installs) to its in-tree virtualenvs, ``$VIRTUAL_ENV`` and donegate's own.
    ``keep``: the workspace's kept copy, brought up to date, and kept afterwards; only for an
    agent that cannot write the state directory. While another seal uses it, a fresh copy.
    """
    parent = _sealed_dir(state_dir)
    sweep(parent)
    if keep:
        place = _real_dir(parent / f"{KEPT_PREFIX}{_key(Path(snapshot.root))}")
        with held(place / LOCK_FILE, wait=False) as mine:
            if mine:
                built, made = _refresh(snapshot, place, site_dirs)
                with _watched(place, made):
                    yield built._replace(bytecode=parent.parent / STORE_DIR)
                return
    place = Path(tempfile.mkdtemp(prefix="seal-", dir=parent))
    with held(place / LOCK_FILE, wait=True):
        try:
            built = _build(snapshot, place, site_dirs)
            yield built._replace(bytecode=parent.parent / STORE_DIR)
        finally:
            remove(place)


def kept_copy(workspace: Path, state_dir: str | Path | None = None) -> Sealed | None:
    """``workspace``'s kept copy as the last stop left it, its import roots not yet known, or
    None if it has none: where a run's interpreter can start while the stop takes its snapshot
    (see ``_launch.park``). Nothing here holds it: the seal that brings it up to date may find
    another seal holding it, and then makes a fresh copy, where the early run does not fit."""
    parent = _sealed_dir(state_dir)
    tree = parent / f"{KEPT_PREFIX}{_key(workspace)}" / "tree"
    if not tree.is_dir() or tree.is_symlink():
        return None
    store = parent.parent / STORE_DIR
    return Sealed(tree, (), [], workspace, bytecode=store, lasting=True)


def _real_dir(path: Path) -> Path:
    """``path``, made a directory of its own if it is missing or anything else (a link, say)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISDIR(st.st_mode):
            return path
        os.unlink(path)
    os.mkdir(path, 0o700)
    return path


def _key(workspace: Path) -> str:
    return hashlib.sha256(os.fsencode(workspace.resolve())).hexdigest()[:20]


def _sealed_dir(state_dir: str | Path | None) -> Path:
    base = statedir.ensure(state_dir).resolve()
    parent = base / SEALED_DIR
    parent.mkdir(mode=0o700, exist_ok=True)
    os.chmod(parent, 0o700)  # whoever made it first: only its owner may enter
    return parent


def _build(snapshot: Snapshot, place: Path, site_dirs: Iterable[Path] | None) -> Sealed:
    live = Path(snapshot.root)
    copy = place / "tree"
    try:
        os.mkdir(copy, 0o700)
        entries = {path: entry.digest for path, entry in snapshot.entries.items()}
        copied = TreeCopier(live, copy, snapshot.algorithm).run(entries)
        dirs = site_dirs_of(live) if site_dirs is None else site_dirs
        roots = import_roots(live, copy, place / "imports", dirs)
    except OSError as exc:  # fail closed: no copy, no sealed run
        finding = f"could not make the sealed copy: {exc.strerror or exc} ({exc.filename})"
        return Sealed(copy, (), [finding], live)
    findings = [_printable(f) for f in (*copied.findings, *roots.findings)]
    return Sealed(copy, roots.pythonpath, findings, live, tuple(copied.linked))


class _Made(Record):
    """What a refresh left for the watch of the runs after it: its manifest's token and the
    copy's directories (see :mod:`donegate.sealed._watch`)."""

    token: str
    dirs: set[str]


def _refresh(
    snapshot: Snapshot, place: Path, site_dirs: Iterable[Path] | None
) -> tuple[Sealed, _Made | None]:
    """The kept copy at ``place``, made to hold ``snapshot``'s files and nothing else."""
    live = Path(snapshot.root)
    copy = place / "tree"
    began = _kept.began()
    try:
        manifest = _kept.take_manifest(place)
        (place / WORKSPACE_FILE).write_bytes(os.fsencode(live.resolve()))
        _real_dir(copy)
        entries = {path: (entry.digest, entry.mode) for path, entry in snapshot.entries.items()}
        digests = {path: digest for path, (digest, _) in entries.items()}
        dirs = directories(digests)
        pruned = _kept.prune_watched(copy, entries, dirs, manifest)
        if pruned is None:  # no watch vouches for the last runs: every file's stat is read
            pruned = _kept.prune(copy, entries, dirs, manifest, snapshot.algorithm)
        copier = TreeCopier(live, copy, snapshot.algorithm)
        copied = copier.run(digests, present=pruned.files, made=pruned.dirs, dirs=dirs)
        files = dict(pruned.files)
        files.update((rel, _kept.kept(*written)) for rel, written in copier.written.items())
        links = [*copier.symlinks, *copied.linked]
        token = _kept.write_manifest(place, files, began, dirs, links)
        _kept.clear(place / "imports")
        sites = site_dirs_of(live) if site_dirs is None else site_dirs
        roots = import_roots(live, copy, place / "imports", sites)
    except OSError as exc:  # fail closed: no copy, no sealed run
        finding = f"could not update the kept copy: {exc.strerror or exc} ({exc.filename})"
        return Sealed(copy, (), [finding], live), None
    findings = [_printable(f) for f in (*copied.findings, *roots.findings)]
    sealed = Sealed(copy, roots.pythonpath, findings, live, tuple(copied.linked), lasting=True)
    # A file that did not match stays in the copy unrecorded: only a walk finds and removes it.
    return sealed, None if copied.findings else _Made(token, dirs)


@contextlib.contextmanager
def _watched(place: Path, made: _Made | None) -> Iterator[None]:
    """Watch the kept copy at ``place`` while its checks run; if they end normally and the watch
    vouches for what they did to it, keep what it saw for the next refresh."""
    watch = None if made is None else _watch.Watch.start(place / "tree", made.dirs)
    if watch is None or made is None:
        yield
        return
    try:
        yield
    except BaseException:
        watch.close()  # a run may still be ending: the next refresh walks the copy
        raise
    seen = watch.seen()
    if seen is not None:
        with contextlib.suppress(OSError):  # then the next refresh walks the copy
            _kept.write_watched(place, made.token, seen)


def _printable(text: str) -> str:
    """A finding that names a non-UTF-8 path, safe to put in JSON."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def sweep(parent: Path, *, now: Callable[[], float] = time.time) -> list[Path]:
    """Remove the copies under ``parent`` whose owner is gone; the ones removed."""
    removed = []
    for place in _listing(parent):
        if _abandoned(place, now()):
            remove(place)
            removed.append(place)
    return removed


def _listing(parent: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(parent) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _abandoned(place: Path, now: float) -> bool:
    try:
        age = now - place.lstat().st_mtime
        if age < SWEEP_AFTER_S:
            return False
        if place.name.startswith(KEPT_PREFIX) and age < KEEP_FOR_S and _workspace_is_there(place):
            return False
        handle = (place / LOCK_FILE).open("a")
    except FileNotFoundError:
        return True  # an old copy that never took its lock
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # its owner is alive and running checks
        return True


def _workspace_is_there(place: Path) -> bool:
    try:
        return Path(os.fsdecode((place / WORKSPACE_FILE).read_bytes())).is_dir()
    except OSError:
        return False
