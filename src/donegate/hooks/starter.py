"""A starter ``donegate.toml`` for a repository, with the test command it appears to use.

Detection only proposes: the file is the team's to edit, and an existing one is never replaced.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

_TEMPLATE = """\
# donegate: what "done" means in this repository. The team's file: agents' claims never change it.
# Commands, URLs and queries come only from here. See `donegate collect --help`.

[policy]
id = "{policy_id}"
requires = [{requires}]
max_age_s = 900
on_unverified = "block"  # block: send the agent back; warn: let it stop, tell you; record: log

[gate]
# requires_write = false  # true for sessions whose task is always a code change
max_vetoes = 3            # soft vetoes (no source change yet) before the gate lets go, attributably
max_strict_vetoes = 5     # red or missing verification: sent back at most this many times in a row
max_blocks_in_a_row = 6   # any blocks in a row, before the host's own loop cap ends the session

{checks}"""

_TEST_RUN = """\
[[checks]]
check_type = "test_run"
command = {command}
expected = {{ exit_code = 0 }}
# The judge is not the agent's to edit: a run after an agent wrote one of these counts for
# nothing, in this session and later ones, until a person reviews it: `donegate accept PATH`.
# (A person who edits the tests and asks the agent to make them pass never has to run anything.)
protect = {protect}
# Tests that must have run and passed, by their exact ids as the runner names them, e.g.
# must_pass = ["tests/test_zip.py::test_update", "tests/test_zip.py::TestParse::test_plus4[94107]"]
# A function id without brackets covers all its parametrizations.
timeout_s = 900
"""
# What the starter protects, by runner: the tests and the runner's own configuration.
PROTECT: dict[str, tuple[str, ...]] = {
    "pytest": (
        "tests/**",
        "test/**",
        "test_*.py",
        "*_test.py",
        "conftest.py",
        "pytest.ini",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
    ),
    "npm": (
        "**/*.test.*",
        "**/*.spec.*",
        "__tests__/**",
        "test/**",
        "tests/**",
        "package.json",
        "vitest.config.*",
        "jest.config.*",
    ),
    "cargo": ("tests/**", "Cargo.toml", ".cargo/**"),
    "go": ("*_test.go", "**/testdata/**", "go.mod"),
    "make": ("tests/**", "test/**", "Makefile"),
}

_NO_CHECKS = """\
# No test command was detected. Add one, for example:
# [[checks]]
# check_type = "test_run"
# command = ["make", "test"]
# expected = { exit_code = 0 }
"""


def detect_test_command(root: Path) -> list[str] | None:
    """The command this repository's tests most likely run with, as argv, or None."""
    found = detect(root)
    return found[1] if found else None


def detect(root: Path) -> tuple[str, list[str]] | None:
    """The runner this repository's tests most likely use (a key of :data:`PROTECT`) and argv."""
    if _is_python(root):
        python = ".venv/bin/python" if (root / ".venv" / "bin" / "python").exists() else "python3"
        return "pytest", [python, "-m", "pytest", "-q"]
    if _npm_test(root):
        return "npm", ["npm", "test", "--silent"]
    if (root / "Cargo.toml").exists():
        return "cargo", ["cargo", "test"]
    if (root / "go.mod").exists():
        return "go", ["go", "test", "./..."]
    if _make_test(root):
        return "make", ["make", "test"]
    return None


def _is_python(root: Path) -> bool:
    markers = ("pytest.ini", "conftest.py", "setup.py", "setup.cfg", "tox.ini")
    if any((root / m).exists() for m in markers):
        return True
    pyproject = root / "pyproject.toml"
    if pyproject.exists() and "pytest" in pyproject.read_text(errors="replace"):
        return True
    return any(root.glob("tests/test_*.py")) or any(root.glob("test_*.py"))


def _npm_test(root: Path) -> bool:
    try:
        scripts = json.loads((root / "package.json").read_text()).get("scripts", {})
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(scripts, dict) and isinstance(scripts.get("test"), str)


def _make_test(root: Path) -> bool:
    makefile = root / "Makefile"
    return (
        makefile.exists()
        and re.search(r"^test:", makefile.read_text(errors="replace"), re.M) is not None
    )


def render(root: Path) -> str:
    """The starter configuration text for ``root``."""
    found = detect(root)
    checks = _NO_CHECKS
    if found is not None:
        runner, command = found
        checks = _TEST_RUN.format(
            command=json.dumps(command), protect=json.dumps(list(PROTECT[runner]))
        )
    requires = '"test_run"' if found else ""
    return _TEMPLATE.format(policy_id="code-change", requires=requires, checks=checks)


def write_starter(root: Path) -> Path | None:
    """Write ``donegate.toml`` in ``root`` unless one exists; return it, or None if kept."""
    path = root / "donegate.toml"
    if path.exists():
        return None
    path.write_text(render(root), encoding="utf-8")
    return path
