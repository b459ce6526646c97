"""The few git plumbing commands the workspace needs, with their output parsed.

Every call runs hardened (see :mod:`donegate.gitlisting`) and has a timeout; a git failure is
reported as ``None`` (not a git repository, no ``HEAD``) so that the caller falls back to its
documented non-git behaviour.
"""

from __future__ import annotations

import os
from pathlib import Path

from donegate import gitlisting
from donegate.gitlisting import run
from donegate.record import Record

MAX_NESTING = 8


class Listing(Record):
    """What git says about a tree: a hint of which paths are tracked, never of their content.

    ``tracked`` maps the index's paths to their index records, ``"mode oid stage"`` (the blob
    id, :func:`blob_of`, is used only to skip keeping old texts git already holds). ``plain``
    holds the untracked files that the tree's ``.gitignore`` files do not ignore; ``nested`` the
    directories holding another repository (a nested ``git init`` or a submodule). The files
    themselves are found by walking the tree: git does not list FIFOs or sockets, nor the files
    of a nested repository.
    """

    object_format: str
    tracked: dict[str, str]
    plain: frozenset[str] = frozenset()
    began_ns: int = 0
    nested: tuple[str, ...] = ()


def object_format(root: Path) -> str | None:
    """``sha1`` or ``sha256`` when ``root`` is inside a git work tree, else ``None``."""
    out = run(root, "rev-parse", "--is-inside-work-tree", "--show-object-format")
    if out is None:
        return None
    lines = out.decode().split()
    if len(lines) < 2 or lines[0] != "true":
        return None
    return lines[1] if lines[1] in ("sha1", "sha256") else "sha1"


def listing(root: Path) -> Listing | None:
    """The index's entries under ``root``, the untracked files not ignored, the nested repos.

    ``None`` when git cannot list ``root`` (not a work tree, a broken repository). The object
    format is told by the index's ids (40 or 64 hex digits); git is asked only when the index
    is empty, which spares the common stop a third git process.
    """
    # Separate commands rather than one: with --stage, git prints untracked names unmarked, and
    # a file name could then pass for an index entry. They run side by side.
    began, (staged, others) = gitlisting.collect(root)
    if staged is None or others is None:
        return None
    tracked, nested = _index(staged.decode("utf-8", "surrogateescape"))  # os.fsdecode's mapping
    fmt = _format_of(tracked) or object_format(root)
    if fmt is None:
        return None
    plain: set[str] = set()
    for path in _records(others):
        # git names a directory holding another repository with a trailing "/".
        (nested.append(path.rstrip("/")) if path.endswith("/") else plain.add(path))
    return Listing(fmt, tracked, frozenset(plain), began, tuple(nested))


def _index(text: str) -> tuple[dict[str, str], list[str]]:
    """``path -> "mode oid stage"`` of the index's files, and the paths of its submodules.

    Each record of ``git ls-files -z --stage`` is "mode oid stage<TAB>path" (a name may hold a
    tab, never a NUL); the trailing empty one is left out. Flags such as assume-unchanged or
    skip-worktree do not matter: no file's content is taken from the index. The ids are left
    unsliced until one is needed. When no name holds a tab (as many tabs as records), the whole
    text is split at once; otherwise record by record, at the first tab of each.
    """
    if text.count("\t") == text.count("\0"):  # no name holds a tab: split it all at once, in C
        fields = text.replace("\t", "\0").split("\0")
        tracked = dict(zip(fields[1::2], fields[0:-1:2], strict=True))
    else:
        tracked = {}
        for record in text.split("\0"):
            meta, tab, path = record.partition("\t")
            if tab:
                tracked[path] = meta
    submodules: list[str] = []
    if _GITLINK in text:  # a submodule's record, or a name holding the same text: look closer
        submodules = [path for path, meta in tracked.items() if meta.startswith(_GITLINK)]
        for path in submodules:
            del tracked[path]  # a commit of another repository: walked, not listed
    return tracked, submodules


_GITLINK = "160000 "


def blob_of(record: str | None) -> str | None:
    """The object id in an index record ``"mode oid stage"`` (None: no record)."""
    return None if record is None else record[7:-2]


def _format_of(tracked: dict[str, str]) -> str | None:
    """The object format the index's ids are written in; None when it holds no file."""
    for record in tracked.values():
        return _FORMATS.get(len(record) - 9, "sha1")  # "mode oid stage": 6 + 1 + id + 1 + 1
    return None


_FORMATS = {40: "sha1", 64: "sha256"}


def head_tree(root: Path, treeish: str = "HEAD", depth: int = 0) -> dict[str, str] | None:
    """``path -> blob id`` of ``treeish``'s files under ``root``; ``None`` when it is unknown.

    A submodule's files are read from its own repository at the commit the tree records.
    """
    out = run(root, "ls-tree", "-r", "-z", treeish)
    if out is None:
        return None
    tree: dict[str, str] = {}
    for record in _records(out):
        meta, path = record.split("\t", 1)
        _mode, kind, oid = meta.split(" ")
        if kind == "blob":
            tree[path] = oid
        elif kind == "commit" and depth < MAX_NESTING:
            inner = head_tree(root / path, oid, depth + 1) or {}
            tree.update({f"{path}/{p}": o for p, o in inner.items()})
    return tree


def blob(root: Path, oid: str, limit: int) -> bytes | None:
    """The content of blob ``oid`` from the repository's object database, if it has it.

    ``None`` too when it is larger than ``limit`` bytes: its size is asked first, so a huge
    blob is never loaded.
    """
    size = run(root, "cat-file", "-s", oid)
    if size is None or not size.strip().isdigit() or int(size) > limit:
        return None
    return run(root, "cat-file", "blob", oid)


def _records(out: bytes) -> list[str]:
    return [os.fsdecode(r) for r in out.split(b"\0") if r]
