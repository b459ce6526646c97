"""The stop's test command starts before the claim is built, and the check takes that run over.

In process, with a spy on the one function that starts a test command: a stop of the demo
project must start exactly one run, whether its verdict is refuted or verified (two would mean
the early run was not the check's, and was thrown away). The verdicts themselves are checked
through the real hook process by the rest of the suite.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from donegate.demo import project
from donegate.demo.project import payload
from donegate.hooks import claude_code
from donegate.sealed import _launch
from donegate.session import on_start, on_stop

SESSION = "early-1"


def starts(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    calls: list[Any] = []
    real = _launch.start

    def spy(launch: Any, place: Any) -> Any:
        caller = sys._getframe(1).f_globals["__name__"]  # which path started it
        calls.append((caller, place))
        return real(launch, place)

    monkeypatch.setattr(_launch, "start", spy)
    return calls


@pytest.mark.parametrize(("fix", "verdict"), [(project.FIXED, "verified"), ("x = 1\n", "refuted")])
def test_a_stop_starts_its_test_command_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fix: str, verdict: str
) -> None:
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    on_start(claude_code.parse(payload("SessionStart", SESSION, repo, source="startup")), state)
    (repo / "zipcode.py").write_text(fix)
    calls = starts(monkeypatch)
    stop = claude_code.parse(payload("Stop", SESSION, repo, last_assistant_message="Fixed."))
    assert on_stop(stop, state).verdict == verdict
    assert len(calls) == 1
    caller, place = calls[0]
    assert caller == "donegate.session.checking"  # started early, and taken over by the check
    assert place.mutations == (("w1", "zipcode.py"),)


def test_a_configuration_beyond_a_plain_test_run_is_started_by_its_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``isolation`` is not a plain key: nothing starts early, and the check starts its run."""
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    config = repo / "donegate.toml"
    config.write_text(
        config.read_text().replace("timeout_s = 120\n", 'timeout_s = 120\nisolation = "auto"\n')
    )
    project.git(repo, "commit", "-qam", "isolation named")
    on_start(claude_code.parse(payload("SessionStart", SESSION, repo, source="startup")), state)
    (repo / "zipcode.py").write_text(project.FIXED)
    calls = starts(monkeypatch)
    stop = claude_code.parse(payload("Stop", SESSION, repo, last_assistant_message="Fixed."))
    assert on_stop(stop, state).verdict == "verified"
    assert [caller for caller, _ in calls] == ["donegate.checks.test_run"]
