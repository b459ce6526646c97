"""The scan runs on the stop path: importing it loads nothing heavy."""

from __future__ import annotations

import subprocess
import sys

import donegate.scan


def test_importing_scan_loads_neither_pydantic_nor_pygments() -> None:
    code = (
        "import sys, donegate.scan\n"
        "print(sorted(m for m in ('pydantic', 'pygments', 'click', 'tomllib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_public_surface_is_all_of_it() -> None:
    public = {n for n in vars(donegate.scan) if not n.startswith("_")}
    modules = {"finding", "fitted", "judge", "settings", "writes", "annotations"}
    assert public - modules == set(donegate.scan.__all__)
