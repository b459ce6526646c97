"""Path globs, the one engine for ``protect``, ``covers``, ignores and the scan's allowances.

Gitignore-like, because that is what teams already write, over ``/``-separated paths relative to
the workspace root (Python 3.11 has no ``PurePath.full_match``, and ``fnmatch`` lets ``*`` cross
``/``):

- a pattern without ``/`` matches the last component anywhere (``*.pyc``, ``conftest.py``);
- a pattern ending in ``/`` matches a directory, and so everything below it (``__pycache__/``);
- a leading or inner ``/`` anchors a pattern at the root (``/build/``, ``tests/**``);
- ``**`` spans directories, ``*`` and ``?`` stay within one component, and every other character
  is itself (a ``[`` too).

Any character a file name may hold matches a wildcard, a newline included: a pattern that missed
``tests/a\\nb.py`` would leave an agent's test edit unprotected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


def normalise(target: str, base_dir: str) -> str:
    """``target`` relative to ``base_dir`` when it lies inside it, without a leading ``./``."""
    text = target.strip().replace("\\", "/")
    base = base_dir.rstrip("/") + "/"
    if text.startswith(base):
        text = text[len(base) :]
    while text.startswith("./"):
        text = text[2:]
    return text


def matches(path: str, pattern: str) -> bool:
    """Whether the relative ``path`` matches ``pattern`` (see the module docstring)."""
    # Without a wildcard a file pattern matches only itself. Compiling it says no more and costs
    # a tenth of a millisecond: most of the runner files, checked before every test run starts.
    if not _is_glob(pattern) and not pattern.endswith("/"):
        if "/" in pattern:
            return path == pattern.removeprefix("/")
        return path.rpartition("/")[2] == pattern
    shape = _shape(pattern)
    if shape is None:
        return _compile(pattern).fullmatch(path) is not None
    kind, head, tail = shape
    if kind == "name":  # head*tail, the last component
        name = path.rpartition("/")[2]
        return len(name) >= len(head) + len(tail) and name.startswith(head) and name.endswith(tail)
    if kind == "under":  # head/**, anchored: everything below head
        return path.startswith(head)
    return path.startswith(head) or f"/{head}" in path  # below a directory named head, anywhere


@lru_cache(maxsize=512)
def _shape(pattern: str) -> tuple[str, str, str] | None:
    """The common shapes that need no regex (a hook tests some fifty default patterns against
    what a stop wrote, and compiling each costs a quarter of a millisecond): ``name`` (``*.py``,
    ``test_*.py``: a head and a tail around one ``*``), ``under`` (``tests/**``) and ``below``
    (``**/tests/**``, ``__tests__/``: any directory of that name). None: another shape."""
    if "/" not in pattern and pattern.count("*") == 1 and "?" not in pattern:
        head, _, tail = pattern.partition("*")
        return "name", head, tail
    if pattern.endswith("/**") and _is_name(stem := pattern.removesuffix("/**").removeprefix("/")):
        return "under", f"{stem}/", ""
    if pattern.startswith("**/") and pattern.endswith("/**"):
        stem = pattern[3:-3]
        return ("below", f"{stem}/", "") if _is_name(stem) else None
    if pattern.endswith("/") and _is_name(pattern[:-1]):
        return "below", f"{pattern[:-1]}/", ""
    return None


def matches_any(path: str, patterns: Iterable[str]) -> bool:
    """Whether ``path`` matches one of ``patterns``."""
    return any(matches(path, p) for p in patterns)


def first_match(path: str, patterns: Iterable[str]) -> str | None:
    """The first of ``patterns`` that ``path`` matches, or None."""
    return next((p for p in patterns if matches(path, p)), None)


@lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str]:
    directory = pattern.endswith("/")
    body = pattern.removeprefix("/").removesuffix("/")
    # As in gitignore: a leading or inner "/" anchors the pattern at the root.
    anywhere = "/" not in body and not pattern.startswith("/")
    prefix = "(?:.*/)?" if anywhere else ""
    suffix = "/.*" if directory else ""
    return re.compile(f"{prefix}{_translate(body)}{suffix}", re.DOTALL)


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


class PathFilter:
    """A compiled set of patterns, fast enough to run on every path of a large tree.

    Patterns are sorted by shape: unanchored directory patterns are tested against each
    directory component, unanchored name patterns against the last component (literal names by
    set lookup), and only anchored patterns against the whole path. One regex over whole paths
    would backtrack on every ``(?:.*/)?`` prefix. It decides as :func:`matches_any` does.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(patterns)
        dirs, names, paths = [], [], []
        for pattern in self.patterns:
            body = pattern.removesuffix("/")
            if "/" in body or pattern.startswith("/"):
                paths.append(pattern)
            elif pattern.endswith("/"):
                dirs.append(body)
            else:
                names.append(body)
        self._dirs = _NameSet(dirs)
        self._names = _NameSet(names)
        self._paths = [_compile(p) for p in paths]
        self._parents: dict[str, bool] = {}

    def matches(self, path: str) -> bool:
        """Whether ``path`` (relative, ``/``-separated) matches one of the patterns."""
        parent, _, name = path.rpartition("/")
        if (name and self._names.has(name)) or (parent and self._parent_ignored(parent)):
            return True
        return any(r.fullmatch(path) for r in self._paths)

    ignored = matches  # as the filters of what a snapshot leaves out read

    def keep(self, paths: Iterable[str]) -> list[str]:
        """``paths`` without the ignored ones: :meth:`ignored` inlined over a whole listing.

        A hook filters every path of the tree at every stop; one loop with its lookups bound
        locally takes half the time of a method call per path.
        """
        literal, names = self._names.literal, self._names
        wild = bool(names.suffixes or names.prefixes or names.regex)
        parents, anchored = self._parents, self._paths
        kept: list[str] = []
        for path in paths:
            parent, _, name = path.rpartition("/")
            if name in literal or (wild and name and names.has(name)):
                continue
            if parent:
                known = parents.get(parent)
                if known is None:
                    known = self._parent_ignored(parent)
                if known:
                    continue
            if anchored and any(r.fullmatch(path) for r in anchored):
                continue
            kept.append(path)
        return kept

    def _parent_ignored(self, parent: str) -> bool:
        # Trees have far fewer directories than files: decide each directory once.
        known = self._parents.get(parent)
        if known is None:
            known = any(self._dirs.has(d) for d in parent.split("/"))
            self._parents[parent] = known
        return known

    def ignored_dir(self, path: str) -> bool:
        """Whether the directory ``path`` is ignored, so a walk need not enter it."""
        # Only directory patterns (and ``**`` globs) match a path ending in ``/``.
        return self.ignored(f"{path}/")


class _NameSet:
    """Names and name globs, matched against one path component."""

    def __init__(self, globs: list[str]) -> None:
        self.literal = frozenset(g for g in globs if not _is_glob(g))
        # "*.pyc" and "junit*" shapes need no regex: compiling one costs a hook milliseconds.
        wild = [g for g in globs if _is_glob(g)]
        self.suffixes = tuple(g[1:] for g in wild if _is_plain(g[1:]) and g.startswith("*"))
        self.prefixes = tuple(g[:-1] for g in wild if _is_plain(g[:-1]) and g.endswith("*"))
        rest = [_translate(g) for g in wild if not _is_plain(g[1:]) and not _is_plain(g[:-1])]
        self.regex = re.compile("|".join(rest), re.DOTALL) if rest else None

    def has(self, name: str) -> bool:
        if name in self.literal:
            return True
        if self.suffixes and name.endswith(self.suffixes):
            return True
        if self.prefixes and name.startswith(self.prefixes):
            return True
        return self.regex is not None and self.regex.fullmatch(name) is not None


def _is_glob(text: str) -> bool:
    return "*" in text or "?" in text


def _is_name(text: str) -> bool:
    return _is_plain(text) and "/" not in text


def _is_plain(text: str) -> bool:
    return bool(text) and not _is_glob(text)
