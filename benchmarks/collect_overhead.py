"""What ``donegate collect`` costs on top of the checks it runs.

Run: ``.venv/bin/python benchmarks/collect_overhead.py [--repeat N] [--tests N]``.

Two figures, measured in the same run:
  1. ``donegate collect`` (the real CLI process, start-up included) with one ``test_run`` of a small
     pytest suite, against running the same pytest command directly; runs interleaved, medians
     compared. Target: a ratio close to 1.
  2. Three checks of one second each collected together: wall time. Target: about one second.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

DONEGATE = [sys.executable, "-m", "donegate"]
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]


def make_project(root: Path, tests: int) -> None:
    """A small project: ``tests`` passing tests in one module, and its donegate.toml."""
    (root / "tests").mkdir()
    body = "\n".join(f"def test_{i}():\n    assert {i} + 1 == {i + 1}\n" for i in range(tests))
    (root / "tests" / "test_suite.py").write_text(body)
    (root / "donegate.toml").write_text(
        f'[[checks]]\ncheck_type = "test_run"\ncommand = {json.dumps(PYTEST)}\n'
    )
    sleep = [sys.executable, "-c", "import time; time.sleep(1)"]
    check = f'[[checks]]\ncheck_type = "test_run"\ncommand = {json.dumps(sleep)}\n'
    (root / "three.toml").write_text(check * 3)


def timed(argv: list[str], cwd: Path, expect: int = 0) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != expect:
        sys.exit(f"{argv[:4]} exited {done.returncode}:\n{done.stderr.decode()[-2000:]}")
    return elapsed


def collect_argv(config: str) -> list[str]:
    claim = ["--task-id", "bench", "--mutation", "file_write:src/app.py"]
    return [*DONEGATE, "collect", "--config", config, *claim, "--json"]


def overhead(root: Path, repeat: int) -> tuple[float, float]:
    """Median seconds of pytest alone and of donegate collect running it (interleaved)."""
    direct, collected = [], []
    for _ in range(repeat):
        direct.append(timed(PYTEST, root))
        collected.append(timed(collect_argv("donegate.toml"), root))
    return statistics.median(direct), statistics.median(collected)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--tests", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="donegate-bench-") as scratch:
        root = Path(scratch)
        make_project(root, args.tests)
        timed(PYTEST, root)  # warm the file cache for both sides
        direct, collected = overhead(root, args.repeat)
        three = timed(collect_argv("three.toml"), root)
    print(
        textwrap.dedent(
            f"""\
            test_run overhead ({args.tests} tests, median of {args.repeat}, interleaved):
              pytest directly         {direct:7.3f} s
              donegate collect        {collected:7.3f} s
              ratio                   {collected / direct:7.2f}x  (+{collected - direct:.3f} s)
            three one-second checks collected together (CLI, start-up included):
              wall time               {three:7.3f} s  (sequential would be >= 3 s)"""
        )
    )


if __name__ == "__main__":
    main()
