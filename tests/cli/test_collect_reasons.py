"""``donegate collect``, run as a process: an unverified verdict's reason gives the real cause of
a check that did not happen (a missing runner, a deadline, a run that ran nothing), never only
"verifier kind absent"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PY = sys.executable
SLEEPER = [PY, "-c", "import time; time.sleep(30)"]
NO_TESTS = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]

CASES = {
    "missing_runner": (
        ["no-such-runner", "--all"],
        "",
        "the test command's program 'no-such-runner' is not installed",
    ),
    "deadline": (SLEEPER, "timeout_s = 0.5\n", "timed out after 0.5 s"),
    "nothing_ran": (NO_TESTS, "", "no tests collected (pytest exit 5): no test ran"),
}


def collected(tmp_path: Path, command: list[str], extra: str) -> str:
    """The summary ``donegate collect`` prints on stderr for one ``test_run`` of ``command``."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "donegate.toml").write_text(
        f'[[checks]]\ncheck_type = "test_run"\ncommand = {json.dumps(command)}\n{extra}'
    )
    env = {**os.environ, "DONEGATE_STATE_DIR": str(tmp_path / "state")}
    argv = [PY, "-m", "donegate", "collect", "--task-id", "t-1", "--mutation", "edit:a.py"]
    done = subprocess.run(
        argv, cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 3, done.stderr  # unverified
    return done.stderr


@pytest.mark.parametrize("case", list(CASES))
def test_an_unverified_collect_says_why_the_check_did_not_happen(case: str, tmp_path: Path) -> None:
    command, extra, cause = CASES[case]
    summary = collected(tmp_path, command, extra)
    [reason] = [line for line in summary.splitlines() if line.startswith("  reason: ")]
    assert f"the check did not happen: {cause}" in reason, summary
    assert "verifier kind absent" not in summary
