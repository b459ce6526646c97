"""The project's interpreter environments, digested: a change there is a write.

A test run imports whatever its interpreter's ``site-packages`` holds: a ``.pth`` line runs at
start-up, ``sitecustomize`` is imported before any test, an installed ``pytest`` is the judge
itself, and every dependency the code under test imports runs in the test. The agent can write
there (``pip install``, or a plain file write), and the tree's snapshot leaves environments out
(``.venv/`` is noise, or it lives elsewhere).

Which environments: ``.venv/``, ``venv/`` and any other directory of the workspace root holding
a ``pyvenv.cfg``, ``$VIRTUAL_ENV``, and those of the interpreters the caller names (the test
command's programs; :class:`Resolver` follows a console script or a shim to the real one).

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

import json
import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from donegate.record import Record
from donegate.workspace import _hashes
from donegate.workspace._files import write_atomic
from donegate.workspace.writes import Write

PREFIX = "<venv:"
# Read in full: lines of a .pth run at start-up; customize modules are imported by site.py.
_READ = ("sitecustomize.py", "usercustomize.py", "pyvenv.cfg")
# The runner's own packages: every file's lstat, since an edit in place is the attack.
RUNNER_PACKAGES = frozenset({"pytest", "_pytest", "pluggy", "pytest.py", "py.py"})
# Where an environment keeps its programs (the console scripts a check may run).
_PROGRAMS = ("bin", "Scripts")
_BYTECODE = "__pycache__"
# How long a shim may take to name its interpreter (pyenv's takes 0.1 to 0.2 s).
SHIM_TIMEOUT_S = 10.0
_ASK_PREFIX = "import sys; print(sys.prefix)"
# The variables a version manager's shim picks an interpreter by: part of what its answer is
# kept under. (PYTHON* are not: a sealed run strips them, and so does the question.)
_STEERING = ("PATH", "HOME", "PYENV", "ASDF", "MISE", "RTX", "CONDA", "UV_", "VIRTUAL_ENV")

Digest = dict[str, str]


def is_synthetic(path: str) -> bool:
    """Whether ``path`` names an item of an interpreter environment, not a file of the tree."""
    return path.startswith(PREFIX)


def environments(
    root: Path,
    interpreters: Sequence[str | Path] = (),
    env: Mapping[str, str] | None = None,
    resolver: Resolver | None = None,
) -> list[Path]:
    """The environments to digest, each once, in a stable order; missing ones left out.

    An interpreter whose environment cannot be found is left out here and listed in
    ``resolver.unresolved``.
    """
    env = os.environ if env is None else env
    resolver = resolver or Resolver(root)
    candidates = [root / ".venv", root / "venv", *_configured_children(root)]
    if env.get("VIRTUAL_ENV"):
        candidates.append(Path(env["VIRTUAL_ENV"]))
    candidates += [p for i in interpreters if (p := resolver.prefix(str(i))) is not None]
    found: list[Path] = []
    for candidate in candidates:
        absolute = Path(os.path.abspath(candidate))  # not resolved: a venv's python is a link
        if absolute not in found and site_packages(absolute):
            found.append(absolute)
    return found


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


class Resolver:
    """Finds the environment of each interpreter a check names (:meth:`prefix`).

    1. A binary (a venv's ``bin/python`` is a link to one): the directory above its ``bin/``.
    2. A script whose ``#!`` line names a Python (a console script such as ``bin/pytest``): that
       Python's environment.
    3. A script named like an interpreter whose ``#!`` line does not (a pyenv or asdf shim, which
       picks the real interpreter at each start): asked, as a check would run it, with
       ``-c 'import sys; print(sys.prefix)'``, for at most :data:`SHIM_TIMEOUT_S`. The answer is
       kept in ``cache`` under the shim's ``lstat``, the variables version managers read and
       ``tree`` (the tree's snapshot fingerprint: a ``.python-version`` written changes it), so
       a stop that changed none of them asks nothing (a shim takes 0.1 s or more to answer).
       A shim that cannot answer is listed in :attr:`unresolved`: its environment is not
       digested, and the stop must say so rather than verify over it.
    4. Anything else (``make``, a program of another language): the directory above its
       ``bin/``, where an environment keeps its programs; nothing is run.
    """

    def __init__(
        self,
        root: Path,
        cache: Path | None = None,
        tree: str | None = None,
        env: Mapping[str, str] | None = None,
        ask: Callable[[list[str], Path, dict[str, str]], str] | None = None,
    ) -> None:
        self.root = root
        self.cache = cache
        self.tree = tree
        self.env = os.environ if env is None else env
        self.ask = ask or _ask
        self.unresolved: list[tuple[str, str]] = []  # (shim, why) for each that did not answer

    def prefix(self, program: str, depth: int = 0) -> Path | None:
        """The environment ``program`` runs in; None when it could not be found out."""
        path = self._located(program)
        head = _head(path)
        if head.startswith(b"#!") and depth < 3:
            named = _shebang_python(head)
            if named is not None:
                return self.prefix(named, depth + 1)
            if _python_named(path.name):
                return self._asked(path)
        return path.parent.parent

    def _located(self, program: str) -> Path:
        if os.sep in program:
            return Path(os.path.abspath(self.root / program))
        from shutil import which

        found = which(program, path=self.env.get("PATH", os.defpath))
        return Path(found) if found else Path(os.path.abspath(self.root / program))

    def _asked(self, shim: Path) -> Path | None:
        key = json.dumps([str(shim), _lstat(shim), self.tree, _steering(self.env)])
        known = self._cached(str(shim))
        if known.get("key") != key or self.tree is None:
            known = {"key": key, **self._answer(shim)}
            self._keep(str(shim), known)
        if known.get("prefix"):
            return Path(str(known["prefix"]))
        self.unresolved.append((str(shim), str(known.get("why") or "no answer")))
        return None

    def _answer(self, shim: Path) -> dict[str, str]:
        env = {k: v for k, v in self.env.items() if not k.upper().startswith(("PYTHON", "__PYV"))}
        try:
            said = self.ask([str(shim), "-c", _ASK_PREFIX], self.root, env)
        except (OSError, ValueError) as exc:
            return {"why": str(exc)}
        lines = said.strip().splitlines()
        prefix = lines[-1].strip() if lines else ""
        if not os.path.isabs(prefix) or not os.path.isdir(prefix):
            return {"why": f"it answered {said.strip()[:200]!r}, not an environment's directory"}
        return {"prefix": prefix}

    def _cached(self, shim: str) -> dict[str, object]:
        try:
            entries = json.loads(self.cache.read_bytes()) if self.cache else {}
        except (OSError, ValueError):
            return {}
        entry = entries.get(shim) if isinstance(entries, dict) else None
        return entry if isinstance(entry, dict) else {}

    def _keep(self, shim: str, entry: dict[str, object]) -> None:
        if self.cache is None:
            return
        try:
            entries = json.loads(self.cache.read_bytes())
        except (OSError, ValueError):
            entries = {}
        entries = entries if isinstance(entries, dict) else {}
        entries[shim] = entry
        write_atomic(self.cache, json.dumps(entries, sort_keys=True).encode())


def _ask(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    """What ``argv`` prints, run in ``cwd``; ``OSError`` when it fails or takes too long."""
    import subprocess

    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=SHIM_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise OSError(f"it did not answer within {SHIM_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OSError(f"it exited {done.returncode}" + (f": {said[-1]}" if said else ""))
    return done.stdout.decode("utf-8", "replace")


def _head(path: Path) -> bytes:
    """The first bytes of the regular file ``path`` names (links followed); b"" for others."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as f:
        return f.read(512) if stat.S_ISREG(os.fstat(fd).st_mode) else b""


def _shebang_python(head: bytes) -> str | None:
    """The Python a ``#!`` line names (a path, or a name ``env`` looks up), if it names one."""
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    if words and _python_named(os.path.basename(words[0])):
        return words[0]
    return None


def _python_named(name: str) -> bool:
    """Whether ``name`` is an interpreter's: ``python``, ``python3.11``, ``pypy3``..."""
    return name.removesuffix(".exe").rstrip("0123456789.tw") in ("python", "pypy")


def _lstat(path: Path) -> str:
    try:
        st = os.lstat(path)
    except OSError:
        return "absent"
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}:{st.st_mode}"


def _steering(env: Mapping[str, str]) -> list[tuple[str, str]]:
    return sorted((k, v) for k, v in env.items() if k.upper().startswith(_STEERING))


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
