"""What was read from the page, as the ``observed_value`` a generic comparison reads rightly.

A verifier that does not know ``x-dom_assertion`` compares each expected key with the observed
key of the same name: strings and numbers by equality, objects as subsets. So:

- ``present``: whether the selector matched any element (``true``/``false``);
- ``count``: how many elements it matched;
- ``text``: the first match's rendered text, whitespace-normalised;
- ``text_contains``: the expected string itself when the first match's text contains it, else
  that text (which then cannot equal it);
- ``attribute``: each expected attribute's value on the first match, null where it has none.

When no element matches, ``text``, ``text_contains`` and ``attribute`` are observed as null (as a
readback that finds no record does): the page was read and holds no such element, which
contradicts a claim about what that element shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import JsonValue

# The most of a non-matching text kept in the evidence; the rest is said by its length.
TEXT_KEPT_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Element:
    """What the page showed for the selector: how many matched, and the first match's text
    (normalised) and the attributes asked about (absent ones left out)."""

    count: int
    text: str | None = None
    attributes: dict[str, str] = field(default_factory=dict)


def observed(expected: dict[str, JsonValue], element: Element) -> dict[str, JsonValue]:
    """The observed value of each expected key, as the module's docstring defines it."""
    found: dict[str, JsonValue] = {}
    for key, want in expected.items():
        if key == "present":
            found[key] = element.count > 0
        elif key == "count":
            found[key] = element.count
        elif element.count == 0:
            found[key] = None
        elif element.text is None:
            continue  # matched, but not read: no observation, never a contradiction
        elif key == "text":
            found[key] = element.text if element.text == want else _shown(element.text, want)
        elif key == "text_contains":
            assert isinstance(want, str)
            found[key] = want if want in element.text else _shown(element.text, want)
        elif key == "attribute":
            assert isinstance(want, dict)
            found[key] = {name: element.attributes.get(name) for name in want}
    return found


def _shown(text: str, unequal_to: JsonValue) -> str:
    """``text`` cut to a bounded length, never cut into a string equal to ``unequal_to``."""
    if len(text) <= TEXT_KEPT_CHARS:
        return text
    cut = f"{text[:TEXT_KEPT_CHARS]} [... {len(text) - TEXT_KEPT_CHARS} more characters]"
    return text if cut == unequal_to else cut
