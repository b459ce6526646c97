"""The package imports and the console script answers."""

import subprocess
import sys


def test_version_prints() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "donegate", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("donegate, version ")
