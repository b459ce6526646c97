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
from donegate.session import on_start, on_stop, on_tool_use

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


# --- a confined agent's stop: the command parked while the snapshot is taken ------------------


def parks(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each parked run was given its run (``release``'s answers)."""
    given: list[bool] = []
    real = _launch.Started.release

    def spy(self: _launch.Started, place: Any, refreshed: Any = ()) -> bool:
        given.append(real(self, place, refreshed))
        return given[-1]

    monkeypatch.setattr(_launch.Started, "release", spy)
    return given


def confined_stop(repo: Path, state: Path, fix: str, *, reported: bool = True) -> str | None:
    """A turn of a confined agent that writes ``fix``, and its stop's verdict."""
    prompt = payload("UserPromptSubmit", SESSION, repo, prompt="fix normalize")
    on_start(claude_code.parse(prompt), state)
    (repo / "zipcode.py").write_text(fix)
    if reported:  # as Claude Code reports an edit
        written = {"file_path": str(repo / "zipcode.py"), "content": fix}
        edit = payload("PostToolUse", SESSION, repo, tool_name="Write", tool_input=written)
        on_tool_use(
            claude_code.parse({**edit, "tool_response": {"filePath": written["file_path"]}}), state
        )
    stop = claude_code.parse(payload("Stop", SESSION, repo, last_assistant_message="Fixed."))
    return on_stop(stop._replace(confinement="claude-code sandbox"), state).verdict


@pytest.mark.parametrize(("fix", "verdict"), [(project.FIXED, "verified"), ("x = 1\n", "refuted")])
def test_a_confined_stop_runs_its_command_parked_in_the_kept_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fix: str, verdict: str
) -> None:
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    on_start(claude_code.parse(payload("SessionStart", SESSION, repo, source="startup")), state)
    assert confined_stop(repo, state, "x = 2\n") == "refuted"  # the first stop makes the copy
    calls, given = starts(monkeypatch), parks(monkeypatch)
    assert confined_stop(repo, state, fix) == verdict
    assert given == [True]  # parked before the snapshot, given its run once the copy was ready
    assert calls == []  # and no other run started


def test_a_confined_stop_after_a_turn_with_no_tool_call_on_record_parks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    on_start(claude_code.parse(payload("SessionStart", SESSION, repo, source="startup")), state)
    assert confined_stop(repo, state, "x = 2\n") == "refuted"  # a write of the last turn on record
    calls, given = starts(monkeypatch), parks(monkeypatch)
    assert confined_stop(repo, state, project.FIXED, reported=False) == "verified"
    assert given == []
    assert [caller for caller, _ in calls] == ["donegate.session.checking"]
