"""One deadline per check: the time by which it ends, whatever the world on the other side does.

A per-operation timeout (a socket's, a driver's) restarts on every byte, so a server that
trickles never trips it. A check instead holds one :class:`Deadline`, and every wait it makes is
bounded by what is left of it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class DeadlineExceeded(Exception):
    """The check's deadline passed before it could observe."""


class Deadline:
    """An instant on the monotonic clock, ``seconds`` after it was made."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._at = clock() + seconds

    def remaining(self) -> float:
        """Seconds left, never below zero."""
        return max(0.0, self._at - self._clock())

    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return self._clock() >= self._at

    def exceeded(self, what: str) -> DeadlineExceeded:
        """The error that says ``what`` did not finish in time."""
        return DeadlineExceeded(f"{what} did not finish within its deadline of {self.seconds:g} s")


class _Outcome(Generic[T]):
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None


def call_by(deadline: Deadline, function: Callable[[], T], what: str, grace_s: float = 0.0) -> T:
    """``function()``, or :class:`DeadlineExceeded` when it has not returned ``grace_s`` after
    ``deadline``.

    Python cannot stop a thread: one that overruns is left behind (a daemon, so it never keeps
    the process alive) and its result, whenever it comes, is dropped.
    """
    outcome: _Outcome[T] = _Outcome()

    def run() -> None:
        try:
            outcome.value = function()
        except BaseException as exc:  # handed to the caller's thread, raised there
            outcome.error = exc
        finally:
            outcome.done.set()

    threading.Thread(target=run, name=f"donegate: {what}", daemon=True).start()
    if not outcome.done.wait(deadline.remaining() + grace_s):
        raise deadline.exceeded(what)
    if outcome.error is not None:
        raise outcome.error
    return outcome.value  # type: ignore[return-value]
