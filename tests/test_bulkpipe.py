"""A batch arriving on a pipe comes out as the same file's, by several processes once it runs
fast, and a pause still sends out the answer to every line before it."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from donegate import bulkpipe
from donegate.bulkjobs import PARALLEL_FROM_BYTES, WorkerFailed
from tests.test_bulkjobs import OPTIONS, batch_text, one_process


def fast_batch(tmp_path: Path) -> Path:
    """A batch of more than PARALLEL_FROM_BYTES, valid and invalid lines, blank lines kept."""
    text = batch_text() + b"\n"
    path = tmp_path / "batch.jsonl"
    path.write_bytes(text * (2 * PARALLEL_FROM_BYTES // len(text) + 2))
    return path


_PRODUCER = """
import sys
pieces = [open(path, "rb").read() for path in sys.argv[1:]]
for index, piece in enumerate(pieces):
    if index:
        sys.stdin.readline()  # the test says when to go on
    sys.stdout.buffer.write(piece)
    sys.stdout.buffer.flush()
"""


class Producer:
    """Another process writing ``pieces`` to a pipe, waiting to be told before each after the
    first (as a real producer, it holds the pipe's writing end alone)."""

    def __init__(self, tmp_path: Path, *pieces: bytes) -> None:
        paths = []
        for index, piece in enumerate(pieces):
            paths.append(tmp_path / f"piece-{index}")
            paths[-1].write_bytes(piece)
        argv = [sys.executable, "-c", _PRODUCER, *map(str, paths)]
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.process.stdout is not None
        self.fd = self.process.stdout.fileno()

    def go_on(self) -> None:
        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # it had nothing more to write
            self.process.stdin.write(b"\n")
            self.process.stdin.flush()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.kill()
        self.process.communicate()


@pytest.fixture
def steady(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipe that runs fast on a loaded machine too. The producer writes its piece at once, but
    a busy machine can leave it unscheduled for longer than the 5 ms that tell a pause, and then
    the batch is answered by one process, and a test of the workers tests nothing (seen in CI at
    a load of 4.8). Half a second still tells the tests' own pauses (the producer waits to be
    told) from a stream."""
    monkeypatch.setattr(bulkpipe, "_GRACE", 0.5)


@pytest.fixture
def workers_started(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    started: list[int] = []
    real = bulkpipe._Worker.__init__

    def counted(self: bulkpipe._Worker, *args: Any) -> None:
        real(self, *args)
        started.append(self.pid)

    monkeypatch.setattr(bulkpipe._Worker, "__init__", counted)
    return started


def test_a_fast_pipe_is_answered_by_workers_as_the_file_is(
    tmp_path: Path, workers_started: list[int], steady: None
) -> None:
    path = fast_batch(tmp_path)
    expected, invalid = one_process(path)
    out = io.BytesIO()
    with Producer(tmp_path, path.read_bytes()) as producer:
        assert bulkpipe.verify_pipe(producer.fd, out, OPTIONS, 2) == invalid
    assert len(workers_started) == 2, "more than 2 MB came at once: workers answered the rest"
    assert out.getvalue() == expected


def test_one_job_answers_a_fast_pipe_alone(tmp_path: Path, workers_started: list[int]) -> None:
    path = fast_batch(tmp_path)
    expected, invalid = one_process(path)
    out = io.BytesIO()
    with Producer(tmp_path, path.read_bytes()) as producer:
        assert bulkpipe.verify_pipe(producer.fd, out, OPTIONS, 1) == invalid
    assert workers_started == []
    assert out.getvalue() == expected


def test_a_pause_sends_out_every_answer_before_it(
    tmp_path: Path, workers_started: list[int], steady: None
) -> None:
    text = fast_batch(tmp_path).read_bytes() * 3
    half = text.rindex(b"\n", 0, len(text) * 2 // 3) + 1  # workers start well before the pause
    before = sum(1 for line in text[:half].split(b"\n") if line.strip())
    out = io.BytesIO()
    seen: list[int] = []
    with Producer(tmp_path, text[:half], text[half:]) as producer:

        def watch() -> None:
            # The second half is sent only once every line of the first is answered (or after
            # a minute: then the answers waited for more input, and the count below says so).
            deadline = time.monotonic() + 60
            while out_lines(out) < before and time.monotonic() < deadline:
                time.sleep(0.01)
            seen.append(out_lines(out))
            producer.go_on()

        threading.Thread(target=watch, daemon=True).start()
        bulkpipe.verify_pipe(producer.fd, out, OPTIONS, 2)
    assert workers_started, "the first half came fast enough for workers"
    assert seen == [before]
    assert out_lines(out) == sum(1 for line in text.split(b"\n") if line.strip())


def out_lines(out: io.BytesIO) -> int:
    return out.getvalue().count(b"\n")


def test_a_worker_that_dies_fails_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steady: None
) -> None:
    # A worker killed while answering (the OOM killer, a kill -9): its lines have no answer, so
    # the batch fails, never comes out short. The worker is killed for real.
    parent = os.getpid()
    answer = bulkpipe._answer

    def dying(block: bulkpipe.Block, out: Any, options: Any) -> int:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return answer(block, out, options)

    monkeypatch.setattr(bulkpipe, "_answer", dying)
    with (
        Producer(tmp_path, fast_batch(tmp_path).read_bytes()) as producer,
        pytest.raises(WorkerFailed, match=r"batch worker \d+ was killed by SIGKILL"),
    ):
        bulkpipe.verify_pipe(producer.fd, io.BytesIO(), OPTIONS, 2)
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # every worker was reaped: none left running or a zombie


def test_blocks_hold_whole_lines_numbered_as_the_file_is(tmp_path: Path) -> None:
    pieces = [b'{"a": 1}\n\n{"b"', b": 2}\n", b"   \n{", b"}"]
    whole = b"".join(pieces)
    with Producer(tmp_path, *pieces) as producer:
        read: list[bulkpipe.Block] = []
        for block in bulkpipe.blocks(producer.fd):
            read.append(block)
            if block.idle and len(read) < 10:
                producer.go_on()
    data = [b for b in read if b.data]
    assert b"".join(b.data for b in data) == whole
    assert all(b.data.endswith(b"\n") for b in data[:-1])
    offset = 0
    for block in data:
        assert block.first_line == whole[:offset].count(b"\n") + 1
        offset += len(block.data)
