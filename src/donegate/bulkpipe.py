"""A batch arriving on a pipe, answered as it arrives, by several processes once it runs fast.

The pipe is read in blocks of whole lines, as much as it holds at each read (up to 1 MiB). This
process answers them itself while the input comes slowly: after a read that leaves the pipe
empty, every answer so far goes out, so ``tail -f claims.log | donegate verify --jsonl -`` (or
someone typing) gets each answer as its line arrives. Once :data:`PARALLEL_FROM_BYTES` have come
with no pause (``zcat day.jsonl.gz | donegate verify --jsonl -``), forked workers answer the
rest: each block is written to a file a worker answers into another, and the answers are copied
out in input order. A pause still sends out every answer to what came before it.

Lines are numbered and answered exactly as :func:`donegate.bulkjobs.numbered` and
:func:`donegate.bulk.verify_lines` number and answer a file's: the same bytes come out.
"""

from __future__ import annotations

import io
import os
import select
import shutil
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import IO, NoReturn

from donegate.bulk import verify_lines
from donegate.bulkjobs import PARALLEL_FROM_BYTES, Forked, WorkerFailed, child_life, numbered
from donegate.record import Record
from donegate.rules import VerifyOptions

_READ = 1024 * 1024
_GRACE = 0.005  # seconds
_IN_FLIGHT = 2  # blocks each worker holds: one answered while the next waits


class Block(Record):
    """Whole lines read at once: the number of the first, their bytes, and whether the pipe
    held nothing more when they were read."""

    first_line: int
    data: bytes
    idle: bool


def blocks(fd: int) -> Iterator[Block]:
    """The pipe or terminal ``fd`` in blocks of whole lines (the last line may lack its end).

    A block is idle when nothing more came within :data:`_GRACE` of reading it: a fast producer
    refills the pipe within microseconds, while someone typing waits far longer for an answer."""
    _widen(fd)
    pending: list[bytes] = []  # the line still arriving, in the pieces read (never joined twice)
    lines = 0
    while data := _read_some(fd):
        end = data.rfind(b"\n") + 1
        idle = not select.select([fd], [], [], _GRACE)[0]
        whole = b""
        if end:
            whole = b"".join([*pending, data[:end]]) if pending else data[:end]
            pending = [data[end:]] if end < len(data) else []
        else:
            pending.append(data)
        if whole or idle:
            yield Block(lines + 1, whole, idle)
            lines += whole.count(b"\n")
    if pending:
        yield Block(lines + 1, b"".join(pending), True)


def _widen(fd: int) -> None:
    """Let the producer write up to a read ahead (Linux pipes hold 64 KiB unless asked)."""
    import contextlib
    import fcntl

    with contextlib.suppress(OSError, AttributeError):  # not a pipe, or not Linux
        if fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) < _READ:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _READ)


def _read_some(fd: int) -> bytes:
    """What ``fd`` holds, up to 1 MiB; empty at its end. A descriptor another program left
    non-blocking is waited on, not taken for an error."""
    while True:
        try:
            return os.read(fd, _READ)
        except BlockingIOError:
            select.select([fd], [], [])


def verify_pipe(fd: int, out: IO[bytes], options: VerifyOptions, jobs: int) -> int:
    """Answer every line arriving on ``fd`` on ``out``, with up to ``jobs`` worker processes
    once the input runs fast; the number of lines that were not valid claims."""
    invalid, streak = 0, 0
    arriving = blocks(fd)
    for block in arriving:
        invalid += _answer(block, out, options)
        streak = 0 if block.idle else streak + len(block.data)
        if block.idle:
            out.flush()
        elif jobs > 1 and streak >= PARALLEL_FROM_BYTES and hasattr(os, "fork"):
            return invalid + _Workers(jobs, out, options).answer_all(arriving)
    return invalid


def _answer(block: Block, out: IO[bytes], options: VerifyOptions) -> int:
    return verify_lines(numbered(io.BytesIO(block.data), block.first_line), out, options)


class _Worker(Forked):
    """A forked process answering the blocks it is sent: ``<id> <first line>`` on its task pipe
    names the block's file, ``<id> <invalid lines>`` on its result pipe says it is answered."""

    def __init__(self, scratch: Path, options: VerifyOptions, others: list[_Worker]) -> None:
        task_read, self.tasks = os.pipe()
        self.results, result_write = os.pipe()
        pid = os.fork()
        if not pid:
            # Only the parent may hold a worker's pipes: one held here too would keep that
            # worker from ever reading the end of its tasks.
            for fd in (self.tasks, self.results, *(f for w in others for f in w.fds())):
                os.close(fd)
            _serve(task_read, result_write, scratch, options)  # never returns
        super().__init__(pid)
        os.close(task_read)
        os.close(result_write)
        self.holding: deque[int] = deque()
        self.said = b""

    def fds(self) -> tuple[int, int]:
        return self.tasks, self.results

    def send(self, block_id: int, first_line: int) -> None:
        try:
            os.write(self.tasks, b"%d %d\n" % (block_id, first_line))
        except BrokenPipeError:  # no one reads its tasks: the worker is gone, and says how
            raise WorkerFailed(self._gone()) from None
        self.holding.append(block_id)

    def receive(self) -> list[tuple[int, int]]:
        """The blocks answered since last asked: (block id, invalid lines) each."""
        data = os.read(self.results, 4096)
        if not data:
            raise WorkerFailed(self._gone())
        self.said += data
        *complete, self.said = self.said.split(b"\n")
        answered = []
        for message in complete:
            block_id, invalid = map(int, message.split())
            self.holding.remove(block_id)
            answered.append((block_id, invalid))
        return answered

    def _gone(self) -> str:
        return f"{self.ended()} before answering all it was sent"

    def reap(self) -> int:
        if self.status is None:  # closed once: the numbers may be other files' after
            for fd in self.fds():
                os.close(fd)  # the end of its tasks: it stops once it has answered them
        return super().reap()


class _Workers:
    """Workers answering blocks into files, and the answers written out in input order."""

    def __init__(self, jobs: int, out: IO[bytes], options: VerifyOptions) -> None:
        self.jobs, self.out, self.options = jobs, out, options
        self.answered: dict[int, int] = {}  # block id -> invalid lines, not yet written out
        self.next_out = 0
        self.sent = 0
        self.invalid = 0

    def answer_all(self, arriving: Iterator[Block]) -> int:
        import tempfile

        self.out.flush()  # a worker must not inherit answers waiting in a buffer
        with tempfile.TemporaryDirectory(prefix="donegate-pipe-") as scratch:
            self.scratch = Path(scratch)
            workers: list[_Worker] = []
            try:
                for _ in range(self.jobs):
                    workers.append(_Worker(self.scratch, self.options, workers))
                for block in arriving:
                    if block.data:
                        self._send(block, workers)
                    if block.idle:  # the input paused: all it sent is answered now
                        self._drain(workers)
                        self.out.flush()
                self._drain(workers)
            except BaseException:
                for worker in workers:
                    worker.stop()  # the batch has failed: what they answer would go nowhere
                raise
            failed = [w for w in workers if w.reap() != 0]  # every one reaped
            if failed:
                raise WorkerFailed(failed[0].ended())
        return self.invalid

    def _send(self, block: Block, workers: list[_Worker]) -> None:
        block_id = self.sent
        (self.scratch / f"{block_id}.in").write_bytes(block.data)
        while True:
            free = [w for w in workers if len(w.holding) < _IN_FLIGHT]
            if free:
                min(free, key=lambda w: len(w.holding)).send(block_id, block.first_line)
                self.sent += 1
                return
            self._wait(workers)

    def _wait(self, workers: list[_Worker]) -> None:
        """Wait for a worker to answer a block, and write out every answer now in order."""
        busy = {w.results: w for w in workers if w.holding}
        for fd in select.select(list(busy), [], [])[0]:
            for block_id, invalid in busy[fd].receive():
                self.answered[block_id] = invalid
        while self.next_out in self.answered:
            self.invalid += self.answered.pop(self.next_out)
            answers = self.scratch / f"{self.next_out}.out"
            with answers.open("rb") as written:
                shutil.copyfileobj(written, self.out, _READ)
            answers.unlink()
            self.next_out += 1

    def _drain(self, workers: list[_Worker]) -> None:
        """Write out the answers to every block sent, waiting for them."""
        while self.next_out < self.sent:
            self._wait(workers)


def _serve(tasks: int, results: int, scratch: Path, options: VerifyOptions) -> NoReturn:
    """A worker's life: answer each block it is sent, until its task pipe closes."""

    def answer_blocks() -> None:
        with os.fdopen(tasks, "rb") as sent:
            for task in sent:
                block_id, first_line = map(int, task.split())
                block = scratch / f"{block_id}.in"
                with (scratch / f"{block_id}.out").open("wb") as out:
                    invalid = _answer(Block(first_line, block.read_bytes(), False), out, options)
                block.unlink()
                os.write(results, b"%d %d\n" % (block_id, invalid))

    child_life(answer_blocks)
