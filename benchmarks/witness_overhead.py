"""What donegate's own runner costs: the witness, and the fresh bytecode cache.

Run: ``.venv/bin/python benchmarks/witness_overhead.py [--repeat N] [--tests N]``.

On a suite of ``--tests`` passing tests (default 50), runs interleaved, medians compared:
  1. ``python -m pytest`` as the agent's shell would run it (the baseline);
  2. the same with donegate's witness loaded (``-p``, and ``--junitxml`` for the cross-check);
  3. ``test_run`` itself: the witness, the cleaned environment, ``PYTHONSAFEPATH`` and a fresh
     ``PYTHONPYCACHEPREFIX`` (so every imported module is compiled again), and the judging.
Target: the witness alone close to 1; the whole ``test_run`` dominated by the bytecode cache.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from donegate.checks import CheckContext
from donegate.checks.test_run import TEST_RUN, TestRunSettings
from donegate.sealed._witness import prepare

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]


def make_suite(root: Path, tests: int) -> None:
    """``tests`` passing tests in one module."""
    (root / "tests").mkdir()
    body = "\n".join(f"def test_{i}():\n    assert {i} + 1 == {i + 1}\n" for i in range(tests))
    (root / "tests" / "test_suite.py").write_text(body)


def plain(root: Path) -> float:
    """Seconds of pytest alone."""
    return _timed(PYTEST, root, dict(os.environ))


def with_witness(root: Path) -> float:
    """Seconds of pytest with the witness loaded and writing its report, nothing else changed."""
    with tempfile.TemporaryDirectory() as scratch:
        witness = prepare(Path(scratch))
        env = {**os.environ, "PYTHONPATH": str(witness.plugin_dir)}
        env[witness.env_var] = witness.settings({}, cwd_last=False)
        argv = [*PYTEST, "-p", witness.module, f"--junitxml={scratch}/junit.xml"]
        seconds = _timed(argv, root, env)
        if not witness.report.exists():
            sys.exit("the witness wrote no report")
        return seconds


def through_test_run(root: Path) -> float:
    """Seconds of ``test_run`` collecting the same command."""
    settings = TestRunSettings(check_type="test_run", command=PYTEST, timeout_s=600)
    started = time.perf_counter()
    seen = TEST_RUN.collect(settings, CheckContext(root))
    elapsed = time.perf_counter() - started
    if seen.observed is None:
        sys.exit(f"test_run did not count: {seen.why_not}")
    return elapsed


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{argv[:4]} exited {done.returncode}:\n{done.stdout.decode()[-2000:]}")
    return elapsed


def main() -> None:
    """Measure and print the medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tests", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        make_suite(root, args.tests)
        runs: dict[str, list[float]] = {"plain": [], "witness": [], "test_run": []}
        for _ in range(args.repeat):
            runs["plain"].append(plain(root))
            runs["witness"].append(with_witness(root))
            runs["test_run"].append(through_test_run(root))
    medians = {name: statistics.median(times) for name, times in runs.items()}
    base = medians["plain"]
    print(f"{args.tests} tests, {args.repeat} interleaved runs each, medians:")
    for name, median in medians.items():
        print(f"  {name:9} {median:7.3f} s   ratio {median / base:5.2f}")
    print(json.dumps({name: round(m, 3) for name, m in medians.items()}))


if __name__ == "__main__":
    main()
