"""The demo's four sessions end as the README says they do."""

from pathlib import Path

import pytest

from donegate.demo.replay import SESSIONS, replay


def test_the_four_sessions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    outcomes = [
        [run.blocked for run in replay(session, n, tmp_path, state)]
        for n, session in enumerate(SESSIONS, start=1)
    ]
    assert outcomes == [[False], [True], [True, False], [True]]
    out = capsys.readouterr().out
    assert "tests/test_zip.py::test_plain" in out
    assert "tests/test_zip.py" in out
    assert "Only cosmetic edits" in out
