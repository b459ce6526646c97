"""The demo's judged session ends as its text says: sent back once by the judge, then let go."""

from pathlib import Path

import pytest

from donegate.demo import judged


def test_the_judged_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    decisions = judged.run(tmp_path, tmp_path / "state")
    # Both stops had green tests; only the judge tells them apart.
    assert [d["verification"]["observed"] for d in decisions] == ["passed", "passed"]
    assert [d["confirm"] for d in decisions] == [False, True]
    assert decisions[0]["reason"] == "judge_continue"
    assert decisions[0]["requirements"]["pending"] == ["any-zip4"]
    assert decisions[1]["reason"] == "verified_after_write"
    assert decisions[1]["requirements"]["pending_count"] == 0
    out = capsys.readouterr().out
    assert "SCRIPTED" in out
    assert "unmet_manner_clause" in out
