"""The stop's Python writes, scanned for code that reaches into its judge or is fitted to a test.

A blocking finding makes the stop's test runs not count (the code may have shaped its own
verdict); the agent is told file, line and construct. Non-blocking ones (``fitted_to_test =
"warn"``, or a construct a team allowed for a path) are noted for the person.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from donegate.session.settings import Settings
from donegate.workspace import ClassifiedWrite
from donegate.workspace._files import NotRegular, read_capped
from donegate.workspace.patterns import matches_any

if TYPE_CHECKING:
    from donegate.scan import Finding
    from donegate.session.workspace import Workspace

MAX_TEST_FILE_BYTES = 2 * 1024 * 1024
# A written file larger than this is not scanned (a text parses into several times its size).
MAX_FILE_BYTES = 16 * 1024 * 1024


def scan(space: Workspace, settings: Settings, writes: Sequence[ClassifiedWrite]) -> list[Finding]:
    """Findings over the Python files among ``writes`` (none: nothing Python was written)."""
    python = [w for w in writes if w.write.path.endswith(".py") and w.write.new_digest]
    if not python:
        return []
    from donegate.scan import TestLiterals, WrittenFile, parse_scan_table, scan_writes

    def is_test(path: str) -> bool:
        return matches_any(path, settings.rules.test_globs)

    files = [WrittenFile(w.write.path, _old(space, w), _text(space, w.write.path)) for w in python]
    tests = (p for p in space.current.entries if p.endswith(".py") and is_test(p))
    literals = TestLiterals(t for p in tests if (t := _text(space, p, MAX_TEST_FILE_BYTES)))
    return scan_writes(files, literals, parse_scan_table(settings.scan_table), is_test)


def _old(space: Workspace, w: ClassifiedWrite) -> str | None:
    # A renamed file's old text is the moved one: what it held before is not new.
    if w.write.old_digest is None:
        return None
    return space.state.blobs.text(w.write.old_digest)


def _text(space: Workspace, path: str, limit: int = MAX_FILE_BYTES) -> str | None:
    # Never a FIFO or a device (opening one can block), never more than ``limit`` bytes; a
    # symlink's target is what Python would import, so it is what is scanned.
    try:
        data = read_capped(os.path.realpath(space.root / path), limit)
    except (OSError, NotRegular):
        return None
    return None if data is None else data.decode("utf-8", "replace")
