"""The few git plumbing commands the workspace needs, with their output parsed.

Every call has a timeout; a git failure is reported as ``None`` (not a git repository, no
``HEAD``) so that the caller falls back to its documented non-git behaviour.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from donegate import gitlisting
from donegate.gitlisting import run


class Listing(NamedTuple):
    """The files git would consider: index entries with their blob ids, and untracked files.

    ``clean`` holds the tracked paths whose working-tree file git itself vouches for: not
    reported by ``git diff-files`` (which checks size, mtime, ctime and inode against the index,
    and re-reads racily clean files), and not marked assume-unchanged or skip-worktree (flags
    that would make git look away). Their content is their index blob.
    """

    object_format: str
    tracked: dict[str, str]
    untracked: list[str]
    clean: frozenset[str] = frozenset()
    began_ns: int = 0


def object_format(root: Path) -> str | None:
    """``sha1`` or ``sha256`` when ``root`` is inside a git work tree, else ``None``."""
    out = run(root, "rev-parse", "--is-inside-work-tree", "--show-object-format")
    if out is None:
        return None
    lines = out.decode().split()
    if len(lines) < 2 or lines[0] != "true":
        return None
    return lines[1] if lines[1] in ("sha1", "sha256") else "sha1"


def listing(root: Path, fmt: str) -> Listing | None:
    """The index's entries under ``root`` and the untracked files that are not ignored."""
    # Two commands rather than one: with --stage, git prints untracked names unmarked, and a
    # file name could then pass for an index entry. They run side by side.
    began, (staged, others, dirty) = gitlisting.collect(root)
    if staged is None or others is None:
        return None
    tracked, plain = _index(staged.decode("utf-8", "surrogateescape"))  # os.fsdecode's mapping
    return Listing(fmt, tracked, _records(others), _clean(plain, dirty), began)


def _index(text: str) -> tuple[dict[str, str], set[str]]:
    """``path -> blob id`` of the index's files, and the paths with a plain ``H`` tag.

    Each entry of ``git ls-files -z --stage -v`` reads "tag mode oid stage<TAB>path". The tag is
    "H" for a plain cached entry; lower case means assume-unchanged and "S" skip-worktree: git
    would not notice those files change, so they are never vouched for.
    """
    tracked: dict[str, str] = {}
    plain: set[str] = set()
    for record in text.split("\0"):
        meta, tab, path = record.partition("\t")
        fields = meta.split(" ")
        if not tab or len(fields) != 4:
            continue  # the empty tail after the last NUL
        tag, mode, oid, _stage = fields
        if mode == "160000":
            continue  # a submodule is a commit, not a file of this tree
        tracked[path] = oid
        if tag == "H":
            plain.add(path)
    return tracked, plain


def _clean(plain: set[str], dirty: bytes | None) -> frozenset[str]:
    """The tracked paths git vouches for; none when its answer is missing (fail closed)."""
    if dirty is None:
        return frozenset()
    return frozenset(plain - set(_records(dirty)))


def head_tree(root: Path) -> dict[str, str] | None:
    """``path -> blob id`` of ``HEAD``'s files under ``root``; ``None`` when there is no HEAD."""
    out = run(root, "ls-tree", "-r", "-z", "HEAD")
    if out is None:
        return None
    tree: dict[str, str] = {}
    for record in _records(out):
        meta, path = record.split("\t", 1)
        _mode, kind, oid = meta.split(" ")
        if kind == "blob":
            tree[path] = oid
    return tree


def blob(root: Path, oid: str) -> bytes | None:
    """The content of blob ``oid`` from the repository's object database, if it has it."""
    return run(root, "cat-file", "blob", oid)


def _records(out: bytes) -> list[str]:
    return [os.fsdecode(r) for r in out.split(b"\0") if r]
