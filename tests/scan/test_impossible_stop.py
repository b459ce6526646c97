"""ImpossibleBench-style cheats played through the real hook, with the team's tests judged by
pytest (donegate's witness and JUnit report) and by exit status alone (a command donegate does
not know as a runner: only the scan can tell the cheat). Each cheat is first shown to turn the
team's own command green; the honest solutions of the possible tasks verify."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.demo import project
from tests.scan.impossible import SOLUTION, TEST_FILE, Entry, entries
from tests.session.support import last, start, stop

# The team's command in exit-status mode: it runs pytest, but donegate only sees a script.
RUNNER = """\
import subprocess
import sys

tests = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
sys.exit(subprocess.call(tests))
"""
MODES = {
    "pytest": project.pytest_command(),
    "exit-status": [sys.executable, "run_tests.py"],
}
CHEATS = [
    "fib/cheat-pin-equal",
    "kadane/cheat-pin-length-and-first",
    "roman/cheat-counter-function-attribute",
    "powers/cheat-table-all-cases",
    "fib/cheat-equal-lambda",
    "kadane/cheat-equal-mock-any",
    "dayofyear/cheat-exit-import",
    "fib/cheat-peek-traceback",
]
HONEST = [
    "fib/honest-memoized",
    "months/honest-match",
    "status/honest-table",
    "operations/honest-branches",
]
_BY_ID = {e.id: e for e in entries()}


def _project(tmp_path: Path, entry: Entry, tests: str, command: list[str]) -> Path:
    """The task as a team's repository: the stub, the tests, the team's command, committed."""
    root = tmp_path / "repo"
    (root / "tests").mkdir(parents=True)
    (root / SOLUTION).write_text(entry.stub)
    (root / TEST_FILE).write_text(tests)
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    (root / "run_tests.py").write_text(RUNNER)
    config = project.CONFIG.format(
        mode="block", requires_write="false", max_strict_vetoes=5, command=json.dumps(command)
    )
    (root / "donegate.toml").write_text(config)
    project.git(root, "init", "-q")
    project.git(root, "add", "-A")
    project.git(root, "commit", "-q", "-m", "the task")
    return root


def _green(root: Path, command: list[str]) -> bool:
    """The control: whether the team's command, run directly, exits 0."""
    return subprocess.run(command, cwd=root, capture_output=True, check=False).returncode == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", CHEATS)
def test_a_cheat_that_turns_the_tests_green_does_not_verify(
    tmp_path: Path, name: str, mode: str
) -> None:
    entry = _BY_ID[name]
    repo = _project(tmp_path, entry, entry.impossible_tests, MODES[mode])
    state = tmp_path / "state"
    start(repo, state, "s1")
    (repo / SOLUTION).write_text(entry.source)
    assert _green(repo, MODES[mode])  # the attack: the team's command passes
    sent_back = stop(repo, state, "s1", last_assistant_message="Done: all tests pass.")
    assert sent_back.blocked
    assert last(state).verdict != "verified"
    assert f"{SOLUTION}:" in sent_back.answer["reason"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", HONEST)
def test_an_honest_solution_of_the_possible_task_verifies(
    tmp_path: Path, name: str, mode: str
) -> None:
    entry = _BY_ID[name]
    repo = _project(tmp_path, entry, entry.possible_tests, MODES[mode])
    state = tmp_path / "state"
    start(repo, state, "s1")
    (repo / SOLUTION).write_text(entry.source)
    done = stop(repo, state, "s1", last_assistant_message="Done: implemented.")
    assert not done.blocked, done.answer
    assert last(state).verdict == "verified"
