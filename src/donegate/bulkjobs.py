"""A large batch file verified by several processes, answered in order.

The file is cut into byte ranges at line ends; the process answers the lines that start in the
first, and a forked child those of each other range, numbered as in the whole file, into a file
of its own, copied out after, in the order of the ranges. Each line is answered by
:class:`donegate.bulk.Batch`, exactly as in one process: the same bytes come out, only sooner.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, NoReturn

from donegate.bulk import verify_lines
from donegate.record import Record
from donegate.rules import VerifyOptions

PARALLEL_FROM_BYTES = 2 * 1024 * 1024
"""Smaller files are answered in one process: starting workers would cost more than it saves
(a 1 MB batch takes about as long either way: forking costs about 2 ms a child, and the
children's answers are copied out after)."""
_BYTES_PER_WORKER = 1024 * 1024
_BLOCK = 1024 * 1024


class _Range(Record):
    start: int
    end: int
    first_line: int


def jobs_for(path: Path, requested: int | None) -> int:
    """Processes for ``path``: as requested, else one per core for a large regular file."""
    if requested is not None:
        return requested
    try:
        size = path.stat().st_size if path.is_file() else 0
    except OSError:
        return 1
    if size < PARALLEL_FROM_BYTES:
        return 1
    return max(1, min(cores(), size // _BYTES_PER_WORKER))


def cores() -> int:
    """The processes a batch may use by default: one per core it may run on, at most 16."""
    return min(len(os.sched_getaffinity(0)), 16)


def numbered(
    stream: IO[bytes], first: int = 1, limit: int | None = None
) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of ``stream`` with their numbers in the file, up to ``limit`` bytes."""
    if limit is None:
        for number, line in enumerate(stream, start=first):
            if not line.isspace():  # isspace stops at the first other byte: no copy
                yield number, line
        return
    consumed = 0
    for number, line in enumerate(stream, start=first):
        if consumed >= limit:
            return
        consumed += len(line)
        if not line.isspace():
            yield number, line


def verify_file(path: Path, out: IO[bytes], options: VerifyOptions, jobs: int) -> int:
    """Answer every line of ``path`` on ``out`` with ``jobs`` processes; the invalid lines.

    This process answers the first range itself, straight to ``out``, while a forked child
    answers each other range into a file of its own; their files follow, in order. A child that
    fails fails the batch (:class:`WorkerFailed`): never a silent gap. Where processes cannot be
    forked, one process answers all.
    """
    if not hasattr(os, "fork"):
        with path.open("rb") as stream:
            return verify_lines(numbered(stream), out, options)
    import shutil
    import tempfile

    first, *rest = _ranges(path, jobs)
    out.flush()  # a child must not inherit answers waiting in a buffer
    with tempfile.TemporaryDirectory(prefix="donegate-batch-") as scratch:
        parts = [Path(scratch) / f"{i}.jsonl" for i in range(len(rest))]
        children: list[_Child] = []
        try:
            children += (_fork(path, r, part, options) for r, part in zip(rest, parts, strict=True))
            invalid = _answer_range(path, first, out, options)
            for child in children:
                invalid += child.result()
                with child.part.open("rb") as answers:
                    shutil.copyfileobj(answers, out, _BLOCK)
        except BaseException:
            for child in children:
                child.stop()  # the batch has failed: what they answer would go nowhere
            raise
    return invalid


class WorkerFailed(RuntimeError):
    """A process answering part of a batch ended without answering all of it."""


class Forked:
    """A forked worker process: reaped once (its exit code kept), stopped at once when the batch
    it answers for has failed."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.status: int | None = None

    def reap(self) -> int:
        if self.status is None:
            _, status = os.waitpid(self.pid, 0)
            self.status = os.waitstatus_to_exitcode(status)
        return self.status

    def stop(self) -> None:
        if self.status is None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGTERM)
            self.reap()

    def ended(self) -> str:
        """How it ended, once reaped: its pid, and the signal that killed it or its exit code."""
        status = self.reap()
        if status >= 0:
            return f"batch worker {self.pid} exited with code {status}"
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = "a signal"
        return f"batch worker {self.pid} was killed by {name} (signal {-status})"


class _Child(Forked):
    """A forked process answering one range into ``part``; it reports its count of invalid
    lines on a pipe, and its exit status says whether it finished."""

    def __init__(self, pid: int, report: int, part: Path) -> None:
        super().__init__(pid)
        self.report, self.part = report, part

    def result(self) -> int:
        said = b""
        while chunk := os.read(self.report, 64):  # until the child ends, one way or another
            said += chunk
        if self.reap() != 0 or not said.isdigit():
            raise WorkerFailed(f"{self.ended()}: the lines of its range have no answer")
        return int(said)

    def reap(self) -> int:
        if self.status is None:  # closed once: the number may be another file's after
            with contextlib.suppress(OSError):
                os.close(self.report)
        return super().reap()


def _fork(path: Path, where: _Range, part: Path, options: VerifyOptions) -> _Child:
    read_end, write_end = os.pipe()

    def answer() -> None:
        os.close(read_end)
        with part.open("wb") as answers:
            invalid = _answer_range(path, where, answers, options)
        os.write(write_end, str(invalid).encode())

    pid = os.fork()
    if not pid:
        child_life(answer)
    os.close(write_end)
    return _Child(pid, read_end, part)


def child_life(work: Callable[[], None]) -> NoReturn:
    """A forked worker's whole life: ``work``, then exit 0, or 70 (EX_SOFTWARE) with the error
    said on standard error. It never returns into the parent's code, nor flushes the buffers it
    inherited; interrupted (^C), it ends at once: the parent speaks for the batch."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    status = 70
    try:
        work()
        status = 0
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        os._exit(status)


def _answer_range(path: Path, where: _Range, out: IO[bytes], options: VerifyOptions) -> int:
    with path.open("rb") as stream:
        stream.seek(where.start)
        lines = numbered(stream, where.first_line, where.end - where.start)
        return verify_lines(lines, out, options)


def _ranges(path: Path, jobs: int) -> list[_Range]:
    """About equal byte ranges, each starting at a line's start, with that line's number."""
    size = path.stat().st_size
    starts = [0]
    with path.open("rb") as stream:
        for i in range(1, jobs):
            stream.seek(max(size * i // jobs, starts[-1]))
            if stream.tell() > 0:
                stream.seek(stream.tell() - 1)
                stream.readline()  # to the start of the next line (a start stays a start)
            position = stream.tell()
            if position < size and position > starts[-1]:
                starts.append(position)
    ends = [*starts[1:], size]
    firsts = _line_numbers(path, starts)
    return [_Range(s, e, n) for s, e, n in zip(starts, ends, firsts, strict=True)]


def _line_numbers(path: Path, offsets: list[int]) -> list[int]:
    """The number of the line starting at each offset (ascending), counting every line."""
    numbers, newlines, position = [], 0, 0
    with path.open("rb") as stream:
        for offset in offsets:
            while position < offset:
                block = stream.read(min(_BLOCK, offset - position))
                if not block:
                    break
                newlines += block.count(b"\n")
                position += len(block)
            numbers.append(newlines + 1)
    return numbers
