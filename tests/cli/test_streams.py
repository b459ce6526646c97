"""The standard streams at the command's edges, as real processes: a reader that goes away
(``| head -1``) ends a batch quietly with 141 and leaves no worker behind; a closed standard input
is a usage error; a worker killed for real is named as a dead worker, never as a broken pipe."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.claims import NOW
from tests.test_bulkjobs import batch_text

DONEGATE = [sys.executable, "-m", "donegate"]
VERIFY = [*DONEGATE, "verify", "--now", NOW]
OUTPUT_CLOSED = 141  # 128 + SIGPIPE: what a shell reports for cat cut off by head


@pytest.fixture(scope="module")
def big_batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A batch of about 4 MB (two workers' worth), with valid and invalid lines."""
    text = batch_text() + b"\n"
    path = tmp_path_factory.mktemp("streams") / "big.jsonl"
    path.write_bytes(text * (4 * 1024 * 1024 // len(text) + 1))
    return path


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (zombies included), read from /proc."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue  # ended while we looked
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.add(int(entry))
    return found


def state_of(pid: int) -> str:
    """A process's state letter (Z: a zombie), or '' once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return ""


def feed(process: subprocess.Popen[bytes], data: bytes, close: bool = True) -> threading.Thread:
    """Write ``data`` to the process's standard input from a thread (it may stop reading)."""

    def write() -> None:
        assert process.stdin is not None
        try:
            process.stdin.write(data)
            process.stdin.flush()
            if close:
                process.stdin.close()
        except BrokenPipeError:
            pass  # it ended before reading everything: what the test looks at is its ending

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def start(command: list[str], data: bytes | None, close: bool = True) -> subprocess.Popen[bytes]:
    """The command, its standard input fed ``data`` (a pipe; else not read)."""
    batch = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    if data is not None:
        feed(batch, data, close)
    return batch


def with_workers(
    attempt: Callable[[], tuple[subprocess.Popen[bytes], set[int]] | None],
) -> tuple[subprocess.Popen[bytes], set[int]]:
    """The batch ``attempt`` started once it had forked its workers. A pipe is given workers
    only once 2 MB come with no pause of 5 ms, which a loaded machine does not always give (the
    feeding thread waits for a core), or gives late: then the batch is run again, a few times
    at most."""
    for _ in range(5):
        started = attempt()
        if started is not None:
            return started
    pytest.fail("the batch never came fast enough to be given workers")


def ended(batch: subprocess.Popen[bytes]) -> None:
    """A run that was not given its workers, ended (its feeding thread sees a broken pipe)."""
    batch.kill()
    batch.wait()
    for stream in (batch.stdout, batch.stderr):
        assert stream is not None
        stream.close()


@pytest.mark.parametrize(
    "options",
    [["--jobs", "1"], ["--jobs", "2"], ["--jobs", "1", "--max-skew", "5"]],
    ids=["one-process", "forked-workers", "through-click"],
)
def test_head_ends_a_batch_quietly_with_141(big_batch: Path, options: list[str]) -> None:
    # donegate verify --jsonl FILE | head -1, literally: head reads one line and exits.
    command = [*VERIFY, "--jsonl", str(big_batch), *options]
    batch = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert batch.stdout is not None
    head = subprocess.run(["head", "-1"], stdin=batch.stdout, capture_output=True, check=True)
    batch.stdout.close()
    _, stderr = batch.communicate(timeout=120)
    assert head.stdout.startswith(b'{"line":1,')
    assert batch.returncode == OUTPUT_CLOSED, stderr
    assert stderr == b""  # quietly: no traceback, no "internal error", no "Exception ignored"


@pytest.mark.parametrize("source", ["file", "pipe"])
def test_a_closed_reader_leaves_no_worker_behind(big_batch: Path, source: str) -> None:
    # Workers answer a large file (bulkjobs: the process answers one range of three itself) or
    # a fast pipe (bulkpipe: two workers); the reader goes away while they exist. Every one of
    # them must be gone when the command has ended.
    named, jobs = (str(big_batch), "3") if source == "file" else ("-", "2")
    data = big_batch.read_bytes() * 3 if source == "pipe" else None
    lines = (data or big_batch.read_bytes()).count(b"\n")

    def started() -> tuple[subprocess.Popen[bytes], set[int]] | None:
        batch = start([*VERIFY, "--jsonl", named, "--jobs", jobs], data)
        assert batch.stdout is not None
        workers: set[int] = set()
        answered = 0
        while len(workers) < 2 and (chunk := os.read(batch.stdout.fileno(), 65536)):
            workers |= children(batch.pid)
            answered += chunk.count(b"\n")
        if len(workers) == 2 and answered < lines // 2:  # much is still to be written
            return batch, workers
        ended(batch)
        return None

    batch, workers = with_workers(started)
    assert batch.stdout is not None
    batch.stdout.close()  # the reader goes away, mid-batch
    assert batch.stderr is not None
    stderr = batch.stderr.read()
    assert batch.wait(timeout=120) == OUTPUT_CLOSED, stderr
    assert stderr == b""
    assert [pid for pid in workers if state_of(pid)] == [], "no worker left running or unreaped"


@pytest.mark.parametrize(
    "args",
    [
        ["verify", "--jsonl", "-"],
        ["verify", "--jsonl", "-", "--max-skew", "5"],
        ["verify", "-"],
        ["gate", "decide", "--session", "s1", "--state-dir", "{state}"],
    ],
    ids=["batch", "batch-through-click", "one-claim", "gate-decide"],
)
@pytest.mark.parametrize("redirect", ["<&-", "0>{state}.w"], ids=["closed", "write-only"])
def test_a_closed_standard_input_is_a_usage_error(
    tmp_path: Path, args: list[str], redirect: str
) -> None:
    state = str(tmp_path / "state")
    command = [*DONEGATE, *(a.format(state=state) for a in args)]
    shell = f'"$@" {redirect.format(state=state)}'
    done = subprocess.run(["sh", "-c", shell, "sh", *command], capture_output=True, check=False)
    assert done.returncode == 2, done.stderr
    assert b"Traceback" not in done.stderr
    assert b"Error: standard input is " in done.stderr
    assert done.stdout == b""


def test_a_killed_pipe_worker_is_named_as_a_dead_worker(big_batch: Path) -> None:
    # The batch pauses with its workers idle; both are killed for real; the next line is sent
    # to a worker that is gone. The error names it, its pid and the signal, not a broken pipe.
    text = big_batch.read_bytes()
    answers = sum(1 for line in text.split(b"\n") if line.strip())

    def started() -> tuple[subprocess.Popen[bytes], set[int]] | None:
        batch = start([*VERIFY, "--jsonl", "-", "--jobs", "2"], text, close=False)
        assert batch.stdout is not None
        for _ in range(answers):
            assert batch.stdout.readline(), "every line before the pause is answered"
        workers = children(batch.pid)
        if len(workers) == 2:
            return batch, workers
        ended(batch)
        return None

    batch, workers = with_workers(started)
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    for pid in workers:
        while state_of(pid) not in ("Z", ""):
            time.sleep(0.01)
    _, stderr = batch.communicate(text.split(b"\n")[0] + b"\n", timeout=120)
    assert batch.returncode == 5, stderr
    said = stderr.decode()
    assert "Broken pipe" not in said
    assert any(f"batch worker {pid} was killed by SIGKILL (signal 9)" in said for pid in workers)
