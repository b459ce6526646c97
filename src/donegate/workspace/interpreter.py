"""The project's interpreter environment, digested cheaply: a change there is a write.

A test run imports whatever its interpreter's ``site-packages`` holds: a ``.pth`` line runs at
start-up, ``sitecustomize`` is imported before any test, and an installed ``pytest`` is the
judge itself. The agent can write there (``pip install``, or a plain file write), and the
environment is usually outside the snapshot (``.venv/`` is noise, or it lives elsewhere).

Which environments: ``.venv/`` and ``venv/`` under the workspace root, ``$VIRTUAL_ENV``, and those
of the interpreters the caller names (the test command's). For each ``site-packages``: every
top-level name with its ``lstat`` (installed distributions show as ``*.dist-info`` names with
their versions), the content of each ``.pth`` file and customize module, and the ``lstat`` of
every file of the runner's own packages. Each item is keyed by a synthetic path,
``<venv:LABEL>/lib/python3.11/site-packages/NAME``, where LABEL is the environment's path
(relative to the root when inside it); :func:`changes` turns two digests into writes.

Left open: a file edited in place inside an installed package other than the runner's keeps its
directory's stat (the cost of reading every file of every package at every stop is not paid).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from donegate.workspace import _hashes
from donegate.workspace.writes import Write

PREFIX = "<venv:"
# Read in full: lines of a .pth run at start-up; customize modules are imported by site.py.
_READ = ("sitecustomize.py", "usercustomize.py", "pyvenv.cfg")
# The runner's own packages: every file's lstat, since an edit in place is the attack.
RUNNER_PACKAGES = frozenset({"pytest", "_pytest", "pluggy", "pytest.py", "py.py"})
_MAX_FILES = 5000

Digest = dict[str, str]


def is_synthetic(path: str) -> bool:
    """Whether ``path`` names an item of an interpreter environment, not a file of the tree."""
    return path.startswith(PREFIX)


def environments(
    root: Path, interpreters: Sequence[str | Path] = (), env: Mapping[str, str] | None = None
) -> list[Path]:
    """The environments to digest, each once, in a stable order; missing ones left out."""
    env = os.environ if env is None else env
    candidates = [root / ".venv", root / "venv"]
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
        cfg = prefix / "pyvenv.cfg"
        if cfg.exists():
            items[f"{label}/pyvenv.cfg"] = _content(cfg)
        for directory in site_packages(prefix):
            where = f"{label}/{directory.relative_to(prefix).as_posix()}"
            items.update(_site(directory, where))
    return items


def _label(root: Path, prefix: Path) -> str:
    try:
        return f"{PREFIX}{prefix.relative_to(root).as_posix()}>"
    except ValueError:
        return f"{PREFIX}{prefix}>"


def _site(directory: Path, where: str) -> Digest:
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
        elif child.name in RUNNER_PACKAGES and child.is_dir(follow_symlinks=False):
            items[key] = _tree_stats(Path(child.path))
        else:
            items[key] = _stat(child.path)
    return items


def _content(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return "unreadable"
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "special"
        return "sha256:" + _hashes.sha256_hex(f.read())


def _stat(path: str) -> str:
    try:
        st = os.lstat(path)
    except OSError:
        return "unreadable"
    return f"stat:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}:{st.st_mode}"


def _tree_stats(top: Path) -> str:
    h = _hashes.blake2b(digest_size=20)
    count = 0
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            h.update(f"{path}\0{_stat(path)}\0".encode("utf-8", "surrogateescape"))
            count += 1
            if count > _MAX_FILES:
                return "too-many-files"
    return "tree:" + h.hexdigest()


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
