"""``donegate report`` run as a real process, as a person or a cron job runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def report(state: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The report of the ledger in ``state`` written to ``out``; its exit code and stderr."""
    argv = ["report", "--state-dir", str(state), "-o", str(out), *args]
    return subprocess.run(
        [sys.executable, "-m", "donegate", *argv],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        check=False,
        timeout=300,
    )
