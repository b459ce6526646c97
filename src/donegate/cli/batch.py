"""``donegate verify --jsonl``: a batch of claims, read and started without click.

A batch's work is its claims, and loading click (with ``inspect`` and the subcommand's module)
costs a batch process about 40 ms before its first line, a third of its start-up. So the plain
form of the command is read here, by plain code: ``verify --jsonl SOURCE`` with any of
``--now T``, ``--jobs N`` and ``--trust ID`` (repeatable), each value a separate argument.
Whatever else the arguments hold (``--help``, ``--policy``, ``--max-skew``, ``--opt=value``, an
option twice, a value click would refuse or read otherwise) returns None, and the command goes
through click, which reads it, explains what is wrong, and answers the same lines the same way:
both paths run :func:`answer_lines`.
"""

from __future__ import annotations

import os
import stat
import sys
from decimal import Decimal
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.exitcodes import ExitCode
from donegate.instant import Instant
from donegate.record import Record
from donegate.rules import DEFAULT_MAX_SKEW_S, VerifyOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

MAX_JOBS = 64
"""The most processes ``--jobs`` takes."""


class Plain(Record):
    """A batch command read without click: its source and how its lines are verified."""

    source: str
    options: VerifyOptions
    jobs: int | None


def plain_args(args: list[str]) -> Plain | None:
    """The batch ``verify ARGS`` asks for, when it is in the plain form; else None."""
    if len(args) % 2:
        return None
    given: dict[str, str] = {}
    trust: list[str] = []
    for option, value in zip(args[::2], args[1::2], strict=True):
        if value.startswith("-") and not (option == "--jsonl" and value == "-"):
            return None  # perhaps an option click reads another way
        if option == "--trust":
            trust.append(value)
        elif option in _VALUED and option not in given:
            given[option] = value
        else:
            return None
    source = given.get("--jsonl")
    if source is None:
        return None
    try:
        now = Instant.parse(given["--now"]) if "--now" in given else None
    except ValueError:
        return None
    jobs = given.get("--jobs")
    if jobs is not None and not (jobs.isascii() and jobs.isdigit() and 1 <= int(jobs) <= MAX_JOBS):
        return None
    options = VerifyOptions(now=now, trust=frozenset(trust) if trust else None, max_skew_s=_SKEW)
    return Plain(source, options, None if jobs is None else int(jobs))


_VALUED = frozenset({"--jsonl", "--now", "--jobs"})
_SKEW = Decimal(str(DEFAULT_MAX_SKEW_S))  # click's default, as its option type converts it


def run(plain: Plain) -> int | None:
    """Answer the batch; None when its source cannot be read (click's path says so)."""
    from donegate.cli.streams import NoStdin, output_closed

    try:
        stream = open_lines(plain.source)
    except (InvalidInput, NoStdin):
        return None
    try:
        return answer_lines(stream, plain.source, plain.options, plain.jobs)
    except InvalidInput as exc:  # as the click application says it
        print(f"donegate: invalid input: {exc}", file=sys.stderr)
        return ExitCode.INVALID_INPUT
    except Exception as exc:  # the one boundary where anything becomes exit 5, as click's
        if output_closed(exc):
            return ExitCode.OUTPUT_CLOSED
        print(f"donegate: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return ExitCode.INTERNAL


def answer_lines(stream: IO[bytes], source: str, options: VerifyOptions, jobs: int | None) -> int:
    """Answer every line of ``stream`` (opened from ``source``) on standard output; the exit
    code: 0, or 4 when any line was not a valid claim."""
    from donegate.bulk import verify_lines
    from donegate.bulkjobs import cores, jobs_for, numbered, verify_file

    with stream:
        path = Path(source) if source != "-" else stdin_file()
        out = sys.stdout.buffer
        if path is None:  # a pipe or a terminal: answered as its lines arrive
            from donegate.bulkpipe import verify_pipe

            invalid = verify_pipe(stream.fileno(), out, options, jobs or cores())
        elif (processes := jobs_for(path, jobs)) > 1:
            invalid = verify_file(path, out, options, processes)
        else:
            invalid = verify_lines(numbered(stream), out, options)
        out.flush()  # here, where a full disk is an error, not at exit where no one hears it
    return ExitCode.INVALID_INPUT if invalid else ExitCode.OK


def stdin_file() -> Path | None:
    """The file standard input reads when it is a whole regular file (``< claims.jsonl``).

    Such an input can be cut in ranges like any file, by path (worker processes get no standard
    input of their own). A pipe, a file someone already read part of, or one whose name no
    longer leads to it, is read once, in order, by one process: None.
    """
    try:
        st = os.fstat(0)
        if not stat.S_ISREG(st.st_mode) or os.lseek(0, 0, os.SEEK_CUR) != 0:
            return None
        path = Path(os.readlink("/proc/self/fd/0"))
        found = path.stat()
    except (OSError, ValueError):
        return None
    return path if (found.st_dev, found.st_ino) == (st.st_dev, st.st_ino) else None


def open_lines(source: str) -> IO[bytes]:
    """The lines of ``source`` (a path, or ``-`` for standard input), or :class:`InvalidInput`
    (:class:`donegate.cli.streams.NoStdin` for a closed standard input)."""
    if source == "-":
        from donegate.cli.streams import stdin_bytes

        return stdin_bytes()
    try:
        return Path(source).open("rb")
    except OSError as exc:
        raise InvalidInput(f"cannot read {source}: {exc.strerror}") from None
