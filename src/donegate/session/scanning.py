"""The stop's Python writes, scanned for code that reaches into its judge or is fitted to a test.

A blocking finding makes the stop's test runs not count (the code may have shaped its own
verdict); the agent is told file, line and construct. Non-blocking ones (``fitted_to_test =
"warn"``, or a construct a team allowed for a path) are noted for the person.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from donegate.session.settings import Settings
from donegate.workspace import ClassifiedWrite
from donegate.workspace._files import NotRegular, read_capped
from donegate.workspace.patterns import PathFilter

if TYPE_CHECKING:
    from donegate.scan import Finding
    from donegate.session.workspace import Workspace

MAX_TEST_FILE_BYTES = 2 * 1024 * 1024
# A written file larger than this is not scanned (a text parses into several times its size).
MAX_FILE_BYTES = 16 * 1024 * 1024
# A written file that is not Python is read up to this, in case written code runs it as code.
MAX_DATA_BYTES = 1024 * 1024


def scan(space: Workspace, settings: Settings, writes: Sequence[ClassifiedWrite]) -> list[Finding]:
    """Findings over the Python files among ``writes`` (none: nothing Python was written), and
    over the other files written, which the scan reads as code when written code loads text as
    code (a ``.txt`` handed to ``exec``)."""
    written = [w for w in writes if w.write.new_digest]
    python = [w for w in written if w.write.path.endswith(".py")]
    if not python:
        return []
    from donegate.scan import TestLiterals, WrittenFile, parse_scan_table, scan_writes

    # Every Python file of the tree is asked (the tests' literals): one filter, not a glob
    # match per pattern and path (a tenth of a second on a 10,000-file tree).
    is_test = PathFilter(settings.rules.test_globs).matches

    def data() -> list[WrittenFile]:  # read only once written code runs text as code
        others = [w for w in written if not w.write.path.endswith(".py")]
        return [
            WrittenFile(w.write.path, _old(space, w), _text(space, w.write.path, MAX_DATA_BYTES))
            for w in others
        ]

    files = [WrittenFile(w.write.path, _old(space, w), _text(space, w.write.path)) for w in python]
    tests = (p for p in space.current.entries if p.endswith(".py") and is_test(p))
    literals = TestLiterals(t for p in tests if (t := _text(space, p, MAX_TEST_FILE_BYTES)))
    table = parse_scan_table(settings.scan_table)
    return scan_writes(files, literals, table, is_test, entry_points(space), data)


# Code an interpreter loads that no one can read: bytecode without its source (found before a
# .py is missing), an extension module (found before the .py beside it).
_COMPILED = (".pyc", ".pyo", ".so", ".pyd")
# Where an installer puts compiled code: a package installed in the session is the environment's
# change, digested as such, not code written in the tree.
_INSTALLED = ("__pycache__/", "site-packages/", "dist-packages/", "node_modules/")


def compiled(writes: Sequence[ClassifiedWrite]) -> list[Finding]:
    """A blocking finding for each file of compiled code written in the session: a run over
    code that no one can read, the scan included, does not count."""
    from donegate.scan import Finding

    return [
        Finding(
            w.write.path,
            0,
            "compiled-code",
            "compiled code written in this session (bytecode without its source, or an "
            "extension module): the test run would load it, and no one can read what it does",
            blocking=True,
        )
        for w in writes
        if w.write.new_digest
        and w.write.path.endswith(_COMPILED)
        and not any(f"/{place}" in f"/{w.write.path}" for place in _INSTALLED)
    ]


def environment(space: Workspace, writes: Sequence[ClassifiedWrite]) -> list[Finding]:
    """A blocking finding for each write to an interpreter environment that no installer made
    (a dependency edited in place: code the run imports, written by the agent where no scan
    reads it), and for each interpreter of the checks whose environment could not be found (a
    shim that did not answer): a run over an environment donegate cannot see does not count."""
    from donegate.scan import Finding
    from donegate.workspace import interpreter

    synthetic = [w.write for w in writes if interpreter.is_synthetic(w.write.path)]
    edited = interpreter.not_installed(space.root, synthetic)
    found = [
        Finding(
            path,
            0,
            "environment-edit",
            f"{why}: the test run would import it, and no installer put it there",
            blocking=True,
        )
        for path, why in sorted(edited.items())
    ]
    found += [
        Finding(
            program,
            0,
            "environment-unknown",
            f"the checks' interpreter could not be followed to its environment ({why}), so a "
            "change there would go unseen: name the real interpreter in the check's command",
            blocking=True,
        )
        for program, why in space.state.unresolved
    ]
    return found


def hooks_off(space: Workspace, writes: Sequence[ClassifiedWrite]) -> list[Finding]:
    """A blocking finding for each write of a host's settings that keeps donegate's hooks from
    running (judged by what it says: :mod:`donegate.session.hooksoff`): from then on no stop of
    that host would reach donegate at all."""
    from donegate.scan import Finding
    from donegate.session import hooksoff

    found = []
    for w in writes:
        if not hooksoff.watched(w.write.path):
            continue
        before = _old(space, w)
        after = _text(space, w.write.path, MAX_TEST_FILE_BYTES) if w.write.new_digest else None
        if w.write.new_digest and after is None:
            said = ["cannot be read (too large, or not a file), and the host may read it"]
        else:
            said = hooksoff.reasons(w.write.path, before, after)
        for why in said:
            message = f"{why}: no stop of this host would reach donegate again"
            found.append(Finding(w.write.path, 0, "hooks-off", message, blocking=True))
    return found


# The project's files a host reads its sandbox from when it starts (hooks/confinement.py reads
# them at each stop): the host's settings, each with the part of it that configures the sandbox
# (None: the whole file).
SANDBOX_SETTINGS: dict[str, str | None] = {
    ".claude/settings.json": "sandbox",
    ".claude/settings.local.json": "sandbox",
    ".codex/config.toml": None,
    ".gemini/settings.json": None,
}


def sandbox_rewritten(space: Workspace, writes: Sequence[ClassifiedWrite]) -> list[str]:
    """The host sandbox settings the session's writes changed. A host reads them when it
    starts: written during the session, they say nothing of the sandbox the agent ran in, and
    an unconfined agent could write them to be counted as confined."""
    changed = []
    for w in writes:
        if w.write.path not in SANDBOX_SETTINGS:
            continue
        part = SANDBOX_SETTINGS[w.write.path]
        old = _old(space, w) if w.write.old_digest else None
        new = _text(space, w.write.path, MAX_TEST_FILE_BYTES) if w.write.new_digest else None
        if part is None or _part(old, part) != _part(new, part):
            changed.append(w.write.path)
    return changed


def _part(text: str | None, key: str) -> object:
    """The ``key`` member of a JSON object's text (None: no text); the text itself when it is
    not such an object, so that a change to it reads as a change."""
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return text
    return data.get(key) if isinstance(data, dict) else text


def entry_points(space: Workspace) -> tuple[str, ...]:
    """The ``module:function`` of each script the project declares (``[project.scripts]``,
    ``[project.gui-scripts]``): an exit there is a program's, not code fitted to a judge."""
    import tomllib  # only for a stop that scans Python

    try:
        data = read_capped(str(space.root / "pyproject.toml"), MAX_TEST_FILE_BYTES)
        project = tomllib.loads(data.decode("utf-8")).get("project", {}) if data else {}
    except (OSError, NotRegular, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ()
    found: list[str] = []
    for table in ("scripts", "gui-scripts"):
        scripts = project.get(table) if isinstance(project, dict) else None
        if isinstance(scripts, dict):
            found += [v for v in scripts.values() if isinstance(v, str)]
    return tuple(found)


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
