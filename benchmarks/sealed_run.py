"""The cost of a sealed run: seal (copy + check every file) + pytest, against pytest run directly.

Run: ``.venv/bin/python benchmarks/sealed_run.py [--files N] [--tests T] [--repeat R]``.

Two trees, each with a suite of T quick tests (default 50) under ``tests/`` and its code under
``src/``: a small one (just the suite), and the snapshot benchmark's git repository of N small
files (default 10,000) with the same suite added. For each, in the same run and as the median of
R repeats, run alternately so that both see the same machine:
  1. ``python -m pytest -q tests`` in the live tree (the baseline);
  2. ``seal(snapshot)`` + the same command in the copy, with the seal's import path; the copy is
     removed at the end, and that is timed too;
  3. ``cp -r --reflink=auto`` of the tree and ``rm -rf`` of the result: the floor the file system
     sets for any copy (the seal also hashes every file it copies);
  4. the command in the live tree inside the checks' own sandbox (bubblewrap, as a test_run
     runs it by default; skipped where the machine has none): what isolation adds to a run;
  5. a stop of a confined agent that changed one file: the snapshot taken against the last one
     (as the stop hook takes it), the kept copy brought up to date (``seal(keep=True)``) and the
     command run in it. This is the issue's bar: at most 20% over the command alone.
``PYTHONDONTWRITEBYTECODE`` is removed from the environment, so that the command run directly
keeps its bytecode, as on a developer's machine. Prints milliseconds, the seal's share and the
ratio to the baseline. File creation dominates a fresh seal: run with ``--dir`` on the file
system that holds donegate's state directory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import workspace_snapshot  # the benchmarks folder is on sys.path when run as a script
from donegate.sealed import _isolation
from donegate.sealed.copy import seal
from donegate.workspace import Snapshot

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]


def add_suite(root: Path, tests: int) -> None:
    """``tests`` quick tests of a small package under ``src/``, importable through the ini file."""
    (root / "src" / "calc").mkdir(parents=True)
    (root / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests").mkdir()
    body = "import calc\n\n" + "".join(
        f"def test_add_{i}():\n    assert calc.add({i}, 1) == {i + 1}\n\n" for i in range(tests)
    )
    (root / "tests" / "test_calc.py").write_text(body)
    (root / "pytest.ini").write_text("[pytest]\npythonpath = src\n")


def run_pytest(
    cwd: Path, pycache: Path, pythonpath: tuple[str, ...] = (), *, isolated: bool = False
) -> None:
    """pytest in ``cwd``, its bytecode kept in ``pycache`` from run to run.

    Outside the tree: a ``.pyc`` beside a source is a file the next snapshot sees change. Each
    side keeps its own, as donegate's store does for a sealed run: a kept copy's modules are
    found again at the next run, a fresh copy's (a new path each time) are compiled anew."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(pythonpath)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    argv = PYTEST
    if isolated:
        wrapped = _isolation.wrap(PYTEST, _isolation.Isolation(), [cwd], [cwd, pycache], env, cwd)
        assert wrapped.by is not None, wrapped.why_not
        argv = wrapped.argv
        _isolation.environment(env)
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"pytest failed in {cwd}: {result.stdout.decode()[-2000:]}")


def direct_s(root: Path, *, isolated: bool = False) -> float:
    start = time.perf_counter()
    run_pytest(root, root.parent / f"pycache-{root.name}", isolated=isolated)
    return time.perf_counter() - start


def can_isolate() -> bool:
    """Whether this machine can run the checks' sandbox (bubblewrap, namespaces)."""
    probe = _isolation.wrap(["true"], _isolation.Isolation(), [], [], os.environ, Path.cwd())
    return probe.by is not None


def sealed_s(snapshot: Snapshot, state: Path) -> tuple[float, float]:
    """Total time of seal + pytest + removal, and of the seal alone."""
    start = time.perf_counter()
    with seal(snapshot, state_dir=state, site_dirs=()) as sealed:
        copied = time.perf_counter()
        if sealed.findings:
            raise SystemExit(f"unexpected findings: {sealed.findings[:3]}")
        run_pytest(sealed.root, state / "pycache-fresh", sealed.pythonpath)
    return time.perf_counter() - start, copied - start


class OneFileStops:
    """Stops of a confined agent, each after a change to one source file of the tree."""

    def __init__(self, root: Path, state: Path) -> None:
        self.root, self.state = root, state
        self.target = root / "src" / "calc" / "__init__.py"
        self.turn = 0
        self.last = Snapshot.take(root)
        with seal(self.last, state_dir=state, site_dirs=(), keep=True):
            pass  # the first stop of a session copies the whole tree; later ones are timed

    def once(self) -> tuple[float, float]:
        """Total time of snapshot + kept seal + pytest, and of the snapshot and seal alone."""
        self.turn += 1
        body = f"def add(a, b):\n    return a + b  # edit {self.turn}\n"
        self.target.write_text(body)
        start = time.perf_counter()
        self.last = Snapshot.take(self.root, self.last)
        with seal(self.last, state_dir=self.state, site_dirs=(), keep=True) as sealed:
            ready = time.perf_counter()
            if sealed.findings or sealed.root.parent.name.startswith("seal-"):
                raise SystemExit(f"the kept copy was not used: {sealed.findings[:3]}")
            run_pytest(sealed.root, self.state / "pycache-kept", sealed.pythonpath)
        return time.perf_counter() - start, ready - start


def copy_floor_s(root: Path, state: Path) -> float:
    """``cp -r`` of the tree and ``rm -rf`` of the copy."""
    target = state / "cp-floor"
    start = time.perf_counter()
    subprocess.run(["cp", "-r", "--reflink=auto", str(root), str(target)], check=True)
    subprocess.run(["rm", "-rf", str(target)], check=True)
    return time.perf_counter() - start


def measure(name: str, root: Path, state: Path, repeat: int) -> None:
    snapshot = Snapshot.take(root)
    runs: dict[str, list[float]] = {"direct": [], "total": [], "seal": [], "floor": []}
    isolate = can_isolate()
    isolated: list[float] = []
    stops = OneFileStops(root, state)
    kept: dict[str, list[float]] = {"total": [], "ready": []}
    for _ in range(repeat):
        runs["direct"].append(direct_s(root))
        whole, copy = sealed_s(stops.last, state)  # the tree as the last stop left it
        runs["total"].append(whole)
        runs["seal"].append(copy)
        runs["floor"].append(copy_floor_s(root, state))
        if isolate:
            isolated.append(direct_s(root, isolated=True))
        total, ready = stops.once()
        kept["total"].append(total)
        kept["ready"].append(ready)
    base, both, only, floor = (statistics.median(runs[k]) * 1000 for k in runs)
    print(f"{name}: {len(snapshot.entries)} files in the snapshot")
    print(f"  pytest directly              {base:8.1f} ms")
    print(f"  seal alone                   {only:8.1f} ms  {only / base:5.2f}x pytest")
    print(f"  seal + pytest + removal      {both:8.1f} ms  {both / base:5.2f}x pytest")
    print(f"  cp -r + rm -rf (the floor)   {floor:8.1f} ms  {floor / base:5.2f}x pytest")
    if isolated:
        boxed = statistics.median(isolated) * 1000
        print(f"  pytest in the sandbox        {boxed:8.1f} ms  {boxed / base:5.2f}x pytest")
    else:
        print("  pytest in the sandbox        (no bubblewrap here: not measured)")
    ready, stop = (statistics.median(kept[k]) * 1000 for k in ("ready", "total"))
    print("  a stop that changed one file, the copy kept (confined agent):")
    print(f"    snapshot + kept seal       {ready:8.1f} ms  {ready / base:5.2f}x pytest")
    print(f"    + pytest in the copy       {stop:8.1f} ms  {stop / base:5.2f}x pytest")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dir", default=None, help="where to build the trees and the copies")
    args = parser.parse_args()
    # As on a developer's machine: with it set, the command run directly would compile what it
    # imports at every round, while donegate's runs read its bytecode store (the baseline slower).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(prefix="donegate-bench-", dir=args.dir) as tmp:
        small, large, state = Path(tmp) / "small", Path(tmp) / "large", Path(tmp) / "state"
        small.mkdir()
        add_suite(small, args.tests)
        large.mkdir()
        workspace_snapshot.make_repo(large, args.files)
        add_suite(large, args.tests)
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        cpus = os.cpu_count()
        print(f"median of {args.repeat} runs, {cpus} CPUs (load {load}), {args.tests} tests:")
        measure("small suite", small, state, args.repeat)
        measure(f"{args.files}-file git tree + the suite", large, state, args.repeat)


if __name__ == "__main__":
    main()
