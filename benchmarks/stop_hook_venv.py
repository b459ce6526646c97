"""Wall time of a ``Stop`` hook when nothing changed, on a 10,000-file repository that keeps its
virtualenv inside the tree (``.venv/``, every file of which is digested at every stop).

Run: ``.venv/bin/python benchmarks/stop_hook_venv.py [--files N] [--repeat R] [--packages ...]``.

As ``benchmarks/stop_hook.py``, with a real ``.venv/`` made by ``python -m venv`` and ``pip
install PACKAGES`` (from the package index; default: pytest, requests and a few libraries, some
three thousand files), and the checks' command run by that environment's interpreter. Prints
the environment's size, the milliseconds of ``python -c pass`` and of the hook, and the ratio.
Target: at most 10x.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from donegate.demo.project import git, payload
from donegate.hooks.install import hook_command
from stop_hook import SLOW_TEST_S, TARGET_RATIO, interleaved_ms, make_repo, timed

PACKAGES = ("pytest", "requests", "attrs", "hypothesis", "pydantic", "rich")


def make_venv(root: Path, packages: list[str]) -> Path:
    """``root/.venv`` with ``packages`` installed by its own pip; its interpreter."""
    subprocess.run([sys.executable, "-m", "venv", str(root / ".venv")], check=True)
    python = root / ".venv" / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, *packages], check=True)
    return python


def count_files(top: Path) -> tuple[int, int]:
    """Files under ``top``, and those outside bytecode caches (the ones digested)."""
    every = digested = 0
    for folder, _, names in os.walk(top):
        every += len(names)
        digested += 0 if "__pycache__" in Path(folder).parts else len(names)
    return every, digested


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--packages", nargs="*", default=list(PACKAGES))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="donegate-bench-") as tmp:
        root, state = Path(tmp) / "repo", Path(tmp) / "state"
        root.mkdir()
        make_repo(root, args.files)
        python = make_venv(root, args.packages)
        command = json.dumps([str(python), "-c", f"import time; time.sleep({SLOW_TEST_S})"])
        (root / "donegate.toml").write_text(
            f'[[checks]]\ncheck_type = "test_run"\ncommand = {command}\n'
        )
        git(root, "add", "donegate.toml")
        git(root, "commit", "-q", "-m", "the checks run the project's virtualenv")
        every, digested = count_files(root / ".venv")
        env = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
        hook = shlex.split(hook_command("claude-code"))
        time.sleep(2.1)  # every file ages past the racily-clean window, as between two stops
        timed(hook, json.dumps(payload("SessionStart", "bench", root)), env, root)
        stop = json.dumps(payload("Stop", "bench", root))
        timed(hook, stop, env, root)  # warm the OS cache and the snapshot cache once
        floor, hook_ms = interleaved_ms(args.repeat, hook, stop, env, root)
    ratio = hook_ms / floor
    print(f"{args.files} files and a .venv of {every} files ({digested} digested), nothing changed")
    print(f"  median of {args.repeat} interleaved processes each")
    print(f"  python -c pass                  {floor:8.1f} ms")
    print(f"  donegate hook claude-code Stop  {hook_ms:8.1f} ms   ratio {ratio:.1f}x")
    print(f"  target <= {TARGET_RATIO:.0f}x: {'met' if ratio <= TARGET_RATIO else 'MISSED'}")
    if hook_ms / 1000 >= SLOW_TEST_S:
        raise SystemExit("the hook ran the test command although nothing changed")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
