"""``donegate report`` as a real process: where it cannot write, it says so (exit 4)."""

from __future__ import annotations

from pathlib import Path

from donegate.ledger import Ledger
from tests.report import process, week


def test_an_output_it_cannot_write_is_invalid_input_not_an_internal_error(tmp_path: Path) -> None:
    with Ledger(tmp_path / "state") as ledger:
        week.fill(ledger)
    (tmp_path / "a-file").write_text("")
    for out in (tmp_path / "no-such-dir" / "report.html", tmp_path / "a-file" / "report.html"):
        done = process.report(tmp_path / "state", out)
        assert done.returncode == 4, done.stderr
        assert f"cannot write the report to {out}" in done.stderr
        assert "Traceback" not in done.stderr
