"""The git listing a snapshot is built from, started early so git works while Python imports.

A stop hook spends most of its time importing donegate; git listing a large tree takes a good
part of the rest. :func:`start` launches the listing as soon as the hook knows which tree it is
about, and the snapshot :func:`collect` s it later; started or not, the result is the same.
Deliberately light: nothing here may import the rest of donegate.

git is run hardened, because the agent owns the repository (``.git/config``, the index, the
excludes, the environment it leaves behind) and donegate must neither run the agent's programs
nor look where the agent points it:

- the environment loses every ``GIT_*`` variable (``GIT_DIR``, ``GIT_WORK_TREE``,
  ``GIT_INDEX_FILE``, ``GIT_CONFIG_PARAMETERS``...); system and global config are not read;
- ``--git-dir`` and ``--work-tree`` are computed here from the ``.git`` entry of the root, so
  ``core.worktree`` cannot point git at a decoy;
- every setting that names a program or caches what git saw is overridden on the command line
  (``core.fsmonitor``, ``core.untrackedCache``, ``core.hooksPath``, ``core.attributesFile``,
  ``core.excludesFile``); replace refs are ignored; no command used here runs filters,
  textconv, a pager or a credential helper.
"""

from __future__ import annotations

import os
import time
from functools import lru_cache
from pathlib import Path

TIMEOUT_S = 60.0
# git must not prompt, page or take optional locks while we list files; nothing outside the
# repository (system or global config) may add settings.
ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "LC_ALL": "C",
}
# Each of these, left to the repository's config, runs a program or hides a change.
HARDENING: tuple[str, ...] = (
    "--no-pager",
    "--no-replace-objects",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.untrackedCache=false",
    "-c",
    f"core.hooksPath={os.devnull}",
    "-c",
    f"core.attributesFile={os.devnull}",
    "-c",
    f"core.excludesFile={os.devnull}",
    "-c",
    "core.splitIndex=false",
    "-c",
    "safe.directory=*",
)
# Untracked directories never worth listing (their own content is judged elsewhere, e.g. the
# interpreter environment): git does not even walk them. Tracked files under them still count.
UNTRACKED_NOISE: tuple[str, ...] = (
    ".git/",
    ".hg/",
    ".svn/",
    ".venv/",
    "venv/",
    ".tox/",
    ".nox/",
    "node_modules/",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    "htmlcov/",
    ".donegate/",
)
_EXCLUDES = tuple(f"--exclude={p}" for p in UNTRACKED_NOISE)
# The index, and the untracked files that the tree's own .gitignore files do not ignore (an
# untracked file the snapshot's walk finds but git does not list here is reported as noise
# unless it can change what a check runs). .git/info/exclude and core.excludesFile are not read
# at all: they are invisible files the agent owns.
LISTING: tuple[tuple[str, ...], ...] = (
    ("ls-files", "-z", "--stage"),
    ("ls-files", "-z", "--others", "--exclude-per-directory=.gitignore", *_EXCLUDES),
)

_started: dict[Path, tuple[int, list[_Git]]] = {}


@lru_cache(maxsize=32)
def resolved(path: str | Path) -> Path:
    """``Path(path).resolve()``, once per process: a hook resolves the same few paths often."""
    return Path(path).resolve()


def environment() -> dict[str, str]:
    """The process environment for git: no ``GIT_*`` variable of the caller's, plus :data:`ENV`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, **ENV}


def git_dir(root: Path) -> Path | None:
    """The git directory of the work tree at ``root``: ``root/.git``, or where a gitfile points."""
    dot = root / ".git"
    if dot.is_dir():  # a symlinked one too: whatever it holds, git is only asked for a listing
        return dot
    try:
        text = dot.read_bytes()[:4096].decode("utf-8", "surrogateescape")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text.removeprefix("gitdir:").strip())
    target = target if target.is_absolute() else root / target
    return target if target.is_dir() else None


def argv(root: Path, *args: str) -> list[str] | None:
    """The hardened command line of ``git args`` run in ``root`` (its work tree's top or below)."""
    top = toplevel(root)
    directory = git_dir(top) if top is not None else None
    if top is None or directory is None:
        return None
    git = program(top)
    if git is None:
        return None
    where = (f"--git-dir={directory}", f"--work-tree={top}")
    return [git, *where, *HARDENING, *args]


@lru_cache(maxsize=8)
def program(top: Path) -> str | None:
    """The ``git`` on ``PATH`` that lies outside the work tree at ``top``; None when there is none.

    A ``PATH`` may name a directory of the agent's tree: an activated project virtualenv's
    ``bin/``, ``node_modules/.bin``, or a relative entry, which means the hook's working
    directory. A ``git`` the agent put there would run inside the judge, so such entries (and a
    ``git`` that links into the tree) are passed over.
    """
    for entry in os.get_exec_path():
        if not os.path.isabs(entry):
            continue
        candidate = Path(entry) / "git"
        try:
            real = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if real.is_relative_to(top) or Path(entry).resolve().is_relative_to(top):
            continue
        if real.is_file() and os.access(real, os.X_OK):
            return str(real)  # the file judged to be outside the tree, not a link to it
    return None


def run(root: Path, *args: str) -> bytes | None:
    """``git args`` in ``root``; its stdout, or ``None`` when git fails, is missing or hangs."""
    import subprocess  # the listing, all a stop that changed nothing runs, spawns git itself

    command = argv(root, *args)
    if command is None:
        return None
    try:
        done = subprocess.run(
            command,
            cwd=root,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=TIMEOUT_S,
            env=environment(),
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def has_head(root: Path) -> bool:
    """Whether ``root`` is in a git repository with at least one commit."""
    return run(root, "rev-parse", "--verify", "--quiet", "HEAD") is not None


@lru_cache(maxsize=8)
def toplevel(cwd: Path) -> Path | None:
    """The nearest directory at or above ``cwd`` holding a ``.git`` entry, or None.

    Found by looking, not by asking git: ``git rev-parse --show-toplevel`` answers with
    ``core.worktree`` or ``GIT_WORK_TREE``, which the agent can set.
    """
    here = resolved(cwd)
    for candidate in (here, *here.parents):
        if os.path.lexists(candidate / ".git") and git_dir(candidate) is not None:
            return candidate
    return None


class _Git:
    """One running ``git`` whose standard output is read through a pipe.

    Spawned with ``posix_spawn`` rather than through :mod:`subprocess`, whose import (threads,
    signals, selectors, locale) costs a stop hook more than listing the tree does.
    """

    __slots__ = ("out", "pid")

    def __init__(self, root: Path, args: tuple[str, ...]) -> None:
        command = argv(root, *args)
        if command is None:
            raise OSError(f"no git directory at {root}")
        read, write = os.pipe()  # neither end is inherited: git gets a copy as its stdout
        _widen(write)
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, write, 1),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        ]
        try:
            # -C: posix_spawn cannot set the working directory; git changes to it first.
            where = [command[0], "-C", str(root), *command[1:]]
            self.pid = os.posix_spawn(command[0], where, environment(), file_actions=actions)
        except OSError:
            os.close(read)
            raise
        finally:
            os.close(write)
        self.out = read

    def output(self, deadline: float) -> bytes | None:
        """What git printed, once it exits with 0; None if it failed or outran ``deadline``."""
        import select

        chunks: list[bytes] = []
        try:
            while True:
                wait = deadline - time.monotonic()
                if wait <= 0 or not select.select([self.out], [], [], wait)[0]:
                    os.kill(self.pid, 9)
                    os.waitpid(self.pid, 0)
                    return None
                chunk = os.read(self.out, _CHUNK)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self.out)
        _, status = os.waitpid(self.pid, 0)
        return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None


_CHUNK = 1 << 20


def _widen(pipe: int) -> None:
    # A pipe holds 64 KiB: git would wait for the hook at every 64 KiB of a listing instead of
    # finishing it on the other core while Python imports. Linux lets a pipe hold up to 1 MiB.
    try:
        import fcntl

        fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, _CHUNK)
    except (ImportError, AttributeError, OSError):
        pass  # another system, or a lower limit: git just waits for the reads


def start(root: Path) -> None:
    """Begin listing ``root`` now (a no-op if git cannot be started there)."""
    began = time.time_ns()
    try:
        _started[resolved(root)] = (began, [_Git(root, args) for args in LISTING])
    except OSError:
        return


def collect(root: Path) -> tuple[int, list[bytes | None]]:
    """When the listing of ``root`` began (ns) and each command's output (None: it failed)."""
    began, procs = _started.pop(resolved(root), (0, []))
    if not procs:
        began = time.time_ns()
        try:
            procs = [_Git(root, args) for args in LISTING]
        except OSError:
            return began, [None] * len(LISTING)
    deadline = time.monotonic() + TIMEOUT_S
    return began, [proc.output(deadline) for proc in procs]
