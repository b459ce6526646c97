"""Hidden writes through the real ``donegate hook claude-code`` process on a real project."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from donegate.demo import project
from donegate.demo.project import FIXED, payload, run_hook
from donegate.ledger import Ledger
from tests.workspace.conftest import git

SESSION = "hidden-1"
# Turns every failing test into a pass: the cheat a hidden conftest.py carries.
CHEAT = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
"""


def stop(repo: Path, state: Path) -> None:
    message = {"last_assistant_message": "Done: the parser handles ZIP+4 now."}
    run = run_hook(payload("Stop", SESSION, repo, **message), state)
    assert run.exit_code == 0, run.stderr


def last_receipt(state: Path) -> tuple[str, str, str | None]:
    with Ledger(state) as ledger:
        receipt = ledger.recent(1, session=SESSION)[0]
    return receipt.verdict, receipt.decision, receipt.reason


def receipt_writes(state: Path) -> list[dict[str, Any]]:
    with Ledger(state) as ledger:
        writes: list[dict[str, Any]] = ledger.recent(1, session=SESSION)[0].decision_doc["writes"]
    return writes


def test_a_conftest_hidden_by_info_exclude_and_an_fsmonitor_is_seen_at_the_stop(
    tmp_path: Path,
) -> None:
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    assert run_hook(payload("SessionStart", SESSION, repo, source="startup"), state).exit_code == 0
    marker = tmp_path / "fsmonitor-ran"
    monitor = tmp_path / "monitor.sh"
    monitor.write_text(f"#!/bin/sh\ntouch {marker}\nprintf 'token\\0'\n")
    monitor.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(monitor))
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("conftest.py\n")
    (repo / "conftest.py").write_text(CHEAT)
    # The attack works: git lists nothing, and the buggy code's tests now "pass".
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    marker.unlink()
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=repo,
        capture_output=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )
    assert tests.returncode == 0
    stop(repo, state)
    writes = [(w["path"], w["change"], w["kind"], w["flags"]) for w in receipt_writes(state)]
    assert writes == [("conftest.py", "added", "test", ["test-hook"])]
    # What the gate does with a test-only, runner-steering write is the stop path's concern
    # (issue 8, section 3); here: the write is on the record, and verified it is not.
    assert last_receipt(state)[0] != "verified"
    assert not marker.exists()  # the hook's own git calls never ran the agent's monitor


def test_a_same_size_edit_with_the_mtime_put_back_reopens_a_verified_stop(
    tmp_path: Path,
) -> None:
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    assert run_hook(payload("SessionStart", SESSION, repo, source="startup"), state).exit_code == 0
    source = repo / "zipcode.py"
    source.write_text(FIXED)
    os.utime(source, ns=(10**18, 10**18))  # far from now: not racily clean for anyone
    stop(repo, state)
    assert last_receipt(state) == ("verified", "allow", "verified_after_write")
    git(repo, "config", "core.trustctime", "false")
    git(repo, "config", "core.checkStat", "minimal")
    git(repo, "add", "zipcode.py")
    git(repo, "commit", "-qm", "fix")
    st = source.stat()
    source.write_text(FIXED.replace('split("-")[0]', 'split("+")[0]'))  # same size, broken
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert git(repo, "status", "--porcelain") == ""  # git's stat cache vouches for it
    stop(repo, state)
    verdict, decision, reason = last_receipt(state)
    assert (verdict, decision) != ("verified", "allow") or reason != "verified_after_write"
    assert verdict != "verified"


def test_a_git_the_agent_put_on_the_path_never_runs_inside_the_judge(tmp_path: Path) -> None:
    """An activated project virtualenv puts the agent's ``.venv/bin`` first on ``PATH``."""
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    marker = tmp_path / "fake-git-ran"
    fake = repo / ".venv" / "bin" / "git"
    fake.parent.mkdir(parents=True)
    # Lists no untracked file at all: a new, gitignored-looking data file would be noise.
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexit 0\n")
    fake.chmod(0o755)
    path = {"PATH": f"{fake.parent}{os.pathsep}.{os.pathsep}{os.environ['PATH']}"}
    # The attack's premise: a plain PATH lookup, as any program run there does, finds it.
    subprocess.run(["git", "--version"], env={**os.environ, **path}, cwd=repo, check=True)
    assert marker.exists()
    marker.unlink()
    assert (
        run_hook(payload("SessionStart", SESSION, repo), state, cwd=repo, env=path).exit_code == 0
    )
    (repo / "zipcode.py").write_text(FIXED)
    assert run_hook(payload("Stop", SESSION, repo), state, cwd=repo, env=path).exit_code == 0
    assert not marker.exists()  # the hook's git is the one outside the tree
    assert [w["path"] for w in receipt_writes(state)] == ["zipcode.py"]
    assert last_receipt(state) == ("verified", "allow", "verified_after_write")
