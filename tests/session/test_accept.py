"""``donegate accept`` on hostile paths, as a person runs it (a real process in a real repository):
what it cannot read as a regular file is refused per path, with the reason, and never read,
followed or waited on; what it prints for one line of the diff is bounded."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from donegate.session.accept import MAX_ACCEPT_BYTES, MAX_DIFF_BYTES, MAX_LINE_CHARS
from donegate.statedir import NEW_STATE
from tests.session.support import make_repo

# A hang (a FIFO opened for reading waits for a writer) ends the process, and fails the test.
HANG_S = 120
# Reading a symlink to /dev/zero never ends: the process is held to 2 GiB of address space, so
# that reading it fails fast (exit 5) instead of taking the machine's memory.
ADDRESS_SPACE = 2 * 1024**3


def accept(repo: Path, state: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")}
    env["DONEGATE_STATE_DIR"] = str(state)
    return subprocess.run(
        [sys.executable, "-m", "donegate", "accept", "--yes", *paths],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG_S,
        preexec_fn=_held,
        check=False,
    )


def _held() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def accepted(state: Path) -> set[str]:
    """The paths recorded as accepted, in every workspace of the state directory."""
    found: set[str] = set()
    for record in state.rglob("authorship.json"):
        found |= set(json.loads(record.read_text())["accepted"])
    return found


def symlink_loop(repo: Path) -> str:
    (repo / "a").symlink_to("b")
    (repo / "b").symlink_to("a")
    return "a"


def self_loop(repo: Path) -> str:
    (repo / "self").symlink_to("self")
    return "self"


def fifo(repo: Path) -> str:
    os.mkfifo(repo / "pipe")
    return "pipe"


def link_to_dev_zero(repo: Path) -> str:
    (repo / "zero").symlink_to("/dev/zero")
    return "zero"


def device(repo: Path) -> str:
    return "/dev/zero"


def unreadable_regular_file(repo: Path) -> str:
    # Readable by stat, refused by read (EIO at address 0), even for root.
    return "/proc/self/mem"


def too_large(repo: Path) -> str:
    with (repo / "huge.bin").open("wb") as sparse:
        sparse.truncate(MAX_ACCEPT_BYTES + 1)
    return "huge.bin"


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (symlink_loop, "a symbolic link"),
        (self_loop, "a symbolic link"),
        (fifo, "a fifo, not a regular file"),
        (link_to_dev_zero, "a symbolic link"),
        (device, "a device, not a regular file"),
        (unreadable_regular_file, "cannot be read: Input/output error"),
        (too_large, f"{MAX_ACCEPT_BYTES + 1:,} bytes, more than the {MAX_ACCEPT_BYTES:,}"),
    ],
)
def test_a_path_that_is_not_a_readable_regular_file_is_refused(
    tmp_path: Path, make: Callable[[Path], str], says: str
) -> None:
    repo = make_repo(tmp_path)
    state = tmp_path / "state"
    path = make(repo)
    done = accept(repo, state, path)
    assert done.returncode == 4, done.stderr
    assert f"donegate accept: refused {path}: {says}" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""  # no diff of what was never read
    assert accepted(state) == set()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_file_without_read_permission_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "secret.py").write_text("x = 1\n")
    (repo / "secret.py").chmod(0)
    done = accept(repo, tmp_path / "state", "secret.py")
    assert done.returncode == 4, done.stderr
    assert "refused secret.py: cannot be read: Permission denied" in done.stderr


def test_the_others_are_accepted_beside_a_refused_path(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    state = tmp_path / "state"
    (repo / "tests" / "test_new.py").write_text("def test_new() -> None:\n    assert True\n")
    done = accept(repo, state, fifo(repo), "tests/test_new.py")
    assert done.returncode == 4, done.stderr  # not all that was asked was accepted
    assert "refused pipe: a fifo" in done.stderr
    assert "+def test_new() -> None:" in done.stdout
    assert accepted(state) == {"tests/test_new.py"}


def test_one_long_line_is_cut_in_the_diff_and_the_cut_said(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "data.txt").write_text(f"short\n{'x' * 900_000}\nend\n")
    (repo / "blob.txt").write_text("y" * 60_000_000)  # beyond the bytes the diff compares
    done = accept(repo, tmp_path / "state", "data.txt", "blob.txt")
    assert done.returncode == 0, done.stderr
    shown = done.stdout.splitlines()
    assert "+short" in shown
    assert "+end" in shown
    cut = next(line for line in shown if line.startswith("+x"))
    assert cut == f"+{'x' * (MAX_LINE_CHARS - 1)} [... {899_001:,} more characters not shown]"
    cut = next(line for line in shown if line.startswith("+y"))
    assert (
        cut
        == f"+{'y' * (MAX_LINE_CHARS - 1)} [... {MAX_DIFF_BYTES - 999:,} more characters not shown]"
    )
    assert f"... only the first {MAX_DIFF_BYTES:,} bytes of each side were compared" in shown
    assert len(done.stdout) < 10 * MAX_LINE_CHARS


def test_what_could_redraw_the_terminal_is_shown_as_its_escape(tmp_path: Path) -> None:
    # An agent's line that erases the line above it and moves up (ESC [2K, ESC [1A), and one
    # whose text a bidi override reverses: the person must see them as they are.
    repo = make_repo(tmp_path)
    (repo / "tests" / "test_zip.py").write_text("assert True\x1b[1A\x1b[2K\nx = 'a\u202eb'\n")
    done = accept(repo, tmp_path / "state", "tests/test_zip.py")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert "\u202e" not in done.stdout
    assert "+assert True\\x1b[1A\\x1b[2K\n" in done.stdout
    assert "+x = 'a\\u202eb'\n" in done.stdout


def test_a_file_name_that_could_redraw_the_terminal_is_shown_as_its_escape(
    tmp_path: Path,
) -> None:
    # The name is the agent's text too: an escape sequence in it could erase the prompt's line.
    repo = make_repo(tmp_path)
    name = "tests/test_\x1b[2K\u202ezip.py"
    (repo / name).write_text("assert True\n")
    done = accept(repo, tmp_path / "state", name)
    assert done.returncode == 0, done.stderr
    for stream in (done.stdout, done.stderr):
        assert "\x1b" not in stream
        assert "\u202e" not in stream
    assert "tests/test_\\x1b[2K\\u202ezip.py" in done.stderr


def test_an_accept_that_makes_the_state_directory_says_so_once(tmp_path: Path) -> None:
    """Inside a box that hides the real state, ``accept`` would make a new one, which vanishes
    with the box: it says so, with the mark the real hook reads in the host's report."""
    repo = make_repo(tmp_path)
    state = tmp_path / "hidden" / "state"
    first = accept(repo, state)
    assert NEW_STATE in first.stderr
    assert f"made its state directory {state}" in first.stderr
    assert NEW_STATE not in accept(repo, state).stderr
