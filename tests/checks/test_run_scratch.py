"""A sealed run's scratch lies in donegate's state directory, out of a confined agent's reach.

The scratch directory holds what donegate reads back from a run (the witness's report, pytest's
JUnit report) and what a parked run is given. Codex's ``workspace-write`` lets the agent's
commands write all of ``/tmp``, and a job the agent left running outlives its turn: with the
scratch in ``/tmp``, that job rewrites both reports between the run's end and donegate's reading
of them, and a failing test reads as passed. Played for real: the job runs in a bubblewrap box
with the writable roots Codex gives (``/tmp`` and the workspace), at the moment the run has ended.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from donegate.sealed import _isolation, _launch, _scratch
from tests.checks.support import write

pytestmark = pytest.mark.skipif(
    _isolation.bubblewrap() is None, reason="the agent's box is played with bubblewrap"
)

FAILING = {
    "tests/test_calc.py": """
        def add(a, b):
            return a - b

        def test_add():
            assert add(2, 3) == 5
    """,
}

# The job: every report it can find, rewritten to say that every test passed.
JOB = r"""
import glob, json, re, sys
found = []
for root in sys.argv[1:]:
    found += glob.glob(root + "/donegate-run-*/report-*/witness.json")
    found += glob.glob(root + "/donegate-run-*/junit.xml")
for path in found:
    try:
        with open(path) as f:
            text = f.read()
        if path.endswith(".json"):
            doc = json.loads(text)
            for test in doc["tests"]:
                test["phases"] = {when: "passed" for when in test["phases"]}
                test["outcome"] = "passed"
            doc["exitstatus"] = 0
            text = json.dumps(doc)
        else:
            text = re.sub(r"<failure.*?</failure>", "", text, flags=re.S)
            text = re.sub(r'failures="\d+"', 'failures="0"', text)
        with open(path, "w") as f:
            f.write(text)
        print("rewrote", path)
    except OSError as exc:
        print("refused", path, exc)
"""


@pytest.fixture
def state_outside_tmp() -> Iterator[Path]:
    """A state directory where donegate keeps one: not in /tmp, which the agent may write."""
    place = Path(tempfile.mkdtemp(prefix="donegate-test-state-", dir="/var/tmp"))
    try:
        yield place
    finally:
        shutil.rmtree(place, ignore_errors=True)


def job_in_the_agents_box(workspace: Path, *roots: Path) -> str:
    """The job, run in a box that lets it write what Codex's workspace-write lets a command
    write: the workspace and all of /tmp."""
    bwrap = _isolation.bubblewrap()
    assert bwrap is not None
    box = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    box += ["--bind", "/tmp", "/tmp", "--bind", str(workspace), str(workspace)]
    argv = [*box, "--", sys.executable, "-c", JOB, *map(str, roots)]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("scratch_in", ["the temporary directory", "the state directory"])
def test_a_job_of_the_agent_cannot_rewrite_a_sealed_run_s_reports(
    tmp_path: Path, state_outside_tmp: Path, scratch_in: str
) -> None:
    live = write(tmp_path / "live", FAILING)
    # Without a state directory (a run in the live tree), the scratch is in the temporary one.
    store = state_outside_tmp / "bytecode" if scratch_in == "the state directory" else None
    place = _launch.Place(base_dir=live, run_dir=live, bytecode=store)
    command = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
    started = _launch.start(_launch.Launch(command=command), place)
    assert isinstance(started, _launch.Started)
    try:
        run = started._wait()
        said = job_in_the_agents_box(live, Path(_scratch.temp_root()), state_outside_tmp / "runs")
        assert started.invocation is not None
        reports = _launch._read_reports(started.invocation, run, started.cwd)
    finally:
        started.close()
    assert run.returncode == 1
    assert reports.witness is not None
    assert reports.junit is not None
    if scratch_in == "the temporary directory":  # the attack, where the scratch was before
        assert "rewrote" in said
        assert reports.witness.failing() == []
        assert reports.junit.failed == 0
    else:
        assert "rewrote" not in said
        assert "refused" in said  # found, and read-only in the agent's box
        assert reports.witness.failing() == ["tests/test_calc.py::test_add"]
        assert reports.junit.failed == 1


def test_a_sealed_run_s_scratch_is_in_the_state_directory(
    tmp_path: Path, state_outside_tmp: Path
) -> None:
    live = write(tmp_path / "live", FAILING)
    place = _launch.Place(base_dir=live, run_dir=live, bytecode=state_outside_tmp / "bytecode")
    command = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
    started = _launch.start(_launch.Launch(command=command), place)
    assert isinstance(started, _launch.Started)
    try:
        assert started.invocation is not None
        assert started.invocation.junit is not None
        assert started.invocation.junit.parent.parent == state_outside_tmp / _launch.RUNS_DIR
    finally:
        started.close()
    assert list((state_outside_tmp / _launch.RUNS_DIR).iterdir()) == []  # removed with the run


def test_a_sealed_run_whose_scratch_cannot_be_made_in_the_state_directory_does_not_start(
    tmp_path: Path,
) -> None:
    """Never the temporary directory in its place, where a job of the agent can write."""
    live = write(tmp_path / "live", FAILING)
    state = tmp_path / "state"
    state.mkdir()
    (state / _launch.RUNS_DIR).write_text("not a directory")
    place = _launch.Place(base_dir=live, run_dir=live, bytecode=state / "bytecode")
    command = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
    with pytest.raises(OSError, match=r"File exists|Not a directory"):
        _launch.start(_launch.Launch(command=command), place)
