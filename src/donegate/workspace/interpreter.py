"""The project's interpreter environments, digested: a change there is a write.

A test run imports whatever its interpreter's ``site-packages`` holds: a ``.pth`` line runs at
start-up, ``sitecustomize`` is imported before any test, an installed ``pytest`` is the judge
itself, and every dependency the code under test imports runs in the test. The agent can write
there (``pip install``, or a plain file write), and the tree's snapshot leaves environments out
(``.venv/`` is noise, or it lives elsewhere).

Which environments: ``.venv/``, ``venv/`` and any other directory of the workspace root holding
a ``pyvenv.cfg``, ``$VIRTUAL_ENV``, and those of the interpreters the caller names (the test
command's).

What is digested, each item keyed by a synthetic path ``<venv:LABEL>/PATH``, where LABEL is the
environment's path (relative to the root when inside it) and PATH the item's path in it:

- an environment inside the workspace: every file of its ``site-packages`` and ``bin/``, with no
  cap, by its ``lstat`` signature (size, mtime, ctime, inode, mode). That sees every change: a
  write moves a file's ctime, which no process of the user can set back (``os.utime`` sets only
  the mtime), and a file made anew gets a new ctime even where it reuses the old inode. Bytecode
  caches (``__pycache__/``) are left out: a sealed run reads bytecode only from donegate's own
  ``PYTHONPYCACHEPREFIX``, never from beside a source.
- an environment outside it (a shared or system one, possibly large): every top-level name of
  ``site-packages`` with its ``lstat`` (installed distributions show as ``*.dist-info`` names
  with their versions), and every file of the runner's own packages.
- both: the content of ``pyvenv.cfg``, and of each top-level ``.pth`` file and customize module.

:func:`changes` turns two digests into writes; :func:`not_installed` tells which writes to an
environment inside the workspace no installer made (the agent's own code, where the scan does
not read and the run imports it).

Speed: the walk costs about 5 microseconds a file (10 ms for an environment of pytest, requests
and a few libraries); see ``benchmarks/stop_hook_venv.py``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from donegate.record import Record
from donegate.workspace import _hashes
from donegate.workspace.writes import Write

PREFIX = "<venv:"
# Read in full: lines of a .pth run at start-up; customize modules are imported by site.py.
_READ = ("sitecustomize.py", "usercustomize.py", "pyvenv.cfg")
# The runner's own packages: every file's lstat, since an edit in place is the attack.
RUNNER_PACKAGES = frozenset({"pytest", "_pytest", "pluggy", "pytest.py", "py.py"})
# Where an environment keeps its programs (the console scripts a check may run).
_PROGRAMS = ("bin", "Scripts")
_BYTECODE = "__pycache__"

Digest = dict[str, str]


def is_synthetic(path: str) -> bool:
    """Whether ``path`` names an item of an interpreter environment, not a file of the tree."""
    return path.startswith(PREFIX)


def environments(
    root: Path, interpreters: Sequence[str | Path] = (), env: Mapping[str, str] | None = None
) -> list[Path]:
    """The environments to digest, each once, in a stable order; missing ones left out."""
    env = os.environ if env is None else env
    candidates = [root / ".venv", root / "venv", *_configured_children(root)]
    if env.get("VIRTUAL_ENV"):
        candidates.append(Path(env["VIRTUAL_ENV"]))
    candidates += [_prefix_of(Path(i)) for i in interpreters]
    found: list[Path] = []
    for candidate in candidates:
        absolute = Path(os.path.abspath(candidate))  # not resolved: a venv's python is a link
        if absolute not in found and site_packages(absolute):
            found.append(absolute)
    return found


def _prefix_of(interpreter: Path) -> Path:
    """The environment an interpreter belongs to: the directory above its ``bin/``."""
    if not interpreter.is_absolute():
        from shutil import which

        named = which(str(interpreter))
        interpreter = Path(named) if named else Path(os.path.abspath(interpreter))
    return interpreter.parent.parent


def _configured_children(root: Path) -> list[Path]:
    """The directories of ``root`` that are virtual environments (they hold a ``pyvenv.cfg``)."""
    try:
        with os.scandir(root) as it:
            children = [e.path for e in it if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    return sorted(Path(c) for c in children if os.path.isfile(os.path.join(c, "pyvenv.cfg")))


def site_packages(prefix: Path) -> list[Path]:
    """The ``site-packages`` directories of the environment at ``prefix``."""
    found: list[Path] = []
    for lib in ("lib", "lib64"):
        if (prefix / lib).is_symlink():
            continue  # a venv's lib64 is a link to lib: the same directory twice
        try:
            versions = sorted(os.listdir(prefix / lib))
        except OSError:
            continue
        found += [prefix / lib / v / "site-packages" for v in versions if v.startswith("python")]
    found.append(prefix / "Lib" / "site-packages")
    return [p for p in found if p.is_dir() and not p.is_symlink()]


def digest(root: Path, environments: Iterable[Path]) -> Digest:
    """Synthetic path -> digest for every item of every environment (see the module doc)."""
    items: Digest = {}
    for prefix in environments:
        label = _label(root, prefix)
        inside = _inside(root, prefix) is not None
        cfg = prefix / "pyvenv.cfg"
        if cfg.exists():
            items[f"{label}/pyvenv.cfg"] = _content(cfg)
        for directory in site_packages(prefix):
            where = f"{label}/{directory.relative_to(prefix).as_posix()}"
            items.update(_site(directory, where, every_file=inside))
        for programs in _PROGRAMS if inside else ():
            if (prefix / programs).is_dir() and not (prefix / programs).is_symlink():
                _every_file(str(prefix / programs), f"{label}/{programs}", items)
    return items


def _label(root: Path, prefix: Path) -> str:
    inside = _inside(root, prefix)
    return f"{PREFIX}{prefix if inside is None else inside}>"


def _inside(root: Path, path: Path) -> str | None:
    """``path`` relative to ``root`` (posix), or None when it lies outside it."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def _site(directory: Path, where: str, *, every_file: bool) -> Digest:
    items: Digest = {}
    try:
        with os.scandir(directory) as it:
            children = list(it)
    except OSError:
        return {f"{where}/": "unreadable"}
    for child in children:
        key = f"{where}/{child.name}"
        if child.name.endswith(".pth") or child.name in _READ:
            items[key] = _content(Path(child.path))
        elif not child.is_dir(follow_symlinks=False):
            items[key] = _signature(child)
        elif every_file or child.name in RUNNER_PACKAGES:
            if child.name != _BYTECODE:
                _every_file(child.path, key, items)
        else:
            items[key] = _signature(child)
    return items


def _every_file(top: str, where: str, items: Digest) -> None:
    """Every file under ``top`` (links not followed, bytecode caches left out) by its ``lstat``
    signature, into ``items`` under ``where``."""
    pending = [(top, where)]
    while pending:
        directory, key = pending.pop()
        try:
            with os.scandir(directory) as it:
                children = list(it)
        except OSError:
            items[f"{key}/"] = "unreadable"
            continue
        for child in children:
            if not child.is_dir(follow_symlinks=False):
                items[f"{key}/{child.name}"] = _signature(child)
            elif child.name != _BYTECODE:
                pending.append((child.path, f"{key}/{child.name}"))


def _content(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return "unreadable"
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "special"
        return "sha256:" + _hashes.sha256_hex(f.read())


def _signature(entry: os.DirEntry[str]) -> str:
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return "unreadable"
    return f"stat:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}:{st.st_mode}"


def changes(old: Digest, new: Digest, at: datetime) -> list[Write]:
    """The writes that turn the environment digest ``old`` into ``new``."""
    writes = [
        Write(path, "modified", at, old[path], new[path])
        for path in new
        if path in old and old[path] != new[path]
    ]
    writes += [Write(p, "added", at, None, new[p]) for p in new if p not in old]
    writes += [Write(p, "deleted", at, old[p], None) for p in old if p not in new]
    return sorted(writes, key=lambda w: w.path)


def not_installed(root: Path, writes: Iterable[Write]) -> dict[str, str]:
    """Synthetic path -> why, for each write to an environment that no installer made: the
    agent's own code, which the test run imports and no scan reads.

    An installer lists every file it puts in ``site-packages`` or ``bin/`` in the ``RECORD`` of
    the distribution's ``*.dist-info``, with the sha256 of its content. A write is not an
    installer's when:

    1. it left a file listed with another sha256 than its content's (edited after the install);
    2. it deleted a file that a ``RECORD`` still lists;
    3. it rewrote a ``RECORD`` in place (an upgrade writes the new version's record under a new
       ``*.dist-info`` name; reinstalling the same version writes the same bytes);
    4. it changed in place a file that no ``RECORD`` lists;
    5. it added, unlisted, a ``.pth`` file or a customize module at the top of ``site-packages``:
       code that runs at every start of the interpreter.

    Rules 1, 2 and 4 see what the digest sees: every file of an environment inside the
    workspace; outside it, the top-level files and the runner's packages (a directory's own
    ``lstat`` says only that its entries changed). Other files added without a record (a
    package copied in by hand, a new environment's own files) are left to the checks. A forged
    installation (a new ``*.dist-info`` whose ``RECORD`` vouches for the agent's files) is not
    told from a real one: installing a package the agent wrote looks the same.
    """
    found: dict[str, str] = {}
    records: dict[Path, _Records] = {}
    for write in writes:
        located = _environment_of(root, write.path)
        if located is None or located[1] == "pyvenv.cfg":
            continue
        prefix, rel = located
        if prefix not in records:
            records[prefix] = _Records(prefix)
        why = records[prefix].why_not(prefix / rel, write.change)
        if why is not None:
            found[write.path] = why
    return found


def _environment_of(root: Path, path: str) -> tuple[Path, str] | None:
    """The environment and the path in it that a synthetic ``path`` names."""
    label, sep, rel = path.removeprefix(PREFIX).partition(">/")
    if not is_synthetic(path) or not sep:
        return None
    return Path(os.path.normpath(root / label)), rel  # an absolute label stays as it is


class _Listed(Record):
    digest: str  # "sha256=<urlsafe base64>", as a RECORD writes it; "" when it gives none
    record: str  # the RECORD's path in the environment, for the person


class _Records:
    """What the installed distributions of one environment list, by the file's real path."""

    def __init__(self, prefix: Path) -> None:
        self.prefix = prefix
        self.sites = site_packages(prefix)
        self.listed: dict[str, _Listed] = {}
        for site in self.sites:
            for record in sorted(site.glob("*.dist-info/RECORD")):
                self._read(site, record)

    def _read(self, site: Path, record: Path) -> None:
        import csv

        try:
            text = record.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            return
        shown = os.path.relpath(record, self.prefix)
        for row in csv.reader(text.splitlines()):
            if len(row) >= 2 and row[0]:
                path = os.path.normpath(os.path.join(site, row[0]))
                self.listed[path] = _Listed(row[1], shown)

    def why_not(self, path: Path, change: str) -> str | None:
        """Why the write of ``change`` to ``path`` is no installer's, or None (the rules above)."""
        listed = self.listed.get(os.path.normpath(path))
        if change == "deleted":
            if listed is not None and listed.digest:
                return f"deleted, though {listed.record} still lists it as installed"
            return None
        if path.name == "RECORD" and path.parent.name.endswith(".dist-info"):
            if change == "modified":
                return "an installed distribution's RECORD rewritten in place"
            return None
        if listed is not None and listed.digest:
            actual = _record_digest(path, listed.digest.partition("=")[0])
            if actual != listed.digest:
                return f"its content is {actual}, where {listed.record} lists {listed.digest}"
            return None
        if change == "modified" and not path.is_dir():
            return "changed in place, and no installed distribution's RECORD lists it"
        if path.parent in self.sites and (path.suffix == ".pth" or path.name in _READ):
            return "run at every start of the interpreter, and no distribution's RECORD lists it"
        return None


def _record_digest(path: Path, algorithm: str) -> str:
    """The file's digest as a RECORD writes it (``sha256=`` and unpadded urlsafe base64)."""
    import base64

    try:
        h = _hashes.new(algorithm)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return "unreadable"
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "not a regular file"
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return f"{algorithm}=" + base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()
