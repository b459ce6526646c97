"""What ``donegate collect`` costs on top of the checks it runs.

Run: ``.venv/bin/python benchmarks/collect_overhead.py [--repeat N]``.

Figures measured in the same run:
  1. ``donegate collect`` (the real CLI process, start-up included) with one ``test_run`` of a
     pytest suite, against running the same pytest command directly, for a 50-test suite and a
     one-test suite; all four commands interleaved in every round, medians compared. Target: at most
     1.05x on the 50-test suite. The one-test suite shows the fixed cost nearly alone.
  2. The first collect, with donegate's bytecode store still empty (a new machine, or a new
     Python), shown apart: after each run donegate compiles some of what later runs reuse (for at
     most a quarter of the run's time), so a few warm-up collects come before the timed rounds.
  3. Three checks of one second each collected together: wall time. Target: about one second.

donegate's state directory (and its bytecode store) is a fresh one inside the scratch directory.
``PYTHONDONTWRITEBYTECODE`` is removed from the commands' environment, so that pytest run directly
keeps its bytecode, as on a developer's machine.
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

DONEGATE = [sys.executable, "-m", "donegate"]
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
SUITES = (50, 1)
WARM_UP = 3  # collects of each suite that fill the bytecode store before the timed rounds


def make_project(root: Path, tests: int) -> Path:
    """A small project: ``tests`` passing tests in one module, and its donegate.toml."""
    project = root / f"suite-{tests}"
    (project / "tests").mkdir(parents=True)
    body = "\n".join(f"def test_{i}():\n    assert {i} + 1 == {i + 1}\n" for i in range(tests))
    (project / "tests" / "test_suite.py").write_text(body)
    (project / "donegate.toml").write_text(
        f'[[checks]]\ncheck_type = "test_run"\ncommand = {json.dumps(PYTEST)}\n'
    )
    sleep = [sys.executable, "-c", "import time; time.sleep(1)"]
    check = f'[[checks]]\ncheck_type = "test_run"\ncommand = {json.dumps(sleep)}\n'
    (project / "three.toml").write_text(check * 3)
    return project


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{argv[:4]} exited {done.returncode}:\n{done.stderr.decode()[-2000:]}")
    return elapsed


def collect_argv(config: str) -> list[str]:
    claim = ["--task-id", "bench", "--mutation", "file_write:src/app.py"]
    return [*DONEGATE, "collect", "--config", config, *claim, "--json"]


def rounds(projects: dict[int, Path], env: dict[str, str], repeat: int) -> dict[str, list[float]]:
    """Seconds per command and round, the four commands interleaved in every round."""
    times: dict[str, list[float]] = {}
    for _ in range(repeat):
        for tests, project in projects.items():
            times.setdefault(f"pytest {tests}", []).append(timed(PYTEST, project, env))
            collect = timed(collect_argv("donegate.toml"), project, env)
            times.setdefault(f"collect {tests}", []).append(collect)
    return times


def report(times: dict[str, list[float]], first: float, three: float) -> str:
    lines = [f"test_run overhead (median of {len(times['pytest 50'])} rounds, interleaved):"]
    for tests in SUITES:
        direct = statistics.median(times[f"pytest {tests}"])
        collected = statistics.median(times[f"collect {tests}"])
        ratio, extra = collected / direct, collected - direct
        lines += [
            f"  {tests}-test suite:",
            f"    pytest directly         {direct:7.3f} s",
            f"    donegate collect        {collected:7.3f} s",
            f"    ratio                   {ratio:7.2f}x  (+{extra:.3f} s)",
        ]
    lines += [
        "first collect, bytecode store empty (50-test suite):",
        f"  wall time               {first:7.3f} s",
        "three one-second checks collected together (CLI, start-up included):",
        f"  wall time               {three:7.3f} s  (sequential would be >= 3 s)",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="donegate-bench-") as scratch:
        root = Path(scratch)
        env = {**os.environ, "DONEGATE_STATE_DIR": str(root / "state")}
        # With it set, pytest run directly would compile all it imports at every round, while
        # donegate's runs read its bytecode store: the baseline would be the slower side.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        projects = {tests: make_project(root, tests) for tests in SUITES}
        for project in projects.values():
            timed(PYTEST, project, env)  # warm the file cache for both sides
        first = timed(collect_argv("donegate.toml"), projects[50], env)
        for _ in range(WARM_UP):
            for project in projects.values():
                timed(collect_argv("donegate.toml"), project, env)
        times = rounds(projects, env, args.repeat)
        three = timed(collect_argv("three.toml"), projects[50], env)
    print(report(times, first, three))


if __name__ == "__main__":
    main()
