"""A real tiny project for ``collect``: one module, one pytest test, a team's ``donegate.toml``."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from donegate.instant import Instant

RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def create(root: Path, *, extra: str = "", top: str = "") -> Path:
    """The project at ``root`` with a ``test_run`` of real pytest; its donegate.toml's path."""
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_calc.py").write_text(TEST)
    (root / "calc.py").write_text(WRONG)
    config = root / "donegate.toml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    config.write_text(
        top
        + textwrap.dedent(
            f"""
            [[checks]]
            name = "tests"
            check_type = "test_run"
            command = {json.dumps(command)}
            expected = {{ exit_code = 0 }}
            must_pass = ["tests/test_calc.py::test_add"]
            timeout_s = 120
            """
        )
        + extra
    )
    return config


def write(root: Path, code: str) -> dict[str, Any]:
    """The agent's write of ``calc.py``, and the claim that says so (timed after the write)."""
    (root / "calc.py").write_text(code)
    return claim([("file_write", "calc.py")])


def claim(mutations: list[tuple[str, str]]) -> dict[str, Any]:
    """A claim of ``mutations`` (kind, target), timed now, with no evidence yet."""
    at = Instant.now().text
    return {
        "spec_version": "0.1",
        "task": {"id": "fix-add"},
        "claimed_outcome": "add adds",
        "mutations": [
            {"id": f"m{i}", "kind": kind, "target": target, "at": at}
            for i, (kind, target) in enumerate(mutations, start=1)
        ],
        "evidence": [],
    }


def passing(check_type: str, verifier: str, *, covers: list[str] | None = None) -> dict[str, Any]:
    """An evidence item the agent wrote itself, saying the check passed, dated now (after the
    claim's mutations, if made after the claim)."""
    expected: dict[str, Any] = {"exit_code": 0} if check_type == "test_run" else {"ok": True}
    return {
        "check_type": check_type,
        "target": "pytest" if check_type == "test_run" else "accounts/1",
        "expected": expected,
        "observed_value": expected,
        "at": Instant.now().text,
        "covers": covers if covers is not None else ["m1"],
        "verifier": {"id": verifier, "kind": "independent"},
    }
