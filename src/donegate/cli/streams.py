"""The standard streams at a command's edges: a closed input, and a reader that went away.

A command that reads standard input (``verify -``, ``verify --jsonl -``, ``gate decide``) and
finds it closed (``<&-``) or open for writing only was started wrongly: a usage error (exit 2)
that says so, never a traceback. A command whose reader stops reading (``| head -1``) stops
writing and ends without a word, as ``cat`` does: exit 141 (see :mod:`donegate.exitcodes`).

Standard library only: the batch path and ``gate decide`` import this without click.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO


class NoStdin(Exception):
    """Standard input is closed, or cannot be read: the command was started wrongly."""


def stdin_bytes() -> IO[bytes]:
    """Standard input as bytes, or :class:`NoStdin` saying why it cannot be read."""
    stream = sys.stdin
    if stream is None:  # fd 0 was closed when Python started
        raise NoStdin(_CLOSED)
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return stream.buffer  # not a descriptor (a test's stand-in): nothing to check
    import fcntl

    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        raise NoStdin(_CLOSED) from None
    if flags & os.O_ACCMODE == os.O_WRONLY:
        raise NoStdin("standard input is open for writing only (0>FILE): nothing to read")
    return stream.buffer


def unreadable(exc: OSError) -> NoStdin:
    """The usage error for standard input that failed while read."""
    return NoStdin(f"standard input cannot be read: {exc.strerror or exc}")


_CLOSED = "standard input is closed (<&-): redirect a file to it (< FILE), or pipe one in"


def output_closed(exc: BaseException) -> bool:
    """Whether ``exc`` is standard output's reader having gone away (``| head -1``).

    Only then: a broken pipe to anything else (a worker, a check's process) is a failure to
    report. Standard output is then pointed at ``/dev/null``, so that what is still buffered
    is flushed there at exit, not reported as an error ("Exception ignored ... BrokenPipeError").
    """
    if not isinstance(exc, BrokenPipeError) or not _reader_gone():
        return False
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    return True


def _reader_gone() -> bool:
    # A pipe whose every reader has closed polls as an error; a socket shut down, as a hang-up.
    import select

    try:
        poller = select.poll()
        poller.register(1, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no poll on this system: not told apart
        return False


__all__ = ["NoStdin", "output_closed", "stdin_bytes", "unreadable"]
