"""A ``shell = true`` test command whose program is missing: the shell's exit 127 is a runner not
found, never a refutation nor a pass; the program the line names, looked up on ``PATH`` by
donegate (not read from what the run printed), says whose want it is, as for an argv command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from donegate.demo import project
from tests.checks.support import collect_one, detail, only, state
from tests.session.support import last, make_repo, prompt, start, stop

MISSING = "donegate-no-such-runner-xyz"


def check(line: str, extra: str = "") -> str:
    return f"""
        [[checks]]
        check_type = "test_run"
        command = {json.dumps(line)}
        shell = true
        timeout_s = 60
        {extra}
    """


@pytest.mark.parametrize(
    "line",
    [
        f"{MISSING} -q tests",
        f"cd . && FOO=1 {MISSING} -q | tail -n 3",
        f"exec env A=b {MISSING}",
    ],
    ids=["alone", "after-cd-and-in-a-pipe", "behind-exec-and-env"],
)
def test_a_missing_program_in_a_shell_line_is_the_environments_want(
    tmp_path: Path, line: str
) -> None:
    done = collect_one(check(line), tmp_path, "src/a.py")
    item = only(done)
    assert item.verifier.kind == "absent"
    said = detail(item)
    assert said["environment"] == f"the test command's program {MISSING!r} is not installed"
    assert state(done) == "unverified"


def test_a_program_missing_from_the_project_is_the_agents_to_restore(tmp_path: Path) -> None:
    done = collect_one(check("./run-tests.sh"), tmp_path, "src/a.py")
    item = only(done)
    assert "environment" not in detail(item)
    assert "(in the project: restore it)" in str(detail(item)["why_not_counted"])
    assert state(done) == "unverified"


def test_exit_127_of_a_program_that_is_there_is_a_runner_not_found(tmp_path: Path) -> None:
    # The code under test can exit 127 itself: that is never a pass, and never the person's.
    line = f"{sys.executable} -c 'raise SystemExit(127)'"
    done = collect_one(check(line, "expected = { exit_code = 127 }"), tmp_path, "src/a.py")
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "runner not found" in str(detail(item)["why_not_counted"])
    assert "environment" not in detail(item)
    assert state(done) == "unverified"


def test_through_the_hook_the_stop_is_let_go_unverified_not_sent_back(tmp_path: Path) -> None:
    repo, state_dir = make_repo(tmp_path), tmp_path / "state"
    config = repo / "donegate.toml"
    command = json.dumps(project.pytest_command())
    line = json.dumps(f"{MISSING} -q tests")
    config.write_text(config.read_text().replace(command, f"{line}\nshell = true"))
    project.git(repo, "commit", "-qam", "a test command this machine lacks")
    start(repo, state_dir, "s1")
    prompt(repo, state_dir, "s1")
    (repo / "zipcode.py").write_text(project.FIXED)
    done = stop(repo, state_dir, "s1")
    assert not done.blocked  # the agent cannot install the person's runner
    assert f"{MISSING!r} is not installed" in done.answer["systemMessage"]
    assert last(state_dir).verdict == "unverified"
