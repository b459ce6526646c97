"""The workspace package stays light: a hook process imports it at every agent stop."""

from __future__ import annotations

import subprocess
import sys


def test_importing_workspace_loads_neither_pydantic_nor_pygments() -> None:
    code = (
        "import sys, donegate.workspace\n"
        "print(sorted(m for m in ('pydantic', 'pygments', 'click') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
