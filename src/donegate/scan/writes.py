"""Scan the Python files written in a session; report only what the session added.

A construct that the file already had before the session is the project's, not the agent's: the
scan compares each file's constructs with its previous content's. Constructs are counted by what
they are (``detail``), wherever they sit, so a moved or re-indented line is not new; when a file
has more of one than before, the ones in a class or function that gained them are reported.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Container, Iterable, Sequence
from typing import NamedTuple

from donegate.scan.finding import Finding, Occurrence
from donegate.scan.fitted import fitted_occurrences, literals_of
from donegate.scan.judge import judge_occurrences
from donegate.scan.settings import ScanSettings


class WrittenFile(NamedTuple):
    """A file the session wrote: workspace-relative ``path``, its text before and after.

    ``old_source`` is None for a file the session created; ``new_source`` None for one it
    deleted (nothing to scan).
    """

    path: str
    old_source: str | None
    new_source: str | None


def scan_writes(
    files: Sequence[WrittenFile],
    test_literals: Container[object],
    settings: ScanSettings,
    is_test: Callable[[str], bool],
) -> list[Finding]:
    """The findings of the session's new constructs in the ``.py`` files of ``files``.

    ``test_literals`` comes from :func:`~donegate.scan.fitted.test_literals_of` over the
    workspace's test files; ``is_test`` tells test files (and conftests) from source.
    """
    findings: list[Finding] = []
    for file in files:
        if file.path.endswith(".py") and file.new_source is not None:
            findings.extend(scan_file(file, test_literals, settings, is_test(file.path)))
    return findings


def scan_file(
    file: WrittenFile, test_literals: Container[object], settings: ScanSettings, test_file: bool
) -> list[Finding]:
    """The findings of one written file (see :func:`scan_writes`)."""
    new = _parse(file.new_source)
    if new is None:
        return [_finding(file.path, Occurrence("unparsed", 0, "", "syntax error"), settings)]
    old = _parse(file.old_source) or ast.Module(body=[], type_ignores=[])
    added = _added(
        judge_occurrences(old, test_file=test_file), judge_occurrences(new, test_file=test_file)
    )
    if not test_file and settings.fitted_to_test != "off":
        # Literals the file had before are its vocabulary; the old file's own conditions are
        # therefore never "fitted", and the new file's need no diff.
        added += fitted_occurrences(new, test_literals, literals_of(old))
    return [_finding(file.path, o, settings) for o in sorted(added, key=lambda o: o.line)]


def _parse(source: str | None) -> ast.Module | None:
    if source is None:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):  # ValueError: a NUL byte in the source
        return None


def _added(old: Iterable[Occurrence], new: list[Occurrence]) -> list[Occurrence]:
    """The occurrences of ``new`` beyond those of ``old`` (see the module docstring)."""
    before = Counter((o.construct, o.detail) for o in old)
    before_in_scope = Counter((o.construct, o.detail, o.scope) for o in old)
    after = Counter((o.construct, o.detail) for o in new)
    after_in_scope = Counter((o.construct, o.detail, o.scope) for o in new)
    added: list[Occurrence] = []
    for key, count in after.items():
        surplus = count - before[key]
        if surplus <= 0:
            continue
        candidates = [o for o in new if (o.construct, o.detail) == key]
        # Prefer the scopes that gained occurrences, then the last lines (new code is appended
        # more often than prepended); the choice only affects which line is named.
        candidates.sort(
            key=lambda o: (
                after_in_scope[(*key, o.scope)] > before_in_scope[(*key, o.scope)],
                o.line,
            ),
            reverse=True,
        )
        added.extend(candidates[:surplus])
    return added


def _finding(path: str, occurrence: Occurrence, settings: ScanSettings) -> Finding:
    rule = settings.allowed_by(occurrence.construct, path)
    blocking = rule is None and not (
        occurrence.construct == "fitted-to-test" and settings.fitted_to_test != "block"
    )
    return Finding(
        path=path,
        line=occurrence.line,
        construct=occurrence.construct,
        message=occurrence.sentence(),
        blocking=blocking,
        allowed=None if rule is None else rule.reason,
    )
