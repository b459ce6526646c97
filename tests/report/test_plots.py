"""The plots' labels are the receipts' text as it is: never read as math, never refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from donegate.ledger import Ledger
from donegate.report import plots
from tests.report import process, week

# Each of these is a mathtext error in matplotlib (an unknown symbol, an unclosed group, a bare
# subscript); the last two are a label outside math and one no font can draw.
LABELS = ("test_cost[$\\foo$]", "test_sum[$}$]", "test_index[$a_$]", "price: $5", "f-\udc80.py")


def _shown(label: str) -> str:
    """How a label reads in the SVG: XML-escaped, and a lone surrogate as its escape."""
    text = label.encode("utf-8", "backslashreplace").decode("utf-8")
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@pytest.mark.parametrize("label", LABELS)
def test_a_bar_label_is_drawn_as_literal_text(label: str) -> None:
    svg = plots.ranked_bars("Top findings", [(f"failing test: {label}", 2.0)], "receipts")
    assert f"failing test: {_shown(label)}" in svg


def test_the_report_draws_test_ids_and_checks_holding_dollars(tmp_path: Path) -> None:
    with Ledger(tmp_path / "state") as ledger:
        for label in LABELS:
            week.one_stop(ledger, {"check": label, "elapsed_s": 2.0, "failing": [label]})
    out = tmp_path / "report.html"
    done = process.report(tmp_path / "state", out)
    assert (done.returncode, done.stderr.count("Traceback")) == (0, 0), done.stderr
    page = out.read_text(encoding="utf-8")
    findings, checks = page.split("aria-label=")[3:5]  # the two plots of ranked bars
    for label in LABELS:
        assert f"failing test: {_shown(label)}" in findings
        assert f">{_shown(label)}<" in checks


def test_labels_shortened_to_the_same_text_are_two_bars() -> None:
    tail = "x" * 60
    svg = plots.ranked_bars("Top findings", [(f"a::{tail}", 3.0), (f"b::{tail}", 2.0)], "receipts")
    assert (svg.count(">3 receipts<"), svg.count(">2 receipts<")) == (1, 1)
    assert svg.count(f"…{tail[-47:]}<") == 2
