"""The report as a person sees it: opened offline in headless chromium, clicked, photographed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from donegate.cli.app import run
from donegate.ledger import Ledger
from tests.report import week
from tests.report.browser import browser_page


@pytest.fixture
def report_file(tmp_path: Path) -> Path:
    with Ledger(tmp_path / "state") as ledger:
        week.fill(ledger)
    out = tmp_path / "report.html"
    code = run(["report", "--since", "7d", "--state-dir", str(tmp_path / "state"), "-o", str(out)])
    assert code == 0
    return out


def _text(page: Any, selector: str) -> str:
    return str(page.locator(selector).inner_text()).strip()


def test_a_person_reads_the_week(report_file: Path, tmp_path: Path) -> None:
    requests: list[str] = []
    with browser_page() as page:
        pg: Any = page
        pg.on("request", lambda request: requests.append(request.url))
        pg.goto(report_file.as_uri())
        pg.screenshot(path=str(tmp_path / "report-top.png"))
        pg.screenshot(path=str(tmp_path / "report-full.png"), full_page=True)
        # The headline numbers, as the tiles show them.
        assert _text(pg, "#tile-stops b") == str(week.EXPECTED["stops"])
        assert _text(pg, "#tile-claims b") == str(week.EXPECTED["claims"])
        assert _text(pg, "#tile-not-verified b") == "65%"  # 11 of 17
        assert "11 of 17" in _text(pg, "#tile-not-verified")
        assert _text(pg, "#tile-would-block b") == "7"
        said = _text(pg, "#would-block-text")
        assert "7 stops" in said
        assert "in 5 sessions; 2 of those sessions later verified" in said
        # Every plot is there, labelled, with its text as text (not colour alone: hatched bars).
        plots = pg.locator("figure svg[role=img]")
        labels = [plots.nth(i).get_attribute("aria-label") for i in range(plots.count())]
        assert labels == [
            "Stops per day by verdict",
            "Stops per day by decision",
            "Top findings",
            "Time spent in checks",
        ]
        verdict_plot = str(plots.nth(0).inner_html())
        for word in ("verified", "unverified", "refuted", "day (UTC)", "stops"):
            assert f">{word}<" in verdict_plot or word in verdict_plot
        assert "url(#h" in verdict_plot  # hatch patterns fill the bars
        assert plots.nth(0).bounding_box()["height"] > 150
        assert "test_login" in str(plots.nth(2).inner_html())
        # The worst repository comes first, with its counts.
        first = pg.locator("#groups table").first.locator("tbody tr").first
        assert first.locator("td").first.inner_text() == week.API
        assert not requests or all(u.startswith(("file:", "data:")) for u in requests), requests


def test_a_receipt_page_is_reachable_by_click(report_file: Path, tmp_path: Path) -> None:
    with browser_page() as page:
        pg: Any = page
        pg.goto(report_file.as_uri())
        link = pg.locator("#findings table tbody tr").first.locator("a").first
        target = str(link.get_attribute("href"))
        section = pg.locator(target)
        assert not section.is_visible()  # receipt pages stay hidden until asked for
        link.click()
        assert section.is_visible()
        pg.screenshot(path=str(tmp_path / "receipt.png"))
        shown = str(section.inner_text())
        assert "Claim document" in shown
        assert "The gate's trace" in shown
        assert "tests/test_auth.py::test_login" in shown  # the finding that led here
        assert "failing test" in shown
        pg.locator(f"{target} a[href='#receipts']").click()
        assert not section.is_visible()
        assert pg.locator("#receipts").is_visible()
