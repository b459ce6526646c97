"""The one way text becomes HTML in the report: :func:`html` escapes every value it is given.

A page is assembled from :class:`Markup` only, and the only functions that make Markup are
:func:`html` (a template written in this package, every value escaped) and :func:`trusted` (the
plotting library's SVG, whose writer escapes its text as XML). The page's functions take and
return Markup, so a raw string handed to one is a type error under mypy, not a hole in a page.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape as _escape_html
from typing import LiteralString


class Markup(str):
    """Text that is already HTML: put in a page as it is."""

    __slots__ = ()


def escape(value: object) -> Markup:
    """``value`` as HTML text: markup as it is, anything else escaped (quotes too).

    Lone surrogates (a file name that was not UTF-8, kept as such in a receipt) become
    backslash escapes, so the page can always be written as UTF-8.
    """
    if isinstance(value, Markup):
        return value
    text = str(value)
    if not text.isascii():
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return Markup(_escape_html(text, quote=True))


def html(template: LiteralString, *args: object, **kwargs: object) -> Markup:
    """``template`` with its ``{}`` fields filled by the values given, each escaped.

    The template is markup written here (a literal); a value that should stay markup must be
    Markup itself. Format specs would apply to the escaped text, so numbers come formatted.
    """
    values = [escape(arg) for arg in args]
    named = {key: escape(value) for key, value in kwargs.items()}
    return Markup(template.format(*values, **named))


def join(parts: Iterable[Markup], sep: LiteralString = "") -> Markup:
    """Pieces of markup one after another."""
    return Markup(sep.join(escape(part) for part in parts))


def trusted(svg: str) -> Markup:
    """An SVG from the plotting library: its writer escapes every text in it as XML."""
    return Markup(svg)
