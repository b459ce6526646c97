"""The cost of a sealed run: seal (copy + check every file) + pytest, against pytest run directly.

Run: ``.venv/bin/python benchmarks/sealed_run.py [--files N] [--tests T] [--repeat R] [--no-hook]``.

Two trees, each with a suite of T quick tests (default 50) under ``tests/`` and its code under
``src/``: a small one (just the suite), and the snapshot benchmark's git repository of N small
files (default 10,000) with the same suite added. For each, as the median of R repeats:

  The bar, in adjacent pairs so that both sides of a pair see the same machine:
  1. ``python -m pytest -q tests`` in the live tree (the baseline);
  2. a stop of a confined agent that changed one file: the command parked in the kept copy (as
     the stop hook parks it, before its snapshot), the snapshot taken against the last one, the
     kept copy brought up to date (``seal(keep=True)``) and the parked run given its run: the
     command as a stop runs it (with the witness and the JUnit report, donegate's bytecode
     store, in the checks' own sandbox where the machine has bubblewrap). The issue's bar: at
     most 20% over the command alone. Beside it, the same stop with the command started cold
     once the copy is ready.
  Then, for context, alternately:
  3. ``seal(snapshot)`` + the command in a fresh copy, with the seal's import path; the copy is
     removed at the end, and that is timed too;
  4. ``cp -r --reflink=auto`` of the tree and ``rm -rf`` of the result: the floor the file system
     sets for any copy (the seal also hashes every file it copies);
  5. the command in the live tree inside the checks' sandbox: what isolation adds to a run.
  And for the large tree (unless ``--no-hook``), the whole stop through the real hook, as
  ``real_project_stop.py`` runs it (a prompt, the edit, ``donegate hook claude-code`` with init's
  sandbox settings), interleaved with the command: what the agent waits for, with the hook's
  start, the scan, the claim and the receipt that items 1 and 2 leave out.
``PYTHONDONTWRITEBYTECODE`` is removed from the environment, so that the command run directly
keeps its bytecode, as on a developer's machine. Prints milliseconds and the ratio to the
baseline; for the bar and the whole stop, also the median of each pair's own ratio, the steadier
figure on a machine whose speed drifts. File creation dominates a fresh seal: run with ``--dir``
on the file system that holds donegate's state directory.
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

import real_project_stop  # the benchmarks folder is on sys.path when run as a script
import workspace_snapshot
from donegate.sealed import _isolation, _launch
from donegate.sealed.copy import Sealed, kept_copy, seal
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
    pycache.mkdir(exist_ok=True)  # an isolated run can write only where a directory exists
    if isolated:
        wrapped = _isolation.wrap(PYTEST, _isolation.Isolation(), [cwd, pycache], [cwd], env, cwd)
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
    """Stops of a confined agent, each after a change to one source file of the tree: the test
    command run as a stop runs it (``_launch``: the witness, the JUnit report, the bytecode
    store, the checks' sandbox), parked in the kept copy before the snapshot unless ``cold``."""

    def __init__(self, root: Path, state: Path) -> None:
        self.root, self.state = root, state
        self.target = root / "src" / "calc" / "__init__.py"
        self.turn = 0
        self.launch = _launch.Launch(command=tuple(PYTEST))
        self.last = Snapshot.take(root)
        with seal(self.last, state_dir=state, site_dirs=(), keep=True):
            pass  # the first stop of a session copies the whole tree; later ones are timed

    def once(self, *, cold: bool = False) -> tuple[float, float]:
        """Total time of the stop's snapshot, kept seal and run; and of the part before the run
        is given (parked) or started (cold)."""
        self.turn += 1
        body = f"def add(a, b):\n    return a + b  # edit {self.turn}\n"
        self.target.write_text(body)
        start = time.perf_counter()
        parked = None if cold else self._parked()
        self.last = Snapshot.take(self.root, self.last)
        with seal(self.last, state_dir=self.state, site_dirs=(), keep=True) as sealed:
            ready = time.perf_counter()
            if sealed.findings or not sealed.lasting:
                raise SystemExit(f"the kept copy was not used: {sealed.findings[:3]}")
            place = self._place(sealed)
            if parked is not None and not parked.release(place, [sealed.root]):
                raise SystemExit("the parked run was not given its run")
            started = parked or _launch.start(self.launch, place)
            assert isinstance(started, _launch.Started), started
            run, reports = started.finish()
        if run.returncode != 0 or reports.witness is None or reports.junit is None:
            raise SystemExit(f"the stop's run failed: {run.output_tail[-2000:]}")
        return time.perf_counter() - start, ready - start

    def _parked(self) -> _launch.Started | None:
        kept = kept_copy(self.root, self.state)
        assert kept is not None
        return _launch.park(self.launch, self._place(kept))

    def _place(self, sealed: Sealed) -> _launch.Place:
        return _launch.Place(
            base_dir=self.root,
            run_dir=sealed.root,
            pythonpath=sealed.pythonpath,
            bytecode=sealed.bytecode,
            lasting=True,
        )


def copy_floor_s(root: Path, state: Path) -> float:
    """``cp -r`` of the tree and ``rm -rf`` of the copy."""
    target = state / "cp-floor"
    start = time.perf_counter()
    subprocess.run(["cp", "-r", "--reflink=auto", str(root), str(target)], check=True)
    subprocess.run(["rm", "-rf", str(target)], check=True)
    return time.perf_counter() - start


def measure(name: str, root: Path, state: Path, repeat: int, *, hook: bool = False) -> None:
    """Print the figures of ``root``; with ``hook``, the whole stop through the hook too,
    measured before the fresh copies and ``cp -r`` churn the file system."""
    snapshot = Snapshot.take(root)
    isolate = can_isolate()
    stops = OneFileStops(root, state)
    for _ in range(3):
        stops.once()  # the bytecode store learns what the stop's run imports
    bar: dict[str, list[float]] = {"direct": [], "stop": [], "ready": [], "cold": []}
    for _ in range(repeat):  # the bar: each pair adjacent
        bar["direct"].append(direct_s(root))
        total, ready = stops.once()
        bar["stop"].append(total)
        bar["ready"].append(ready)
        bar["cold"].append(stops.once(cold=True)[0])
    whole_stop = through_the_hook(root, repeat) if hook else None
    runs: dict[str, list[float]] = {"total": [], "seal": [], "floor": [], "boxed": []}
    now = Snapshot.take(root, stops.last)  # the tree as the last stop left it
    for _ in range(repeat):
        whole, copy = sealed_s(now, state)
        runs["total"].append(whole)
        runs["seal"].append(copy)
        runs["floor"].append(copy_floor_s(root, state))
        if isolate:
            runs["boxed"].append(direct_s(root, isolated=True))
    base, stop, ready, cold = (
        statistics.median(bar[k]) * 1000 for k in ("direct", "stop", "ready", "cold")
    )
    print(f"{name}: {len(snapshot.entries)} files in the snapshot")
    print(f"  pytest directly              {base:8.1f} ms")
    where = "in the sandbox" if isolate else "not isolated: no bubblewrap here"
    print(f"  a stop that changed one file, the copy kept (confined agent; the run {where}):")
    print(f"    snapshot + kept seal       {ready:8.1f} ms  {ready / base:5.2f}x pytest")
    print(f"    + the run, parked          {stop:8.1f} ms  {stop / base:5.2f}x pytest   (the bar)")
    pairs = [s / d for s, d in zip(bar["stop"], bar["direct"], strict=True)]
    print(f"      the median of each pair's ratio        {statistics.median(pairs):5.2f}x")
    print(f"    the same, started cold     {cold:8.1f} ms  {cold / base:5.2f}x pytest")
    both, only, floor = (statistics.median(runs[k]) * 1000 for k in ("total", "seal", "floor"))
    print(f"  seal alone (a fresh copy)    {only:8.1f} ms  {only / base:5.2f}x pytest")
    print(f"  seal + pytest + removal      {both:8.1f} ms  {both / base:5.2f}x pytest")
    print(f"  cp -r + rm -rf (the floor)   {floor:8.1f} ms  {floor / base:5.2f}x pytest")
    if runs["boxed"]:
        boxed = statistics.median(runs["boxed"]) * 1000
        print(f"  pytest in the sandbox        {boxed:8.1f} ms  {boxed / base:5.2f}x pytest")
    else:
        print("  pytest in the sandbox        (no bubblewrap here: not measured)")
    if whole_stop is not None:
        command, stop, paired = whole_stop
        print("  the whole stop, through the hook (interleaved with the command):")
        print(f"    the command                {command:8.1f} ms")
        ratio = stop / command
        print(f"    a stop after a one-file edit {stop:6.1f} ms  {ratio:5.2f}x the command")
        print(f"    the median of each round's ratio      {paired:5.2f}x")


def through_the_hook(root: Path, repeat: int) -> tuple[float, float, float]:
    """The command's and the whole stop's medians (ms), as ``real_project_stop.py`` times them,
    on ``root`` (a git repository), and the median of each round's ratio."""
    command = [*PYTEST[:-1], "tests"]  # the same command, run from the tree's root
    target = root / "src" / "calc" / "__init__.py"
    return real_project_stop.medians(root, command, target, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dir", default=None, help="where to build the trees and the copies")
    parser.add_argument("--no-hook", action="store_true", help="skip the stop through the hook")
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
        title = f"{args.files}-file git tree + the suite"
        measure(title, large, state, args.repeat, hook=not args.no_hook)


if __name__ == "__main__":
    main()
