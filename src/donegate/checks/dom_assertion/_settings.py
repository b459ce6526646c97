"""The settings of an ``x-dom_assertion`` table, and the expectation's shape.

``expected`` is read by any verifier, including one that knows nothing of this extension and
compares ``expected`` with ``observed_value`` key by key (JSON equality, objects as subsets), so
each key is defined so that this generic reading is the right one (see :mod:`._observed`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from donegate.checks.base import CheckSettings, PositiveSeconds

KEYS = ("present", "text", "text_contains", "attribute", "count")
DEFAULT_TIMEOUT_S = 15.0
NonEmpty = Annotated[str, Field(min_length=1)]


def normalised(text: str) -> str:
    """``text`` with every run of whitespace (NBSP included) made one space, ends trimmed."""
    return " ".join(text.split())


class Viewport(BaseModel):
    """The browser window's size in CSS pixels; bounded, as is the screenshot taken of it."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    width: Annotated[int, Field(ge=200, le=3840)] = 1280
    height: Annotated[int, Field(ge=200, le=2160)] = 800


class DomAssertionSettings(CheckSettings):
    """An ``x-dom_assertion`` table.

    ``selector`` is CSS (never one of Playwright's other selector engines); the first element it
    matches, in document order, is the one whose text and attributes are read. ``wait_for`` is a
    CSS selector the page must show before it is read. ``browser`` is a Chromium executable
    (relative paths start at the configuration's directory); without it, the first of
    ``chromium``, ``chromium-browser`` and ``google-chrome`` on ``PATH``.
    """

    url: Annotated[str, Field(pattern=r"^https?://")]
    selector: NonEmpty
    timeout_s: PositiveSeconds = DEFAULT_TIMEOUT_S
    wait_for: NonEmpty | None = None
    browser: NonEmpty | None = None
    viewport: Viewport = Field(default_factory=Viewport)

    @model_validator(mode="after")
    def _expectation_shape(self) -> DomAssertionSettings:
        why = _bad_expectation(self.expected)
        if why is not None:
            raise ValueError(why)
        return self

    def default_target(self) -> str:
        """The page and the selector (the collector masks secrets in them)."""
        return f"{self.url} {self.selector}"

    def warnings(self) -> list[str]:
        """Presence alone says little: the element may be there with yesterday's value in it."""
        if set(self.expected) <= {"present", "count"}:
            return [
                "expects only that the element is there, which is weak evidence about this "
                "change; also assert on what it shows (text, text_contains or attribute)"
            ]
        return []


def _bad_expectation(expected: dict[str, JsonValue]) -> str | None:
    if not expected:
        return f"expected is required: {', '.join(KEYS)}"
    unknown = sorted(set(expected) - set(KEYS))
    if unknown:
        return f"unknown expected keys {unknown}; allowed: {', '.join(KEYS)}"
    if not isinstance(expected.get("present", True), bool):
        return "expected.present is true or false"
    count = expected.get("count", 0)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        return "expected.count is an integer, 0 or more"
    for key in ("text", "text_contains"):
        why = _bad_text(key, expected.get(key, "x"))
        if why is not None:
            return why
    attributes = expected.get("attribute", {"x": "x"})
    if not isinstance(attributes, dict) or not attributes:
        return "expected.attribute maps attribute names to their values"
    if not all(isinstance(v, str) for v in attributes.values()):
        return "expected.attribute maps attribute names to strings"
    return None


def _bad_text(key: str, value: JsonValue) -> str | None:
    if not isinstance(value, str) or not value:
        return f"expected.{key} is a non-empty string"
    if normalised(value) != value:
        # Observed text is normalised; an expectation that is not could never match.
        return (
            f"expected.{key} is compared with the page's text whitespace-normalised: write it as "
            f"{normalised(value)!r}"
        )
    return None
