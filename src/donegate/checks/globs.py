"""Globs over mutation targets, for ``covers`` and ``protect``.

Gitignore-like, because that is what teams already write: ``*`` and ``?`` stay within one path
segment, ``**`` crosses segments, and a pattern without a ``/`` matches the last segment at any
depth (``conftest.py`` matches ``tests/unit/conftest.py``). Targets that are absolute paths inside
the base directory are matched relative to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import PurePosixPath


def normalise(target: str, base_dir: str) -> str:
    """``target`` relative to ``base_dir`` when it lies inside it, without a leading ``./``."""
    text = target.strip().replace("\\", "/")
    base = base_dir.rstrip("/") + "/"
    if text.startswith(base):
        text = text[len(base) :]
    while text.startswith("./"):
        text = text[2:]
    return text


def matches(pattern: str, target: str) -> bool:
    """Does ``target`` (already normalised) match ``pattern``?"""
    if "/" not in pattern.strip("/"):
        name = PurePosixPath(target).name if target else ""
        return _fullmatch(pattern.strip("/"), name) or _fullmatch(pattern, target)
    return _fullmatch(pattern.lstrip("/"), target)


def first_match(patterns: Iterable[str], target: str) -> str | None:
    """The first pattern that ``target`` matches, or None."""
    return next((p for p in patterns if matches(p, target)), None)


def _fullmatch(pattern: str, text: str) -> bool:
    # Without a wildcard a pattern matches only itself. Compiling it says no more and costs a
    # tenth of a millisecond: most of the runner files, checked before every test run starts.
    if "*" not in pattern and "?" not in pattern:
        return pattern == text
    return _compile(pattern).fullmatch(text) is not None


@lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out, re.DOTALL)
