"""Scan the Python files written in a session; report only what the session added.

A construct that the file already had before the session is the project's, not the agent's: the
scan compares each file's constructs with its previous content's (in the top-level statements
that changed: :mod:`donegate.scan._units`). A construct is what it is (``detail``) where it is
(its class and function): a re-indented line or a function moved within the file is not new,
but a construct moved into another function is, since moving ``sys._getframe`` from a debug
helper into the function under test is how a count of constructs was defeated.

A non-Python file the session wrote is read as Python when a written ``.py`` file runs text or
a file as code (``exec(open("helper.txt").read())``): code kept as data is scanned as code.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Collection, Container, Iterable, Iterator, Sequence

from donegate.record import Record
from donegate.scan._fold import constant_bindings
from donegate.scan._peeks import peeks
from donegate.scan._stand_ins import stand_ins
from donegate.scan._units import changed_part, exact_changes
from donegate.scan.finding import Finding, Occurrence
from donegate.scan.fitted import (
    TestLiterals,
    fitted_occurrences,
    literals_of,
    names_of,
    prose_of,
)
from donegate.scan.judge import judge_occurrences, may_reach
from donegate.scan.settings import ScanSettings

# Constructs of code fitted to the tests: ``[scan] fitted_to_test`` decides whether they block.
FITTED = frozenset({"fitted-to-test", "test-table", "call-counter"})


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
    entry_points: Collection[str] = (),
    data: Callable[[], Iterable[WrittenFile]] = tuple,
) -> list[Finding]:
    """The findings of the session's new constructs in the ``.py`` files of ``files`` (and in
    its other files, and those ``data`` gives, when written code loads text as code).

    ``test_literals`` holds the workspace's test files' literals (:class:`TestLiterals`, which
    also knows the tests' cases, or :func:`test_literals_of`); ``is_test`` tells test files
    (and conftests) from source, given a workspace-relative ``/``-separated path;
    ``entry_points`` names the functions of ``[project.scripts]`` (``main`` always counts);
    ``data`` reads the session's other written files, only once written code runs text.
    """
    session = _Session([f for f in files if f.path.endswith(".py")])
    session.entry_points = frozenset({"main", *(e.rpartition(":")[2] for e in entry_points)})
    findings: list[Finding] = []
    for file in session.files:
        if file.new_source is not None:
            test_file = is_test(file.path)
            findings.extend(_scan(file, session, test_literals, settings, test_file))
    if any(f.construct == "dynamic-code" for f in findings):
        for file in _code_as_data([*files, *data()]):
            findings.extend(_scan(file, session, test_literals, settings, is_test(file.path)))
    return findings


def _code_as_data(files: Sequence[WrittenFile]) -> Iterator[WrittenFile]:
    # Only files that parse as Python: a data file that does not is no code to load.
    for file in files:
        if not file.path.endswith(".py") and file.new_source and _parse(file.new_source):
            yield file


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
        self.entry_points: frozenset[str] = frozenset({"main"})
        self._olds: dict[str, ast.Module] = {}
        self._known: set[object] | None = None

    def old(self, file: WrittenFile) -> ast.Module:
        """The file's previous content (empty when new or unparsable)."""
        if file.path not in self._olds:
            self._olds[file.path] = _parse(file.old_source) or ast.Module(body=[], type_ignores=[])
        return self._olds[file.path]

    def had(self, value: object) -> bool:
        """Whether a written file had the literal ``value`` in its code before the session.

        A string is looked for as quoted text, a whole number as a word, in the old sources
        (most values are not there: then no old file is parsed); a value found so, and other
        values, are looked up in the old files' parsed literals, docstrings left out. A value
        spelt otherwise before (through escapes) counts as new: the scan errs towards reporting.
        """
        texts = [f.old_source for f in self.files if f.old_source]
        if isinstance(value, str) and not any(c in value for c in "'\"\\\n\r"):
            if not any(f"'{value}'" in t or f'"{value}"' in t for t in texts):
                return False
        elif isinstance(value, int) and not isinstance(value, bool):
            word = re.compile(rf"(?<![\w.]){abs(value)}(?![\w.])")
            if not any(word.search(t) for t in texts):
                return False
        if self._known is None:
            self._known = set()
            for file in self.files:
                self._known |= literals_of(self.old(file), docstrings=False)
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
    entry = file.path.rpartition("/")[2] == "__main__.py"

    def judge(part: ast.Module, whole: ast.Module) -> list[Occurrence]:
        names = constant_bindings(whole.body)
        return judge_occurrences(
            part,
            test_file=test_file,
            names=names,
            entry_file=entry,
            entry_points=session.entry_points,
        )

    if may_reach(source):
        added = judge(changed, new)
        if added and previous is not None and may_reach(previous):
            # Imports stay in both parts: a module alias resolves wherever it is used.
            old = session.old(file)
            now, before = exact_changes(new, source, old, previous)
            added = _added(
                judge(_with_imports(before, old), old), judge(_with_imports(now, new), new)
            )
    if not test_file:
        added += _complements(file, session, new, changed, test_literals)
    if not test_file and settings.fitted_to_test != "off":
        added += _fitted(file, session, new, changed, test_literals)
    unique = {(o.construct, o.line): o for o in sorted(added, key=lambda o: o.line)}
    return [_finding(file.path, o, settings) for o in unique.values()]


def _complements(
    file: WrittenFile,
    session: _Session,
    new: ast.Module,
    changed: ast.Module,
    test_literals: Container[object],
) -> list[Occurrence]:
    """Stand-ins and peeks (:mod:`~donegate.scan._stand_ins`, :mod:`~donegate.scan._peeks`):
    what reaches the judge in spellings its name rules do not list."""

    def tested(name: str) -> bool:
        return isinstance(test_literals, TestLiterals) and bool(test_literals.cases(name))

    def read(part: ast.Module, whole: ast.Module) -> list[Occurrence]:
        return stand_ins(part, tested) + peeks(part, constant_bindings(whole.body))

    found = read(changed, new)
    if not found or file.old_source is None:
        return found
    old = session.old(file)
    return _added(read(old, old), read(new, new))


def _fitted(
    file: WrittenFile,
    session: _Session,
    new: ast.Module,
    changed: ast.Module,
    test_literals: Container[object],
) -> list[Occurrence]:
    # The old file's literals are known, so its conditions on a distinctive value are never
    # "fitted"; its counters, tables and test-case answers are, and are left out by diff.
    prose = _Prose(session, new)
    found = fitted_occurrences(
        new, test_literals, _Known(session, new), within=changed, prose=prose
    )
    if not found or file.old_source is None:
        return found
    old = session.old(file)
    before = fitted_occurrences(old, test_literals, _Known(session, old), prose=prose)
    return _added(before, found)


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


class _Prose:
    """What the docstrings of the session's files quote in their prose, before and after:
    the task's vocabulary (:func:`~donegate.scan.fitted.prose_of`). Read only when asked."""

    def __init__(self, session: _Session, new: ast.Module) -> None:
        self._session = session
        self._new = new
        self._values: set[object] | None = None

    def __contains__(self, value: object) -> bool:
        if self._values is None:
            self._values = prose_of(self._new)
            for file in self._session.files:
                self._values |= prose_of(self._session.old(file))
        return value in self._values


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
    """The occurrences of ``new`` beyond those of ``old`` (see the module docstring): counted
    by what they are and where (class and function), the last lines of a place named first
    (new code is appended more often than prepended)."""
    before = Counter((o.construct, o.detail, o.scope) for o in old)
    after = Counter((o.construct, o.detail, o.scope) for o in new)
    added: list[Occurrence] = []
    for key, count in after.items():
        surplus = count - before[key]
        if surplus > 0:
            candidates = [o for o in new if (o.construct, o.detail, o.scope) == key]
            added.extend(sorted(candidates, key=lambda o: o.line)[-surplus:])
    return added


def _finding(path: str, occurrence: Occurrence, settings: ScanSettings) -> Finding:
    rule = settings.allowed_by(occurrence.construct, path)
    blocking = rule is None and not (
        occurrence.construct in FITTED and settings.fitted_to_test != "block"
    )
    return Finding(
        path=path,
        line=occurrence.line,
        construct=occurrence.construct,
        message=occurrence.sentence(),
        blocking=blocking,
        allowed=None if rule is None else rule.reason,
    )
