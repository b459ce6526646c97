"""Debian's chromium, headless, driven by Playwright (never a browser Playwright downloads)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_or_skip() -> str:
    """The browser's path; a skip saying why when it is absent (a failure in CI, which has it)."""
    found = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if found:
        return found
    reason = "no chromium at /usr/bin/chromium: apt-get install -y chromium (.ci/run does)"
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser tests: {reason}")
    pytest.skip(reason)


@contextmanager
def browser_page(width: int = 1280, height: int = 900) -> Iterator[object]:
    """A fresh page in headless chromium; closed, with the browser, on exit."""
    path = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=ARGS, headless=True)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()
