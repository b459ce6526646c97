"""Wall time of a ``Stop`` hook when nothing changed, on a 10,000-file repository.

Run: ``.venv/bin/python benchmarks/stop_hook.py [--files N] [--repeat R]``.

Creates a git repository of N small Python files with a ``donegate.toml`` whose test command would
take seconds, starts a session (``SessionStart``), then times, in the same run and as the median of
R repeats, run alternately so that both see the same machine, each a fresh process as the host
starts one:
  1. ``python -c pass`` (the floor: interpreter start-up),
  2. the hook command ``donegate init claude-code`` installs (``python -E -P -m donegate hook
     claude-code``) with a ``Stop`` payload, nothing changed since the baseline.
Prints milliseconds and the ratio. Target: at most 10x. Nothing changed, so no check may run:
the benchmark fails if the hook took longer than the test command alone would.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import workspace_snapshot  # the benchmarks folder is on sys.path when run as a script
from donegate.demo.project import git, payload
from donegate.hooks.install import hook_command

TARGET_RATIO = 10.0
SLOW_TEST_S = 3


def make_repo(root: Path, files: int) -> None:
    """The snapshot benchmark's tree, plus a committed config whose test command is slow."""
    workspace_snapshot.make_repo(root, files)
    command = json.dumps([sys.executable, "-c", f"import time; time.sleep({SLOW_TEST_S})"])
    (root / "donegate.toml").write_text(
        f'[[checks]]\ncheck_type = "test_run"\ncommand = {command}\n'
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "config")


def timed(cmd: list[str], stdin: str, env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run(
        cmd, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, check=False
    )
    elapsed = time.perf_counter() - start
    if result.returncode != 0 or "decision" in result.stdout:
        raise SystemExit(f"unexpected hook answer: {result.returncode} {result.stdout!r}")
    return elapsed


def interleaved_ms(
    runs: int, hook: list[str], stop: str, env: dict[str, str], cwd: Path
) -> tuple[float, float]:
    """Medians of ``python -c pass`` and of the hook, run alternately so both see the same load."""
    floor: list[float] = []
    hooked: list[float] = []
    for _ in range(runs):
        floor.append(timed([sys.executable, "-c", "pass"], "", env, cwd))
        hooked.append(timed(hook, stop, env, cwd))
    return statistics.median(floor) * 1000, statistics.median(hooked) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="donegate-bench-") as tmp:
        root, state = Path(tmp) / "repo", Path(tmp) / "state"
        root.mkdir()
        make_repo(root, args.files)
        env = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
        hook = shlex.split(hook_command("claude-code"))  # the command init installs
        session = json.dumps(payload("SessionStart", "bench", root))
        time.sleep(2.1)  # every file ages past the racily-clean window, as between two stops
        timed(hook, session, env, root)
        stop = json.dumps(payload("Stop", "bench", root))
        timed(hook, stop, env, root)  # warm the OS cache and the snapshot cache once
        floor, hook_ms = interleaved_ms(args.repeat, hook, stop, env, root)
    ratio = hook_ms / floor
    print(
        f"{args.files} files, nothing changed, median of {args.repeat} interleaved processes each"
    )
    print(f"  python -c pass                  {floor:8.1f} ms")
    print(f"  donegate hook claude-code Stop  {hook_ms:8.1f} ms   ratio {ratio:.1f}x")
    print(f"  target <= {TARGET_RATIO:.0f}x: {'met' if ratio <= TARGET_RATIO else 'MISSED'}")
    if hook_ms / 1000 >= SLOW_TEST_S:
        raise SystemExit("the hook ran the test command although nothing changed")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
