"""Running a command in its own process group, and leaving nothing behind.

The command's output goes to a temporary file rather than a pipe: a grandchild that keeps a pipe
open (a server a test forgot to stop) would otherwise hold the read forever. After the command
ends, or on timeout, the whole process group is killed.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from donegate.record import Record
from donegate.sealed import _scratch

OUTPUT_TAIL_CHARS = 4000
TERM_GRACE_S = 2.0


class RunResult(Record):
    """How a command ended.

    ``returncode`` is None when it never started (``error`` says why) or timed out; a negative
    one is the signal that killed it.
    """

    returncode: int | None
    timed_out: bool
    duration_s: float
    output_tail: str
    error: str | None = None


def run_group(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    on_spawn: Callable[[], None] | None = None,
) -> RunResult:
    """Run ``argv`` (no shell unless argv says so) in a new session; kill the group at the end.

    ``on_spawn`` is called once the command has started, before waiting for it.
    """
    running = start_group(argv, cwd, env)
    if isinstance(running, RunResult):
        return running
    try:
        if on_spawn is not None:
            on_spawn()
    except BaseException:
        running.stop()
        raise
    return running.wait(timeout_s)


def start_group(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str], *, given: bool = False
) -> Running | RunResult:
    """Start ``argv`` in a new session: the running command, or why it could not start.

    ``given``: its standard input is a pipe (``proc.stdin``), for what it is given once it runs;
    else ``/dev/null``."""
    started = time.monotonic()
    output = _scratch.anonymous_file()  # kept open while the command runs
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE if given else subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        output.close()
        return RunResult(None, False, time.monotonic() - started, "", _start_error(exc, argv))
    return Running(proc, output, started)


class Running(Record):
    """A command started by :func:`start_group`: wait for it, or stop it; either ends it all."""

    proc: subprocess.Popen[bytes]
    output: IO[bytes]
    started: float

    def wait(self, timeout_s: float) -> RunResult:
        """Wait for the command until ``timeout_s`` s after it started, then kill what is left
        of its group."""
        left = max(0.0, timeout_s - (time.monotonic() - self.started))
        try:
            returncode, timed_out = _wait(self.proc, left)
        finally:
            _kill_group(self.proc.pid)  # whatever went wrong, nothing of it outlives the run
            self.ungiven()
        with self.output:
            tail = _tail(self.output)
        return RunResult(returncode, timed_out, time.monotonic() - self.started, tail)

    def stop(self) -> None:
        """Kill the whole group now and reap the command (its result is not wanted)."""
        _kill_group(self.proc.pid)
        self.proc.wait()
        self.output.close()
        self.ungiven()

    def ungiven(self) -> None:
        """Close the pipe to the command's standard input, if it has one (see ``given``)."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()


def _wait(proc: subprocess.Popen[bytes], timeout_s: float) -> tuple[int | None, bool]:
    if _ended_within(proc, timeout_s):
        return proc.wait(), False
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=TERM_GRACE_S)
    except subprocess.TimeoutExpired:
        _signal_group(proc.pid, signal.SIGKILL)
        proc.wait()
    return None, True


def _ended_within(proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Whether ``proc`` ends within ``timeout_s``, told the moment it does.

    ``Popen.wait(timeout=...)`` polls with sleeps of up to 50 ms, which every run would pay after
    its command ended; a process file descriptor (Linux) wakes the wait at once.
    """
    try:
        handle = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux, or too old a kernel: the polling wait
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(handle, select.POLLIN)
        return bool(poller.poll(timeout_s * 1000))
    finally:
        os.close(handle)


def _kill_group(pgid: int) -> None:
    # Whatever the command left running in its group (a daemon, a stuck worker) goes with it.
    _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _tail(output: IO[bytes]) -> str:
    output.seek(0, os.SEEK_END)
    size = output.tell()
    output.seek(max(0, size - OUTPUT_TAIL_CHARS * 4))
    text = output.read().decode("utf-8", errors="replace")
    return text[-OUTPUT_TAIL_CHARS:]


def _start_error(exc: OSError, argv: Sequence[str]) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"runner not found: {argv[0]!r}"
    if isinstance(exc, PermissionError):
        return f"runner not executable: {argv[0]!r}"
    return f"could not start {argv[0]!r}: {exc.strerror or exc}"
