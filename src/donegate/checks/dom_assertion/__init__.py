"""``x-dom_assertion``: what a page shows, read in a real browser after the claim's mutations.

An extension, not one of Completion Claim v0.1's three check types (the spec's open question 3
asks what a browser agent's evidence looks like): its ``check_type`` carries the ``x-`` prefix,
and a claim with such evidence names the extension in its ``extensions`` field (see
:mod:`donegate.collect`). Its ``expected``/``observed_value`` keys mean what a verifier that
does not know the extension takes them to mean (see :mod:`._observed`).

The collector loads ``url`` in headless Chromium (the system's: never a browser Playwright
downloads), waits for ``wait_for`` if set, reads the first element ``selector`` matches, and takes
a screenshot of the viewport, kept in the state directory by its hash (see :mod:`.screenshots`).
It only reads: no click, no typing, and any request the page makes other than ``GET`` or ``HEAD``
is aborted (see :mod:`._page`). Everything ends by one deadline, ``timeout_s`` after the check
starts. A page that could not be read (no browser, no Playwright, a navigation error, a status of
400 or more, the deadline) is no observation (``absent``), never a match.
"""

from __future__ import annotations

from pydantic import JsonValue

from donegate.checks._deadline import Deadline, DeadlineExceeded, call_by
from donegate.checks.base import CheckContext, Observation
from donegate.checks.dom_assertion import _browser, _page
from donegate.checks.dom_assertion._observed import observed
from donegate.checks.dom_assertion._settings import DomAssertionSettings, Viewport

__all__ = [
    "CHECK_TYPE",
    "DOM_ASSERTION",
    "EXTENSION_URI",
    "DomAssertion",
    "DomAssertionSettings",
    "Viewport",
]

CHECK_TYPE = "x-dom_assertion"
EXTENSION_URI = "https://donegate.dev/ext/dom_assertion/0.1"
# The browser is closed by its own timeouts soon after the deadline; this watch is for the rest.
WATCH_GRACE_S = 5.0
TEXT_SHOWN_CHARS = 500


class DomAssertion:
    """The ``x-dom_assertion`` collector."""

    settings_model = DomAssertionSettings
    extension = EXTENSION_URI

    def collect(self, settings: DomAssertionSettings, context: CheckContext) -> Observation:
        """Read the page once, after the mutations; report what the element shows."""
        redact = context.redactor
        deadline = Deadline(settings.timeout_s)
        executable = _browser.missing_library() or _browser.executable(settings.browser, context)
        if isinstance(executable, str):  # why there is no browser to drive
            return Observation.absent(redact.text(executable))
        guard = _page.Guard()
        try:
            read = call_by(
                deadline,
                lambda: _page.read(settings, executable, deadline, guard),
                "the page",
                WATCH_GRACE_S,
            )
        except _page.Unread as exc:
            return Observation.absent(redact.text(str(exc)), **_blocked(guard))
        except DeadlineExceeded as exc:  # the browser outlived its own timeouts
            why = f"deadline: {exc}; the page was not read"
            return Observation.absent(redact.text(why), **_blocked(guard))
        return _observation(settings, read, guard, context)


DOM_ASSERTION = DomAssertion()


def _observation(
    settings: DomAssertionSettings, read: _page.Read, guard: _page.Guard, context: CheckContext
) -> Observation:
    from donegate.checks.dom_assertion import screenshots

    element = read.element
    detail: dict[str, JsonValue] = {
        "status": read.status,
        "page_url": read.url,
        "matched": element.count,
        "browser": read.browser_version,
        **_blocked(guard),
    }
    if element.text is not None:
        detail["text"] = element.text[:TEXT_SHOWN_CHARS]
    if read.png is None:
        detail["screenshot_not_kept"] = read.png_why_not or "no screenshot was taken"
    else:
        try:
            detail["screenshot"] = screenshots.keep(read.png, context.state_dir)
        except screenshots.NotKept as exc:
            detail["screenshot_not_kept"] = str(exc)
    redact = context.redactor
    return Observation.seen(
        observed(settings.expected, element),
        **redact.json(detail),  # type: ignore[arg-type]
    )


def _blocked(guard: _page.Guard) -> dict[str, JsonValue]:
    if not guard.total:
        return {}
    return {"blocked_requests": list(guard.blocked), "blocked_total": guard.total}
