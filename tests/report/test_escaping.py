"""Hostile receipts in a real browser: every string shown as text, no script run, no markup made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from donegate.cli.app import run
from donegate.ledger import Ledger
from tests.report import hostile, week
from tests.report.browser import browser_page

# What the page would hold had any payload become markup: the page itself has no script, no
# image and no element with an event handler.
_INJECTED = """() => ({
    pwned: window.__pwned === undefined ? null : String(window.__pwned),
    scripts: document.querySelectorAll('script').length,
    images: document.querySelectorAll('img').length,
    injected: document.querySelectorAll('#dg-injected').length,
    handlers: [...document.querySelectorAll('*')].filter(
        el => [...el.attributes].some(a => a.name.startsWith('on'))).length,
})"""


def _report(tmp_path: Path) -> tuple[Path, list[int]]:
    with Ledger(tmp_path / "state") as ledger:
        week.fill(ledger)
        ids = hostile.fill(ledger)
    out = tmp_path / "report.html"
    code = run(["report", "--since", "7d", "--state-dir", str(tmp_path / "state"), "-o", str(out)])
    assert code == 0
    return out, ids


def test_no_field_of_a_receipt_becomes_markup(tmp_path: Path) -> None:
    out, ids = _report(tmp_path)
    dialogs: list[Any] = []
    with browser_page() as page:
        pg: Any = page
        pg.on("dialog", lambda dialog: dialogs.append(dialog))  # noqa: PLW0108 (a bound method
        # is refused by playwright's event wrapper); an alert() would be one
        pg.goto(out.as_uri())
        for rid in ids:  # each receipt's own page shown, as a click would show it
            pg.goto(f"{out.as_uri()}#receipt-{rid}")
            assert pg.locator(f"#receipt-{rid}").is_visible()
        found = pg.evaluate(_INJECTED)
        text = str(pg.locator("body").text_content())
    assert found == {"pwned": None, "scripts": 0, "images": 0, "injected": 0, "handlers": 0}
    assert dialogs == []
    for payload in hostile.PAYLOADS:  # shown, as the text it is, where the page said it
        assert payload in text


def test_the_would_block_paragraph_shows_the_mode_as_text(tmp_path: Path) -> None:
    out, _ = _report(tmp_path)
    with browser_page() as page:
        pg: Any = page
        pg.goto(out.as_uri())
        said = str(pg.locator("#would-block-text").text_content())
        assert pg.locator("#would-block-text *:not(code):not(b)").count() == 0
    for payload in hostile.PAYLOADS[1::2]:  # the odd receipts are the vetoed ones let go
        assert f"1 under {payload}" in said
