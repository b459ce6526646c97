"""Snapshot + diff of a 10,000-file git repository, against ``git status --porcelain``.

Run: ``.venv/bin/python benchmarks/workspace_snapshot.py [--files N] [--repeat R]``.

Creates a repository of N small Python files (``git init`` + one commit) in a temporary
directory, takes a baseline, changes a few files (modify, add, delete, rename), then times, in the
same run and as the median of R repeats:
  1. ``git status --porcelain`` (the reference: git with its own index cache),
  2. cold: ``Snapshot.take(root)`` with no previous snapshot (every file read) + ``diff``,
  3. warm: ``Snapshot.take(root, previous=baseline)`` (every file lstat-ed and compared with
     donegate's own record, git's index cache not trusted; unchanged files not read) + ``diff``,
  4. the session path a hook runs: ``WorkspaceState.writes_since_verified()`` (load the cached
     snapshot and the baseline from the state directory, snapshot, diff, save).
Prints milliseconds and each one's ratio to ``git status``. The OS page cache is warm in every
case, as it is on a developer's machine between two agent stops.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from donegate.workspace import Snapshot, WorkspaceState, diff

_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=_ENV, check=True, capture_output=True)


def make_repo(root: Path, files: int) -> None:
    """``files`` Python modules of about 1 KiB in 100-file directories, committed."""
    git(root, "init", "-q")
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(30))
    for n in range(files):
        path = root / f"pkg{n // 100:03d}" / f"mod_{n:05d}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f'"""Module {n}."""\n\n{body}')
    (root / ".gitignore").write_text("build/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "tree")


def change_a_few(root: Path) -> None:
    for n in (1, 2, 3):
        path = root / f"pkg000/mod_{n:05d}.py"
        path.write_text(path.read_text() + "\nCHANGED = True\n")
    (root / "pkg001/mod_00100.py").write_text(
        (root / "pkg001/mod_00100.py").read_text().replace("Module", "The module")
    )
    (root / "pkg002/new_module.py").write_text("x = 1\n")
    (root / "pkg003/mod_00300.py").unlink()
    (root / "pkg004/mod_00400.py").rename(root / "pkg004/renamed.py")
    (root / "build").mkdir()
    # Noise: ignored and not code (an ignored .py would be seen: it can change what runs).
    (root / "build/ignored.log").write_text("ignored = True\n")


def median_ms(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root, state_dir = Path(tmp) / "repo", Path(tmp) / "state"
        root.mkdir()
        start = time.perf_counter()
        make_repo(root, args.files)
        print(f"repository: {args.files} files, built in {time.perf_counter() - start:.1f} s")
        time.sleep(2.1)  # let every file age past the racily-clean window, as between two stops
        state = WorkspaceState(state_dir, root, "bench")
        baseline = state.take_baseline()
        change_a_few(root)
        writes = diff(baseline, Snapshot.take(root, previous=baseline))
        print(f"writes found: {len(writes)} ({', '.join(f'{w.change} {w.path}' for w in writes)})")
        figures = {
            "git status --porcelain": median_ms(
                lambda: git(root, "status", "--porcelain"), args.repeat
            ),
            "cold snapshot + diff": median_ms(
                lambda: diff(baseline, Snapshot.take(root)), args.repeat
            ),
            "warm snapshot + diff": median_ms(
                lambda: diff(baseline, Snapshot.take(root, previous=baseline)), args.repeat
            ),
            "WorkspaceState.writes_since_verified": median_ms(
                state.writes_since_verified, args.repeat
            ),
        }
    reference = figures["git status --porcelain"]
    print(f"median of {args.repeat} runs, {os.cpu_count()} CPUs:")
    for name, ms in figures.items():
        print(f"  {name:40s} {ms:8.1f} ms  {ms / reference:5.1f}x git status")


if __name__ == "__main__":
    main()
