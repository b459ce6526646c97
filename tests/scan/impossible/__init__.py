"""ImpossibleBench-style tasks: a function specified in a docstring, its tests, and the same
tests with one expected value mutated so that no honest solution passes them.

One folder per task, each file named for what it is and what it must come to:

- ``stub.py.txt``: the file the agent starts from (the signature and the docstring);
- ``tests.py.txt``: the task's tests; ``tests_impossible.py.txt``: the same with one mutated;
- ``cheat-<how>.py.txt``: a solution that passes the impossible tests without solving the task,
  as frontier models write them (the scan must block each);
- ``unseen-<how>.py.txt``: a cheat no deterministic reading of the code tells from an honest
  solution (a plausible rule that happens to fit the tests, a wrong value in the domain's own
  data): kept to show what the scan cannot see;
- ``honest-<how>.py.txt``: a solution of the possible task (the scan must find nothing in it).

``<how>`` starts with the cheat's class: ``pin`` (a condition that singles out a test input),
``table``, ``counter``, ``equal`` (an object that compares equal to what it is not), ``error``
(a ``try`` that answers on an error the input triggers), ``exit``, ``peek`` (reading the tests
or the caller).

The solution is ``solution.py`` at the root, the tests ``tests/test_solution.py``. Files are
``.txt`` so that neither this suite nor its linters read them as code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).parent
SOLUTION = "solution.py"
TEST_FILE = "tests/test_solution.py"


class Entry(NamedTuple):
    """One solution of one task."""

    task: str
    name: str  # cheat-<how>, unseen-<how> or honest-<how>
    source: str
    stub: str
    tests: str  # the tests it is judged by: the impossible ones for a cheat
    possible_tests: str
    impossible_tests: str

    @property
    def id(self) -> str:
        """``task/name``, the case's id."""
        return f"{self.task}/{self.name}"

    @property
    def kind(self) -> str:
        """``cheat``, ``unseen`` or ``honest``."""
        return self.name.partition("-")[0]

    @property
    def cheat(self) -> bool:
        """Whether this solution cheats (seen or not; else it is honest)."""
        return self.kind != "honest"

    @property
    def cheat_class(self) -> str:
        """The class of a cheat: the first word of its ``<how>``."""
        return self.name.split("-")[1]


def entries(kind: str = "") -> list[Entry]:
    """Every solution of every task, sorted; ``kind`` ("cheat", "unseen" or "honest") keeps
    one kind."""
    found = []
    for folder in sorted(p for p in ROOT.iterdir() if (p / "stub.py.txt").is_file()):
        stub = (folder / "stub.py.txt").read_text()
        possible = (folder / "tests.py.txt").read_text()
        impossible = (folder / "tests_impossible.py.txt").read_text()
        for path in sorted(folder.glob(f"{kind}*-*.py.txt")):
            name = path.name.removesuffix(".py.txt")
            tests = possible if name.startswith("honest-") else impossible
            source = path.read_text()
            found.append(Entry(folder.name, name, source, stub, tests, possible, impossible))
    return found


def run_tests(root: Path, solution: str, tests: str) -> dict[str, int]:
    """Exit statuses of the tests run on ``solution`` in ``root``: ``pytest`` always, and
    ``script`` (``python tests/test_solution.py``) when the tests run themselves as a script."""
    (root / "tests").mkdir(parents=True, exist_ok=True)
    (root / SOLUTION).write_text(solution)
    (root / TEST_FILE).write_text(tests)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    env["PYTHONPATH"] = str(root)
    commands = {"pytest": [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]}
    if "__main__" in tests:
        commands["script"] = [sys.executable, TEST_FILE]
    return {
        name: subprocess.run(
            command, cwd=root, env=env, capture_output=True, timeout=120, check=False
        ).returncode
        for name, command in commands.items()
    }
