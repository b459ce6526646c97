"""Fitted to the test: a new condition in source code that compares with a test's literal.

``if zip_code == " 94107-1234 ": return "94107"`` passes the test that feeds that string and fails
every other input. The rule: a condition (``if``, ``elif``, ``while``, a ternary, a ``match``
case, a comprehension's filter, a returned comparison) compares with ``==``, ``!=``, ``in``,
``is`` or ``.startswith``/``.endswith`` against a literal that

1. is *distinctive* (see :func:`distinctive`): small numbers, one-character strings and the
   like occur in any code and any test by chance;
2. occurs in the workspace's test files (an input or an expected value); and
3. is not the code's own vocabulary: it occurs nowhere in the session's written files before
   the session (code moved between files keeps its values), and it is not a name of the new
   code (``if name == "LazyFile"`` next to ``class LazyFile`` dispatches on a name).

Comparisons with the platform and the environment (``sys.platform``, ``os.name``,
``os.environ``, ``__name__``...) are not conditions on the input and are skipped.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Container, Iterable

from donegate.scan._scope import ScopedVisitor, dotted
from donegate.scan.finding import Occurrence

# Integers within this distance of zero are counts, indices, lengths, exit codes and flags:
# they coincide between code and tests by chance. Measured on real histories (see
# benchmarks/scan_false_hits.py), a bound of 10 leaves HTTP statuses and ports, which honest
# code compares with as often as tests use them, to rule 3.
_SMALL_INT = 10
# Strings shorter than this after stripping are separators, flags and single letters.
_SHORT_TEXT = 2
_COMPARISONS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)
_MATCHERS = frozenset({"startswith", "endswith"})
_COLLECTIONS = (ast.Tuple, ast.List, ast.Set)
_ENVIRONMENT = frozenset(
    {
        "__name__",
        "sys.platform",
        "sys.version_info",
        "sys.byteorder",
        "sys.implementation.name",
        "os.name",
        "platform.system",
        "platform.python_implementation",
        "platform.machine",
        "os.environ",
        "os.environ.get",
        "os.getenv",
    }
)


def distinctive(value: object) -> bool:
    """Whether a literal is specific enough that matching a test's copy is not chance."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int):
        return abs(value) >= _SMALL_INT
    if isinstance(value, float):
        return abs(value) >= _SMALL_INT or (not value.is_integer() and value != 0.5)
    if isinstance(value, str):
        # Separators and sigils ("--", "//", "::") are syntax, not data.
        return len(value.strip()) >= _SHORT_TEXT and any(c.isalnum() for c in value)
    if isinstance(value, bytes):
        return len(value.strip()) >= _SHORT_TEXT and any(chr(c).isalnum() for c in value)
    return False


def literals_of(tree: ast.AST) -> set[object]:
    """The distinctive literals of ``tree`` (docstrings included: they are vocabulary too)."""
    found: set[object] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and distinctive(node.value):
            found.update(_keys(node.value))
    return found


def names_of(tree: ast.AST) -> set[str]:
    """The identifiers of ``tree``: names, attributes, parameters, keywords, definitions."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.arg, ast.keyword)) and node.arg:
            found.add(node.arg)
        elif isinstance(node, ast.alias):
            found.update((node.asname or node.name).split("."))
    return found


def test_literals_of(sources: Iterable[str]) -> frozenset[object]:
    """The distinctive literals of test files' sources; one that does not parse adds none."""
    found: set[object] = set()
    for source in sources:
        try:
            found |= literals_of(ast.parse(source))
        except (SyntaxError, ValueError):
            continue
    return frozenset(found)


class TestLiterals:
    """The test files' distinctive literals, parsing only the files that may hold a value asked.

    Parsing a whole test suite costs a stop hook hundreds of milliseconds, while a stop asks
    about a handful of values. A file is parsed when its text contains the value's longest run
    of letters and digits (a number's decimal digits); values without such a run, and floats,
    parse every file. A test that spells the value only through escapes, implicit concatenation
    that splits the run, or another base (``0x3039``) is not matched: use
    :func:`test_literals_of` where that matters more than time.
    """

    __test__ = False  # not a test class, whatever pytest thinks of its name

    def __init__(self, sources: Iterable[str]) -> None:
        self._pending = list(sources)
        self._found: set[object] = set()

    def __contains__(self, value: object) -> bool:
        if value in self._found:
            return True
        needle = _needle(value)
        unread: list[str] = []
        for text in self._pending:
            if needle is None or needle in text:
                self._found |= test_literals_of([text])
            else:
                unread.append(text)
        self._pending = unread
        return value in self._found


def _needle(value: object) -> str | None:
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if isinstance(value, str):
        runs = re.findall(r"[^\W_]+", value)
        return max(runs, key=len) if runs else None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(abs(value))
    return None


def _keys(value: object) -> tuple[object, ...]:
    # A test's " 94107-1234 " is also matched by code that strips its input first.
    if isinstance(value, (str, bytes)) and value.strip() != value and distinctive(value.strip()):
        return (value, value.strip())
    return (value,)


def fitted_occurrences(
    tree: ast.Module,
    test_literals: Container[object],
    known: Container[object],
    *,
    within: ast.Module | None = None,
) -> list[Occurrence]:
    """Conditions of ``tree`` comparing with a literal in ``test_literals`` but not in ``known``.

    ``within``: only the conditions of these statements of ``tree`` (the changed ones).
    """
    visitor = _Conditions(test_literals, known, _module_constants(tree))
    visitor.visit(tree if within is None else within)
    return visitor.found


def _module_constants(tree: ast.Module) -> dict[str, ast.expr]:
    # A literal (or a tuple, list or set of them) bound once at module level is the literal
    # itself under another name: ``if zip_code in SPECIAL_CASES``.
    bound: dict[str, ast.expr] = {}
    seen: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                if target.id in seen:
                    bound.pop(target.id, None)
                elif isinstance(statement.value, (ast.Constant, *_COLLECTIONS)):
                    bound[target.id] = statement.value
                seen.add(target.id)
    return bound


class _Conditions(ScopedVisitor):
    def __init__(
        self,
        test_literals: Container[object],
        known: Container[object],
        names: dict[str, ast.expr],
    ) -> None:
        super().__init__()
        self.test_literals = test_literals
        self.known = known
        self.names = names

    def visit_If(self, node: ast.If) -> None:
        self._condition(node.test)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._condition(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._condition(node.test)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        for test in node.ifs:
            self._condition(test)
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if isinstance(node.value, (ast.Compare, ast.BoolOp, ast.UnaryOp)):
            self._condition(node.value)
        self.generic_visit(node)

    def visit_match_case(self, node: ast.match_case) -> None:
        for pattern in ast.walk(node.pattern):
            if isinstance(pattern, ast.MatchValue):
                self._check(pattern, [pattern.value])
        self.generic_visit(node)

    def _condition(self, test: ast.expr) -> None:
        for node in ast.walk(test):
            if isinstance(node, ast.Compare) and _compares(node):
                self._check(node, [node.left, *node.comparators])
            elif isinstance(node, ast.Call) and _matcher(node):
                self._check(node, [node.func.value, *node.args])  # type: ignore[attr-defined]

    def _check(self, node: ast.AST, operands: list[ast.expr]) -> None:
        if any(_environment(o) for o in operands):
            return
        for value in self._literals(operands):
            if not distinctive(value) or value in self.known:
                continue
            if any(k in self.test_literals for k in _keys(value)):
                self.emit("fitted-to-test", node, f"{ast.unparse(node)} (test value {value!r})")
                return

    def _literals(self, operands: list[ast.expr]) -> Iterable[object]:
        for operand in map(self._bound, operands):
            elements = operand.elts if isinstance(operand, _COLLECTIONS) else [operand]
            for element in map(self._bound, elements):
                if isinstance(element, ast.Constant):
                    yield element.value

    def _bound(self, node: ast.expr) -> ast.expr:
        return self.names.get(node.id, node) if isinstance(node, ast.Name) else node


def _compares(node: ast.Compare) -> bool:
    return any(isinstance(op, _COMPARISONS) for op in node.ops)


def _matcher(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Attribute) and node.func.attr in _MATCHERS


def _environment(node: ast.expr) -> bool:
    while isinstance(node, (ast.Subscript, ast.Call)):
        node = node.value if isinstance(node, ast.Subscript) else node.func
    return dotted(node) in _ENVIRONMENT
