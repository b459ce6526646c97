"""Scan the Python files written in a session; report only what the session added.

A construct that the file already had before the session is the project's, not the agent's: the
scan compares each file's constructs with its previous content's (in the top-level statements
that changed: :mod:`donegate.scan._units`). Constructs are counted by what
they are (``detail``), wherever they sit, so a moved or re-indented line is not new; when a file
has more of one than before, the ones in a class or function that gained them are reported.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Container, Iterable, Sequence

from donegate.record import Record
from donegate.scan._units import changed_part, exact_changes
from donegate.scan.finding import Finding, Occurrence
from donegate.scan.fitted import fitted_occurrences, literals_of, names_of
from donegate.scan.judge import judge_occurrences, may_reach
from donegate.scan.settings import ScanSettings


class WrittenFile(Record):
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

    ``test_literals`` holds the workspace's test files' literals (:class:`TestLiterals` or
    :func:`test_literals_of`); ``is_test`` tells test files (and conftests) from source, given
    a workspace-relative ``/``-separated path.
    """
    session = _Session([f for f in files if f.path.endswith(".py")])
    findings: list[Finding] = []
    for file in session.files:
        if file.new_source is not None:
            test_file = is_test(file.path)
            findings.extend(_scan(file, session, test_literals, settings, test_file))
    return findings


def scan_file(
    file: WrittenFile, test_literals: Container[object], settings: ScanSettings, test_file: bool
) -> list[Finding]:
    """The findings of one written file, as if the session wrote only it."""
    return scan_writes([file], test_literals, settings, lambda _: test_file)


class _Session:
    """The session's written files; their old versions parsed only when a question needs them.

    Most writes add no construct and no condition on a test value: then no old file is parsed.
    """

    def __init__(self, files: list[WrittenFile]) -> None:
        self.files = files
        self._olds: dict[str, ast.Module] = {}
        self._known: set[object] | None = None

    def old(self, file: WrittenFile) -> ast.Module:
        """The file's previous content (empty when new or unparsable)."""
        if file.path not in self._olds:
            self._olds[file.path] = _parse(file.old_source) or ast.Module(body=[], type_ignores=[])
        return self._olds[file.path]

    def had(self, value: object) -> bool:
        """Whether a written file had the literal ``value`` before the session.

        A string is looked for as quoted text, a whole number as a word, in the old sources;
        other values, and strings with quotes or backslashes, in their parsed literals. A
        value spelt otherwise before (through escapes) counts as new: the scan errs towards
        reporting.
        """
        texts = [f.old_source for f in self.files if f.old_source]
        if isinstance(value, str) and not any(c in value for c in "'\"\\\n\r"):
            return any(f"'{value}'" in t or f'"{value}"' in t for t in texts)
        if isinstance(value, int) and not isinstance(value, bool):
            word = re.compile(rf"(?<![\w.]){abs(value)}(?![\w.])")
            return any(word.search(t) for t in texts)
        if self._known is None:
            self._known = set()
            for file in self.files:
                self._known |= literals_of(self.old(file))
        return value in self._known


def _scan(
    file: WrittenFile,
    session: _Session,
    test_literals: Container[object],
    settings: ScanSettings,
    test_file: bool,
) -> list[Finding]:
    try:
        new = ast.parse(file.new_source or "")
    except (SyntaxError, ValueError) as exc:  # ValueError: a NUL byte in the source
        line = getattr(exc, "lineno", None) or 0
        why = f"syntax error: {getattr(exc, 'msg', exc)}"
        return [_finding(file.path, Occurrence("unparsed", line, "", why), settings)]
    added: list[Occurrence] = []
    source, previous = file.new_source or "", file.old_source
    changed = changed_part(new, source, previous)
    if may_reach(source):
        added = judge_occurrences(changed, test_file=test_file)
        if added and previous is not None and may_reach(previous):
            # Imports stay in both parts: a module alias resolves wherever it is used.
            now, before = exact_changes(new, source, session.old(file), previous)
            added = _added(
                judge_occurrences(_with_imports(before, session.old(file)), test_file=test_file),
                judge_occurrences(_with_imports(now, new), test_file=test_file),
            )
    if not test_file and settings.fitted_to_test != "off":
        # The old file's literals are known, so its conditions are never "fitted": the new
        # file's need no diff.
        added += fitted_occurrences(new, test_literals, _Known(session, new), within=changed)
    return [_finding(file.path, o, settings) for o in sorted(added, key=lambda o: o.line)]


class _Known:
    """Literals that are the code's vocabulary: values it had, and its own identifiers.

    Asked only about a distinctive value of a new condition: most files have none.
    """

    def __init__(self, session: _Session, new: ast.Module) -> None:
        self._session = session
        self._new = new
        self._names: set[str] | None = None

    def __contains__(self, value: object) -> bool:
        if self._session.had(value):
            return True
        if self._names is None:
            self._names = names_of(self._new)
        return isinstance(value, str) and value in self._names


def _with_imports(part: ast.Module, whole: ast.Module) -> ast.Module:
    imports = [s for s in whole.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    rest = [s for s in part.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    return ast.Module(body=imports + rest, type_ignores=[])


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
