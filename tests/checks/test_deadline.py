"""The deadline a check holds, with an injected clock, and a call that overruns it."""

from __future__ import annotations

import threading

import pytest

from donegate.checks._deadline import Deadline, DeadlineExceeded, call_by


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_remaining_counts_down_and_never_goes_negative() -> None:
    clock = Clock()
    deadline = Deadline(2, clock)
    assert deadline.remaining() == 2
    assert not deadline.expired()
    clock.now += 1.5
    assert deadline.remaining() == 0.5
    clock.now += 1
    assert deadline.remaining() == 0
    assert deadline.expired()
    assert "deadline of 2 s" in str(deadline.exceeded("the query"))


def test_call_by_returns_the_value_or_the_error() -> None:
    assert call_by(Deadline(60), lambda: 7, "seven") == 7
    with pytest.raises(ZeroDivisionError):
        call_by(Deadline(60), lambda: 1 // 0, "a crash")


def test_call_by_leaves_an_overrunning_call_behind_as_a_daemon() -> None:
    release = threading.Event()
    clock = Clock()
    deadline = Deadline(1, clock)
    clock.now += 1  # already past: the wait is zero
    with pytest.raises(DeadlineExceeded, match="the stuck call did not finish"):
        call_by(deadline, release.wait, "the stuck call")
    (left,) = [t for t in threading.enumerate() if t.name == "donegate: the stuck call"]
    assert left.daemon
    release.set()
    left.join()


@pytest.mark.parametrize("size", [0, 2**28 + 1])
def test_max_body_bytes_is_bounded(size: int) -> None:
    from donegate.checks.endpoint_health import EndpointHealthSettings

    with pytest.raises(ValueError, match="max_body_bytes"):
        EndpointHealthSettings(
            check_type="endpoint_health",
            url="http://127.0.0.1/",
            expected={"status": 200},
            max_body_bytes=size,
        )
