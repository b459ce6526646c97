"""Path patterns: gitignore-like globs over ``/``-separated paths relative to the workspace root.

Python 3.11 has no ``PurePath.full_match``, and ``fnmatch`` lets ``*`` cross ``/``, so patterns are
translated here:

- a pattern without ``/`` matches the last component anywhere (``*.pyc``, ``conftest.py``);
- a pattern ending in ``/`` matches a directory, and so everything below it (``__pycache__/``);
- a leading or inner ``/`` anchors a pattern at the root (``/build/``), as in gitignore;
- any other pattern matches the whole path, where ``**`` spans directories and ``*`` does not
  (``tests/**``, ``docs/*.md``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

# Files that donegate's own checks (and the tools they run) create: never the agent's writes.
DEFAULT_IGNORES: tuple[str, ...] = (
    ".git/",
    ".hg/",
    ".svn/",
    ".venv/",
    "venv/",
    ".tox/",
    ".nox/",
    "node_modules/",
    "__pycache__/",
    "*.pyc",
    "*.pyo",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    ".coverage",
    ".coverage.*",
    "coverage.xml",
    "htmlcov/",
    "junit*.xml",
    "*.junit.xml",
    ".donegate/",
    ".DS_Store",
)


@lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str]:
    directory = pattern.endswith("/")
    body = pattern.removeprefix("/").removesuffix("/")
    # As in gitignore: a leading or inner "/" anchors the pattern at the root.
    anywhere = "/" not in body and not pattern.startswith("/")
    prefix = "(?:.*/)?" if anywhere else ""
    suffix = "/.*" if directory else ""
    return re.compile(f"{prefix}{_translate(body)}{suffix}")


def _translate(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


def matches(path: str, pattern: str) -> bool:
    """Whether the relative ``path`` matches ``pattern`` (see the module docstring)."""
    return _compile(pattern).fullmatch(path) is not None


def matches_any(path: str, patterns: Iterable[str]) -> bool:
    """Whether ``path`` matches one of ``patterns``."""
    return any(matches(path, p) for p in patterns)


class PathFilter:
    """A compiled set of ignore patterns, fast enough to run on every path of a large tree."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(patterns)
        joined = "|".join(f"(?:{_compile(p).pattern})" for p in self.patterns)
        self._regex = re.compile(joined) if joined else None

    def ignored(self, path: str) -> bool:
        """Whether ``path`` (relative, ``/``-separated) is ignored."""
        return self._regex is not None and self._regex.fullmatch(path) is not None

    def ignored_dir(self, path: str) -> bool:
        """Whether the directory ``path`` is ignored, so a walk need not enter it."""
        # Only directory patterns (and ``**`` globs) match a path ending in ``/``.
        return self.ignored(f"{path}/")
