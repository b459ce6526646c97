"""Walking a tree for its files, reading again only the directories whose listing may differ.

A directory's names change only with the directory itself: creating, removing or renaming an
entry updates its mtime and its ctime, and no process can set a ctime. So a directory whose
``(mtime_ns, ctime_ns, inode)`` equals donegate's record of it holds the names it held then,
provided both times are older than the record's racy-clean horizon (a change within the same
clock tick as the listing would not show in them). Its names are taken from the record;
every other directory is read with ``scandir``. On a tree that did not change, a stop ``lstat``-s
each directory instead of listing it again.

A listing is what a walk needs and nothing more: each name, with ``/`` after a directory's
(``d_type``, links not followed), joined by NUL, which no name can hold. Like the stat record of
the files, the listings live in the state directory, outside the agent's reach.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

# directory path from the root ("" for the root, else ending in "/") -> mtime_ns, ctime_ns,
# inode, and its names
Listings = dict[str, tuple[int, int, int, str]]
# (path from the root, name) -> whether a walk goes into that directory
Enters = Callable[[str, str], bool]


class Walker:
    """One walk's use of the previous listings, and the listings it leaves for the next."""

    __slots__ = ("horizon", "known", "listings", "read")

    def __init__(self, known: Listings | None = None, horizon: int = 0) -> None:
        self.known: Listings = known or {}
        self.horizon = horizon
        self.listings: Listings = {}
        self.read: list[str] = []  # the directories listed again by this walk

    def files(self, root: Path, prefix: str, enters: Enters, limit: int | None) -> list[str]:
        """Every non-directory under ``root/prefix`` in directories the walk enters.

        At most about ``limit`` of them (a whole directory's worth past it). A loop over a stack
        rather than recursive generators: this runs over every file of the tree at every stop.
        """
        out: list[str] = []
        stack = [prefix]
        top = f"{root}{os.sep}"
        while stack:
            here = stack.pop()
            names = self._names(top + here, here)
            if names is None:
                continue
            for name in names.split("\0") if names else ():
                if name[-1] == "/":
                    if enters(here + name[:-1], name[:-1]):
                        stack.append(here + name)
                elif name != ".git":  # a gitfile: where a nested repository keeps its database
                    out.append(here + name)
            if limit is not None and len(out) >= limit:
                break
        return out

    def renewable(self, began_ns: int, racy_ns: int) -> int:
        """How many directories this walk read that a walk after ``began_ns`` can trust."""
        horizon = began_ns - racy_ns
        return sum(
            1
            for here in self.read
            if self.listings[here][0] < horizon and self.listings[here][1] < horizon
        )

    def _names(self, path: str, here: str) -> str | None:
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None
        key = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        known = self.known.get(here)
        if known is not None and known[:3] == key and max(key[0], key[1]) < self.horizon:
            names = known[3]
        else:
            try:
                with os.scandir(path) as it:
                    names = "\0".join(
                        [f"{c.name}/" if c.is_dir(follow_symlinks=False) else c.name for c in it]
                    )
            except OSError:
                return None
            self.read.append(here)
        self.listings[here] = (*key, names)
        return names


def listings_sized(value: object) -> bool:
    """Whether ``value`` has the shape of :data:`Listings` (a damaged record has not)."""
    if type(value) is not dict:
        return False
    return all(
        type(k) is str and type(v) is tuple and len(v) == 4 and type(v[3]) is str
        for k, v in value.items()
    )
