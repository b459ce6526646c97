"""Bytecode for a test run's libraries: donegate's compile, used only for the bytes it came from.

A test run reads bytecode from a fresh ``PYTHONPYCACHEPREFIX``, so that no ``.pyc`` that an agent
planted is ever used. Alone, that makes every run compile pytest and the standard library anew:
more than a second, far more than a small suite's tests. The store keeps donegate's own compile of
each source file a run imported, named after the sha256 of the exact bytes it was compiled from.
Before a run, an entry goes into the fresh prefix only when its source still hashes to that name;
and it is a checked-hash pyc (PEP 552), so the interpreter compares it with the source once more
at import. After the run, donegate compiles what the run had to compile itself: it never takes a
``.pyc`` from the run's prefix, which the code under test could have written.

The store lives in donegate's state directory, out of the agent's reach. A store that cannot be
read or written costs time, never correctness: the run compiles what it lacks, as without one.
Only bytecode of donegate's own interpreter version is stored; other interpreters find nothing.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import marshal
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import CodeType

STORE_DIR = "bytecode"  # under donegate's state directory
_TAG = sys.implementation.cache_tag
# The names Python and pytest give, under a prefix, to the bytecode of ``<stem>.py``: Python's at
# the default optimisation level, and pytest's with its assertions rewritten (pytest >= 9 writes
# checked-hash pycs too). Other levels, versions and interpreters are left alone.
_NAME = re.compile(rf"(?P<stem>[^/]+)\.{re.escape(_TAG or '-')}(?:-pytest-(?P<pytest>[^/]+))?\.pyc")
_CHECKED_HASH = 0b11  # PEP 552 flags: hash-based, checked against the source at import


@dataclass(frozen=True, slots=True)
class BytecodeStore:
    """Stored compiles under ``root``; ``key`` names the runs that share a list of imports."""

    root: Path
    key: str

    def prefill(self, prefix: Path) -> frozenset[str]:
        """Link into ``prefix`` every listed entry whose source is unchanged; the ones placed."""
        placed = set()
        for rel in self._listed():
            entry = self._entry(rel, _source_digest(rel))
            if entry is not None and _place(entry, prefix / rel):
                placed.add(rel)
        return frozenset(placed)

    def learn(self, prefix: Path, placed: frozenset[str], skip: Iterable[Path]) -> None:
        """Compile and store what the run compiled itself; list what it imported for next time.

        Sources under ``skip`` (paths made for this run only) are left out.
        """
        roots = tuple(str(p).lstrip(os.sep) + os.sep for p in skip)
        seen = sorted(rel for rel in _bytecode_in(prefix) if not rel.startswith(roots))
        for rel in seen:
            if rel not in placed:
                self._store(rel)
        if seen != self._listed():
            _write_atomic(self._index(), "".join(f"{rel}\n" for rel in seen).encode())

    def _index(self) -> Path:
        return self.root / "runs" / f"{self.key}.txt"

    def _listed(self) -> list[str]:
        try:
            text = self._index().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return []
        return [rel for rel in text.splitlines() if _well_formed(rel)]

    def _entry(self, rel: str, digest: str | None) -> Path | None:
        if digest is None:
            return None
        return self.root / "entries" / f"{rel}-{digest}"

    def _store(self, rel: str) -> None:
        source = _source(rel)
        try:
            data = source.read_bytes()
        except OSError:
            return
        entry = self._entry(rel, hashlib.sha256(data).hexdigest())
        assert entry is not None
        if entry.exists():  # another run's list had it
            return
        try:
            code = _compiled(data, source, _NAME.fullmatch(Path(rel).name))
        except (SyntaxError, ValueError):
            return  # the run reports what it could not import; nothing to keep
        if code is not None:
            header = importlib.util.MAGIC_NUMBER + _CHECKED_HASH.to_bytes(4, "little")
            _write_atomic(entry, header + importlib.util.source_hash(data) + marshal.dumps(code))
            _drop_older(entry, f"{Path(rel).name}-")


def store_for(root: Path | None, key: str) -> BytecodeStore | None:
    """The store under ``root`` for runs named ``key``; None without a root or a cache tag."""
    if root is None or _TAG is None:
        return None
    return BytecodeStore(root / _TAG, hashlib.sha256(key.encode()).hexdigest()[:32])


def _source(rel: str) -> Path:
    folder, _, name = rel.rpartition("/")
    match = _NAME.fullmatch(name)
    assert match is not None
    return Path(os.sep, folder, match["stem"] + ".py")


def _compiled(data: bytes, source: Path, name: re.Match[str] | None) -> CodeType | None:
    """The code Python (or pytest's assertion rewriter) would make of ``source``; None when
    donegate's own pytest is not the version that the run's named its bytecode after."""
    if name is None or name["pytest"] is None:
        return compile(data, str(source), "exec", dont_inherit=True)
    try:
        import pytest
        from _pytest.assertion.rewrite import rewrite_asserts
    except ImportError:
        return None
    if pytest.__version__ != name["pytest"]:
        return None
    # As pytest's own cache does: the ini's enable_assertion_pass_hook is not part of its key.
    tree = ast.parse(data, filename=str(source))
    rewrite_asserts(tree, data, str(source), None)
    return compile(tree, str(source), "exec", dont_inherit=True)


def _source_digest(rel: str) -> str | None:
    try:
        return hashlib.sha256(_source(rel).read_bytes()).hexdigest()
    except OSError:
        return None


def _well_formed(rel: str) -> bool:
    parts = rel.split("/")
    return (
        _TAG is not None
        and _NAME.fullmatch(parts[-1]) is not None
        and ".." not in parts
        and "" not in parts
    )


def _bytecode_in(prefix: Path) -> Iterator[str]:
    """The plain bytecode files under ``prefix``, relative to it (pytest's rewritten ones and
    other levels and versions have other names)."""
    for folder, _dirs, files in os.walk(prefix):
        base = os.path.relpath(folder, prefix)
        for name in files:
            rel = name if base == "." else f"{base}/{name}"
            if _well_formed(rel):
                yield rel


def _place(entry: Path, target: Path) -> bool:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(entry, target)
        except OSError:  # another file system, or no hard links there
            target.write_bytes(entry.read_bytes())
    except OSError:
        return False
    return True


def _write_atomic(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except OSError:
        return  # the next run compiles it again


def _drop_older(entry: Path, stem: str) -> None:
    """Remove the entries of earlier versions of ``entry``'s source."""
    try:
        siblings = [p for p in entry.parent.iterdir() if p.name.startswith(stem) and p != entry]
        for path in siblings:
            if len(path.name) == len(entry.name):  # the same name and a 64-digit digest
                path.unlink(missing_ok=True)
    except OSError:
        return
