"""Reading one page in headless Chromium through Playwright, without writing anything.

The check only loads and reads: it never clicks, types or submits, and every request the page
makes (its scripts' included, in any frame or window it opens) goes through :class:`Guard`, which
lets through only ``GET`` and ``HEAD`` and closes every WebSocket before it connects. A page
whose script posts on load therefore cannot change the application it shows. What HTTP allows a
``GET`` to do is the one thing left to the application: a handler that writes on ``GET`` writes.

Every Playwright call is given what is left of the check's deadline as its timeout, so the
browser is closed soon after the deadline even when the watch in the collector has given up.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from donegate.checks._deadline import Deadline
from donegate.checks.dom_assertion._observed import Element
from donegate.checks.dom_assertion._settings import DomAssertionSettings, normalised

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Browser, Locator, Page, Request, Route, WebSocketRoute

T = TypeVar("T")
READ_ONLY_METHODS = frozenset({"GET", "HEAD"})
BLOCKED_LISTED = 20
ARGS = [
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
]


class Unread(Exception):
    """The page could not be read as configured; the message says why (for the evidence)."""


@dataclass
class Guard:
    """Aborts every request whose method could write, and every WebSocket; remembers them."""

    blocked: list[str] = field(default_factory=list)
    total: int = 0

    def request(self, route: Route) -> None:
        """Playwright's route handler: continue a GET or HEAD, abort anything else."""
        from playwright.sync_api import Error

        request = route.request
        with contextlib.suppress(Error):  # the page went away meanwhile: nothing was sent
            if request.method.upper() in READ_ONLY_METHODS:
                route.continue_()
                return
            self._note(f"{request.method} {request.url}")
            route.abort("blockedbyclient")

    def socket(self, socket: WebSocketRoute) -> None:
        """Playwright's WebSocket handler: never connected to the server, closed at once."""
        from playwright.sync_api import Error

        self._note(f"WebSocket {socket.url}")
        with contextlib.suppress(Error):
            socket.close()

    def _note(self, what: str) -> None:
        self.total += 1
        if len(self.blocked) < BLOCKED_LISTED:
            self.blocked.append(what)


@dataclass(frozen=True, slots=True)
class Read:
    """What the browser showed: the element, the page's status and URL, and its screenshot (or
    why there is none)."""

    element: Element
    status: int
    url: str
    browser_version: str
    png: bytes | None
    png_why_not: str | None = None


def read(
    settings: DomAssertionSettings, executable: Path, deadline: Deadline, guard: Guard
) -> Read:
    """Load ``settings.url`` in a fresh headless browser and read the element; :class:`Unread`
    when the page cannot be read (no browser start, navigation error, HTTP status 400 or more,
    ``wait_for`` not shown, the deadline)."""
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as pw:
        # Chromium's own sandbox stays off, as Playwright has it by default: it does not start
        # as root or in most containers. What the page can send is limited by the guard instead.
        browser = _step(
            deadline,
            f"starting the browser {executable}",
            lambda ms: pw.chromium.launch(
                executable_path=str(executable), headless=True, args=ARGS, timeout=ms
            ),
        )
        try:
            return _visit(browser, settings, deadline, guard)
        finally:
            with contextlib.suppress(Error):
                browser.close()


def _visit(
    browser: Browser, settings: DomAssertionSettings, deadline: Deadline, guard: Guard
) -> Read:
    page, documents = _guarded_page(browser, settings, guard)
    status = _load(page, settings, deadline)
    element = _element(page, settings, deadline)
    png, why_not = _screenshot(page, deadline)
    if len(documents) > 1:
        # What was read may be another document (an error page, where an aborted POST left it).
        raise Unread(
            f"the page went on to load another document ({documents[1]}) while it was read: "
            f"what the browser showed was not {settings.url}"
        )
    return Read(element, status, page.url, browser.version, png, why_not)


def _guarded_page(
    browser: Browser, settings: DomAssertionSettings, guard: Guard
) -> tuple[Page, list[str]]:
    """A page in a fresh context whose every request passes ``guard``, and the list that
    records each document its main frame asks for."""
    size = settings.viewport
    context = browser.new_context(
        viewport={"width": size.width, "height": size.height},
        service_workers="block",  # a service worker's requests would pass by the routes
        accept_downloads=False,
    )
    context.route("**/*", guard.request)
    context.route_web_socket("**", guard.socket)
    page = context.new_page()
    documents: list[str] = []
    page.on("request", lambda request: _note_document(page, request, documents))
    return page, documents


def _load(page: Page, settings: DomAssertionSettings, deadline: Deadline) -> int:
    """Load the page, and wait for ``wait_for``; the main document's status."""
    url = settings.url
    response = _step(
        deadline, f"loading {url}", lambda ms: page.goto(url, wait_until="load", timeout=ms)
    )
    if response is None:
        raise Unread(f"the browser got no response for {url}")
    if response.status >= 400:
        raise Unread(f"{url} answered HTTP {response.status}: the page was not read")
    if settings.wait_for is not None:
        shown = page.locator(f"css={settings.wait_for}").first
        _step(
            deadline,
            f"waiting for {settings.wait_for!r}",
            lambda ms: shown.wait_for(state="attached", timeout=ms),
        )
    return response.status


def _note_document(page: Page, request: Request, documents: list[str]) -> None:
    """Remember each new document the page's main frame asks for (a redirect is the same one)."""
    if (
        request.is_navigation_request()
        and request.frame == page.main_frame
        and request.redirected_from is None
    ):
        documents.append(f"{request.method} {request.url}")


def _element(page: Page, settings: DomAssertionSettings, deadline: Deadline) -> Element:
    # Locators run in a script context of Playwright's own (an isolated world), where the
    # page's scripts cannot replace the DOM functions that answer (tested).
    matches = page.locator(f"css={settings.selector}")
    count = _step(deadline, f"finding {settings.selector!r}", lambda _ms: matches.count())
    if count == 0:
        return Element(0)
    first = matches.first
    text = _step(deadline, "reading its text", lambda ms: first.inner_text(timeout=ms))
    wanted = settings.expected.get("attribute")
    attributes: dict[str, str] = {}
    for name in wanted if isinstance(wanted, dict) else {}:
        value = _step(deadline, f"reading {name!r}", partial(_attribute, first, name))
        if value is not None:
            attributes[name] = value
    return Element(count, normalised(text), attributes)


def _attribute(element: Locator, name: str, timeout_ms: float) -> str | None:
    return element.get_attribute(name, timeout=timeout_ms)


def _screenshot(page: Page, deadline: Deadline) -> tuple[bytes | None, str | None]:
    try:
        png = _step(
            deadline,
            "the screenshot",
            lambda ms: page.screenshot(type="png", timeout=ms, animations="disabled"),
        )
    except Unread as exc:
        return None, str(exc)
    return png, None


def _step(deadline: Deadline, what: str, call: Callable[[float], T]) -> T:
    """``call(timeout_ms)`` with what is left of the deadline; its failures as :class:`Unread`."""
    from playwright.sync_api import Error
    from playwright.sync_api import TimeoutError as Timeout

    left = deadline.remaining()
    if left <= 0:
        raise Unread(f"{what}: no time left within the check's deadline of {deadline.seconds:g} s")
    try:
        # At least a millisecond: Playwright reads a timeout of 0 as no timeout at all.
        return call(max(1.0, left * 1000))
    except Timeout:
        raise Unread(
            f"deadline: {what} did not finish within the check's deadline of {deadline.seconds:g} s"
        ) from None
    except Error as exc:
        said = (exc.message or "").strip().splitlines() or [type(exc).__name__]
        raise Unread(f"{what} failed: {said[0]}") from None
