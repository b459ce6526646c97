"""What ``expected`` may say, and that the observed value means to a generic comparison what the
extension means: a verifier that does not know ``x-dom_assertion`` reaches the same outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from donegate.checks.dom_assertion._observed import TEXT_KEPT_CHARS, Element, observed
from donegate.errors import InvalidInput
from donegate.expectation import compare
from tests.checks.support import config_from

PAGE = "http://127.0.0.1:8080/settings"


def _table(expected: str, more: str = "") -> str:
    return f"""
        [[checks]]
        check_type = "x-dom_assertion"
        url = "{PAGE}"
        selector = "#name"
        expected = {expected}
        {more}
    """


@pytest.mark.parametrize(
    ("expected", "more", "said"),
    [
        ("{}", "", "expected is required"),
        ('{ txt = "a" }', "", "unknown expected keys ['txt']"),
        ('{ present = "yes" }', "", "expected.present is true or false"),
        ("{ count = -1 }", "", "expected.count is an integer, 0 or more"),
        ("{ count = true }", "", "expected.count is an integer"),
        ('{ text = "" }', "", "expected.text is a non-empty string"),
        ('{ text = " Grace  Hopper" }', "", "write it as 'Grace Hopper'"),
        ('{ text_contains = "a\\tb" }', "", "write it as 'a b'"),
        ("{ attribute = {} }", "", "expected.attribute maps attribute names"),
        ("{ attribute = { id = 3 } }", "", "expected.attribute maps attribute names to strings"),
        ("{ present = true }", 'url = "file:///etc/passwd"', "checks[0].url"),
        ("{ present = true }", "timeout_s = 0", "checks[0].timeout_s"),
        ("{ present = true }", "viewport = { width = 100000 }", "checks[0].viewport.width"),
        ("{ present = true }", 'click = "#save"', "checks[0].click"),
    ],
)
def test_a_bad_table_is_refused_naming_what(expected: str, more: str, said: str) -> None:
    toml = _table(expected, more)
    if more.startswith("url"):
        toml = toml.replace(f'url = "{PAGE}"\n', "")
    with pytest.raises(InvalidInput) as refused:
        config_from(toml, Path("/tmp"))
    assert said in str(refused.value)


def test_presence_alone_is_warned_about() -> None:
    config = config_from(_table("{ present = true }"), Path("/tmp"))
    assert "weak evidence" in config.warnings()[0]
    config = config_from(_table('{ present = true, text = "a" }'), Path("/tmp"))
    assert config.warnings() == []


GRACE = Element(1, "Grace Hopper", {"data-value": "Grace Hopper"})
ADA = Element(1, "Ada Lovelace", {"data-value": "Ada Lovelace"})
BARE = Element(1, "Grace Hopper", {})
NONE = Element(0)
CASES: list[tuple[dict[str, Any], Element, str]] = [
    ({"present": True}, GRACE, "match"),
    ({"present": True}, NONE, "contradicts"),
    ({"present": False}, NONE, "match"),
    ({"present": False}, GRACE, "contradicts"),
    ({"count": 1}, GRACE, "match"),
    ({"count": 2}, GRACE, "contradicts"),
    ({"count": 0}, NONE, "match"),
    ({"text": "Grace Hopper"}, GRACE, "match"),
    ({"text": "Grace Hopper"}, ADA, "contradicts"),
    ({"text": "Grace"}, GRACE, "contradicts"),  # exact, not contained
    ({"text": "Grace Hopper"}, NONE, "contradicts"),
    ({"text_contains": "Hopper"}, GRACE, "match"),
    ({"text_contains": "Hopper"}, ADA, "contradicts"),
    ({"text_contains": "Grace Hopper"}, GRACE, "match"),
    ({"text_contains": "Hopper"}, NONE, "contradicts"),
    ({"attribute": {"data-value": "Grace Hopper"}}, GRACE, "match"),
    ({"attribute": {"data-value": "Grace Hopper"}}, ADA, "contradicts"),
    ({"attribute": {"data-value": "Grace Hopper"}}, BARE, "contradicts"),  # no such attribute
    ({"attribute": {"data-value": "Grace Hopper"}}, NONE, "contradicts"),
    ({"present": True, "text": "Grace Hopper"}, ADA, "contradicts"),
]


@pytest.mark.parametrize(("expected", "element", "outcome"), CASES)
def test_a_generic_comparison_reads_the_observation_as_meant(
    expected: dict[str, Any], element: Element, outcome: str
) -> None:
    seen = observed(expected, element)
    # Under the extension's name and under a name no verifier knows: one and the same reading.
    assert compare("x-dom_assertion", expected, seen).outcome == outcome
    assert compare("some-unknown-type", expected, seen).outcome == outcome


def test_an_element_whose_text_was_not_read_is_no_observation() -> None:
    seen = observed({"text": "Grace Hopper", "present": True}, Element(1, None))
    assert seen == {"present": True}
    assert compare("x", {"text": "Grace Hopper"}, seen).outcome == "no_observation"


def test_a_long_text_is_cut_and_never_cut_into_a_match() -> None:
    long = "x" * (TEXT_KEPT_CHARS * 3)
    seen = observed({"text": "Grace Hopper", "text_contains": "Hopper"}, Element(1, long))
    assert isinstance(seen["text"], str)
    assert len(seen["text"]) < TEXT_KEPT_CHARS + 100
    assert seen["text"].endswith(f"[... {TEXT_KEPT_CHARS * 2} more characters]")
    # The cut text would equal the expectation: the whole text is kept instead.
    cut = f"{long[:TEXT_KEPT_CHARS]} [... {TEXT_KEPT_CHARS * 2} more characters]"
    assert observed({"text": cut}, Element(1, long)) == {"text": long}
    assert compare("x", {"text": cut}, {"text": long}).outcome == "contradicts"
