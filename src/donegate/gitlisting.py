"""The git listing a snapshot is built from, started early so git works while Python imports.

A stop hook spends most of its time importing donegate; git listing a large tree takes a good
part of the rest. :func:`start` launches the listing as soon as the hook knows which tree it is
about, and the snapshot :func:`collect` s it later; started or not, the result is the same.
Deliberately light: nothing here may import the rest of donegate.
"""

from __future__ import annotations

import os
import subprocess
import time
from functools import lru_cache
from pathlib import Path

TIMEOUT_S = 60.0
# git must not prompt, page or take optional locks while we list files.
ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
# The index with its flags, the untracked files, and the tracked files git sees changed.
LISTING: tuple[tuple[str, ...], ...] = (
    ("ls-files", "-z", "--stage", "-v"),
    ("ls-files", "-z", "--others", "--exclude-standard"),
    ("diff-files", "-z", "--name-only", "--relative", "--", "."),
)

_started: dict[Path, tuple[int, list[subprocess.Popen[bytes]]]] = {}


@lru_cache(maxsize=32)
def resolved(path: str | Path) -> Path:
    """``Path(path).resolve()``, once per process: a hook resolves the same few paths often."""
    return Path(path).resolve()


def run(root: Path, *args: str) -> bytes | None:
    """``git args`` in ``root``; its stdout, or ``None`` when git fails, is missing or hangs."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            capture_output=True,
            timeout=TIMEOUT_S,
            env={**os.environ, **ENV},
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
    """The top level of the git work tree holding ``cwd``, or None outside git."""
    out = run(cwd, "rev-parse", "--show-toplevel")
    top = os.fsdecode(out).strip() if out is not None else ""
    return Path(top) if top else None


def spawn(root: Path, args: tuple[str, ...]) -> subprocess.Popen[bytes]:
    """``git args`` in ``root``, output piped, errors discarded, never interactive."""
    return subprocess.Popen(
        ["git", *args],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **ENV},
    )


def start(root: Path) -> None:
    """Begin listing ``root`` now (a no-op if git cannot be started there)."""
    began = time.time_ns()
    try:
        _started[resolved(root)] = (began, [spawn(root, args) for args in LISTING])
    except OSError:
        return


def collect(root: Path) -> tuple[int, list[bytes | None]]:
    """When the listing of ``root`` began (ns) and each command's output (None: it failed)."""
    began, procs = _started.pop(resolved(root), (0, []))
    if not procs:
        began = time.time_ns()
        try:
            procs = [spawn(root, args) for args in LISTING]
        except OSError:
            return began, [None] * len(LISTING)
    return began, [_output(proc) for proc in procs]


def _output(proc: subprocess.Popen[bytes]) -> bytes | None:
    try:
        out, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    return out if proc.returncode == 0 else None
