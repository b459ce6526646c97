"""What donegate adds inside a pytest run: its witness, pytest's JUnit report, each apart.

Run: ``.venv/bin/python benchmarks/witness_overhead.py [--tests N [N ...]] [--repeat R]``, or on a
real project: ``... --project DIR --command JSON`` (the command as a JSON list, run in ``DIR``).

A stop runs the team's pytest command with two additions: donegate's witness (``-p``, the report of
what ran) and ``--junitxml`` (pytest's own account, to cross-check the witness). Both cost time at
every test. On a suite of N quick passing tests (default 2,000: on a small suite the start-up's
noise hides the cost per test), or on the project's command, interleaved rounds of:
  1. the command as the agent's shell would run it (the baseline);
  2. the same with ``--junitxml`` only;
  3. the same with the witness only;
  4. both, as a stop runs it;
  5. for a generated suite, ``test_run`` itself: both, the cleaned environment, ``PYTHONSAFEPATH``,
     a fresh bytecode prefix (every module compiled again), the sandbox and the judging (its wall
     time only: the sandbox's processes are not counted in this process's CPU time).
Prints, for each, the median wall and CPU time (the CPU time is the steadier on a shared machine),
the extra CPU over the baseline, and that extra per test: the part of a stop's cost that grows with
the suite. One round first is not counted (bytecode written). ``PYTHONDONTWRITEBYTECODE`` is
removed, as on a developer's machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from donegate.checks import CheckContext
from donegate.checks.test_run import TEST_RUN, TestRunSettings
from donegate.sealed._witness import WitnessReport, WitnessSetup, prepare, read_report

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]


class Timing:
    """The wall and CPU seconds of one run (the CPU of its processes, children included)."""

    def __init__(self, wall: float, cpu: float) -> None:
        self.wall, self.cpu = wall, cpu


def make_suite(root: Path, tests: int) -> None:
    """``tests`` passing tests in one module."""
    (root / "tests").mkdir()
    body = "\n".join(f"def test_{i}():\n    assert {i} + 1 == {i + 1}\n" for i in range(tests))
    (root / "tests" / "test_suite.py").write_text(body)


def variant(command: list[str], root: Path, *, junit: bool, witness: bool) -> Callable[[], Timing]:
    """A run of ``command`` in ``root`` with the chosen additions, as a stop adds them."""

    def run() -> Timing:
        with tempfile.TemporaryDirectory() as scratch:
            argv, env = list(command), dict(os.environ)
            setup = _witnessed(argv, env, Path(scratch)) if witness else None
            if junit:
                argv.append(f"--junitxml={scratch}/junit.xml")
            timing = _timed(argv, root, env)
            if setup is not None:
                _report(setup)
            if junit and not Path(scratch, "junit.xml").exists():
                sys.exit("pytest wrote no JUnit report")
            return timing

    return run


def through_test_run(command: list[str], root: Path) -> Callable[[], Timing]:
    """``test_run`` collecting ``command``: its wall time (CPU: not known, see the module's doc)."""

    def run() -> Timing:
        settings = TestRunSettings(check_type="test_run", command=command, timeout_s=600)
        started = time.perf_counter()
        seen = TEST_RUN.collect(settings, CheckContext(root))
        timing = Timing(time.perf_counter() - started, float("nan"))
        if seen.observed is None:
            sys.exit(f"test_run did not count: {seen.why_not}")
        return timing

    return run


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> Timing:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{argv[:4]} exited {done.returncode}:\n{done.stdout.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu)


def _witnessed(argv: list[str], env: dict[str, str], scratch: Path) -> WitnessSetup:
    """Load the witness into the run of ``argv`` with ``env`` (both changed in place)."""
    setup = prepare(scratch)
    paths = [str(setup.plugin_dir), *filter(None, [env.get("PYTHONPATH")])]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env[setup.env_var] = setup.settings({}, cwd_last=False)
    argv += ["-p", setup.module]
    return setup


def _report(setup: WitnessSetup) -> WitnessReport:
    report = read_report(setup.report)
    if report is None:
        sys.exit("the witness wrote no report it could read")
    return report


def tests_run(command: list[str], root: Path) -> int:
    """How many tests the command runs, as the witness counts them."""
    with tempfile.TemporaryDirectory() as scratch:
        argv, env = list(command), dict(os.environ)
        setup = _witnessed(argv, env, Path(scratch))
        _timed(argv, root, env)
        return len(_report(setup).tests)


def measure(title: str, command: list[str], root: Path, repeat: int, *, judged: bool) -> None:
    """Run the variants in interleaved rounds and print their medians."""
    runs = {
        "plain": variant(command, root, junit=False, witness=False),
        "+ --junitxml": variant(command, root, junit=True, witness=False),
        "+ the witness": variant(command, root, junit=False, witness=True),
        "+ both (a stop)": variant(command, root, junit=True, witness=True),
    }
    if judged:
        runs["test_run"] = through_test_run(command, root)
    tests = tests_run(command, root)
    for run in runs.values():  # not counted: bytecode written, caches warm
        run()
    timings: dict[str, list[Timing]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            timings[name].append(run())
    wall = {name: statistics.median(t.wall for t in ts) for name, ts in timings.items()}
    cpu = {name: statistics.median(t.cpu for t in ts) for name, ts in timings.items()}
    print(f"{title}: {tests} tests, median of {repeat} interleaved rounds")
    print(f"  {'':16} {'wall':>9} {'CPU':>9} {'extra CPU':>10} {'per test':>9}")
    for name in runs:
        if name == "test_run":
            ratio = wall[name] / wall["plain"]
            print(f"  {name:16} {wall[name] * 1000:6.0f} ms   (wall {ratio:.2f}x)")
            continue
        extra = cpu[name] - cpu["plain"]
        each = extra / tests * 1e6 if tests else 0.0
        shown = "" if name == "plain" else f"{extra / cpu['plain']:+9.1%} {each:6.0f} µs"
        print(f"  {name:16} {wall[name] * 1000:6.0f} ms {cpu[name] * 1000:6.0f} ms {shown}")
    cpu.pop("test_run", None)
    rounded = {
        key: {name: round(s, 4) for name, s in d.items()}
        for key, d in (("wall_s", wall), ("cpu_s", cpu))
    }
    print(json.dumps({"tests": tests, **rounded}))


def main() -> None:
    """Measure each suite (or the project) and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--tests", type=int, nargs="+", default=[2000])
    parser.add_argument("--project", type=Path, help="a real project's directory")
    parser.add_argument("--command", help="its test command, as a JSON list (with --project)")
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.project is not None:
        if not args.command:
            parser.error("--project needs --command")
        command = json.loads(args.command)
        measure(args.project.name, command, args.project.resolve(), args.repeat, judged=False)
        return
    for tests in args.tests:
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            make_suite(root, tests)
            measure(f"a suite of {tests} quick tests", PYTEST, root, args.repeat, judged=True)


if __name__ == "__main__":
    main()
