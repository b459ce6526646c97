"""Running a check's command: its start is announced while it still runs."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from donegate.sealed._process import RunResult, run_group, start_group


def test_on_spawn_is_called_once_before_the_command_ends(tmp_path: Path) -> None:
    ended = tmp_path / "ended"
    calls: list[bool] = []
    code = f"import time; time.sleep(1); open({str(ended)!r}, 'w').close()"
    run = run_group(
        [sys.executable, "-c", code], tmp_path, {}, 10, lambda: calls.append(ended.exists())
    )
    assert run.returncode == 0
    assert ended.exists()
    assert calls == [False]


def test_a_failing_on_spawn_still_ends_the_command(tmp_path: Path) -> None:
    survived = tmp_path / "survived"
    code = f"import time; time.sleep(1); open({str(survived)!r}, 'w').close()"

    def on_spawn() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        run_group([sys.executable, "-c", code], tmp_path, {}, 10, on_spawn)
    time.sleep(1.5)
    assert not survived.exists()


def test_the_timeout_counts_from_the_start_not_from_the_wait(tmp_path: Path) -> None:
    running = start_group([sys.executable, "-c", "import time; time.sleep(30)"], tmp_path, {})
    assert not isinstance(running, RunResult)
    time.sleep(1.0)  # the caller was busy (a collect loading its models) while it ran
    began = time.monotonic()
    run = running.wait(1.0)
    assert run.timed_out
    assert time.monotonic() - began < 0.5  # it had used up its second: stopped at once
