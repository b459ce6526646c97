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
from collections.abc import Callable, Container, Iterable, Iterator

from donegate.scan._cases import ANY_FUNCTION, Case, cases_of
from donegate.scan._counter import counters
from donegate.scan._fold import UNKNOWN, constant_bindings, fold
from donegate.scan._scope import ScopedVisitor, dotted
from donegate.scan.finding import Occurrence

# Integers within this distance of zero are counts, indices, lengths, exit codes and flags:
# they coincide between code and tests by chance. Measured on real histories (see
# benchmarks/scan_false_hits.py), a bound of 10 leaves HTTP statuses and ports, which honest
# code compares with as often as tests use them, to rule 3.
_SMALL_INT = 10
# Strings shorter than this after stripping are separators, flags and single letters.
_SHORT_TEXT = 2
# A test case on inputs no larger than this is a base case (fact(0) == 1, fib(2) == 1) that
# honest code writes as a condition too; from 3 on, small numbers count in a test case's pair.
_TRIVIAL_INT = 2
_HASHES = frozenset({"hash", "zlib.crc32", "zlib.adler32", "binascii.crc32"})
_DIGESTS = ("crc32", "adler32")
_COMPARISONS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)
_MATCHERS = frozenset({"startswith", "endswith"})
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


def literals_of(tree: ast.AST, *, docstrings: bool = True) -> set[object]:
    """The distinctive literals of ``tree``; ``docstrings=False`` leaves out those of docstrings
    (prose the person wrote is not the code's vocabulary: a docstring that shows the input a
    test feeds does not make a condition on it the code's own)."""
    skip = set() if docstrings else {id(d) for d in _docstrings(tree)}
    found: set[object] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and distinctive(node.value) and id(node) not in skip:
            found.update(_keys(node.value))
    return found


def _docstrings(tree: ast.AST) -> Iterator[ast.Constant]:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        value = first.value if isinstance(first, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            yield value


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
        self._sources = list(sources)
        self._unread = set(range(len(self._sources)))
        self._found: set[object] = set()
        self._cases: dict[int, list[Case]] = {}

    def cases(self, callee: str) -> list[Case]:
        """The test cases that call ``callee``, and the parametrize rows of the files that do.

        Only files whose text has ``callee(`` are parsed, each once.
        """
        needle = f"{callee}("
        found: list[Case] = []
        for index, text in enumerate(self._sources):
            if needle in text:
                self._read(index)
                found += [c for c in self._cases[index] if c.callee in (callee, ANY_FUNCTION)]
        return found

    def __contains__(self, value: object) -> bool:
        if value in self._found:
            return True
        needle = _needle(value)
        for index in sorted(self._unread):
            if needle is None or needle in self._sources[index]:
                self._read(index)
        return value in self._found

    def _read(self, index: int) -> None:
        # One parse gives a file's literals and its cases, whichever question came first.
        if index not in self._unread:
            return
        self._unread.discard(index)
        try:
            tree = ast.parse(self._sources[index])
        except (SyntaxError, ValueError, RecursionError):
            self._cases[index] = []
            return
        self._found |= literals_of(tree)
        self._cases[index] = cases_of(tree)


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
    """Code of ``tree`` fitted to the tests: conditions on a literal in ``test_literals`` but
    not in ``known``, and, when ``test_literals`` is a :class:`TestLiterals` (it knows the
    tests' cases), special cases, tables and call counters that answer a test's call.

    ``within``: only the statements of ``tree`` in this part (the changed ones).
    """
    cases = test_literals.cases if isinstance(test_literals, TestLiterals) else _no_cases
    visitor = _Conditions(test_literals, known, tree, cases)
    visitor.visit(tree if within is None else within)
    return visitor.found


def _no_cases(callee: str) -> list[Case]:
    return []


class _Conditions(ScopedVisitor):
    def __init__(
        self,
        test_literals: Container[object],
        known: Container[object],
        module: ast.Module,
        cases: Callable[[str], list[Case]],
    ) -> None:
        super().__init__()
        self.test_literals = test_literals
        self.known = known
        self.module = module
        self.names = constant_bindings(module.body)
        self.cases = cases
        self.function: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        self.params: set[str] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        saved = (self.function, self.params, self.names)
        self.function = node
        self.params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        local = {k: v for k, v in self.names.items() if k not in self.params}
        self.names = {**local, **constant_bindings(node.body)}
        self._scope.append(node.name)
        try:
            self.generic_visit(node)
            for where, detail in counters(node, self.module):
                self.emit("call-counter", where, detail)
            self._tables(node)
        finally:
            self._scope.pop()
            self.function, self.params, self.names = saved

    def visit_If(self, node: ast.If) -> None:
        self._condition(node.test)
        self._special_case(node, node.test, node.body)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._condition(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._condition(node.test)
        self._special_case(node, node.test, node.body)
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
        values = [p.value for p in ast.walk(node.pattern) if isinstance(p, ast.MatchValue)]
        for pattern in ast.walk(node.pattern):
            if isinstance(pattern, ast.MatchValue):
                self._check(pattern, [pattern.value])
        if values and self.function is not None:
            keys = [self._value(v) for v in values]
            self._answered(node.pattern, ast.unparse(node.pattern), keys, _returned(node.body))
        self.generic_visit(node)

    def _condition(self, test: ast.expr) -> None:
        for node in ast.walk(test):
            if isinstance(node, ast.Compare) and _compares(node):
                self._check(node, [node.left, *node.comparators])
                self._hashed(node)
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

    def _hashed(self, node: ast.Compare) -> None:
        # hashlib.md5(x.encode()).hexdigest() == "5d41...": a test input, spelt so that no
        # literal of the test appears in the code.
        operands = [node.left, *node.comparators]
        hashed = [o for o in operands if _hash_of_input(o, self.params)]
        constant = [o for o in operands if self._value(o) is not UNKNOWN]
        if hashed and constant:
            self.emit("fitted-to-test", node, f"{ast.unparse(node)} (a hash of an input)")

    def _special_case(
        self, node: ast.AST, test: ast.expr, branch: list[ast.stmt] | ast.expr
    ) -> None:
        """A condition on the function's inputs whose branch returns a test case's answer."""
        if self.function is None:
            return
        keys: list[object] = []
        for compare in ast.walk(test):
            if isinstance(compare, ast.Compare) and _reads_any(compare, self.params):
                if any(_environment(o) for o in [compare.left, *compare.comparators]):
                    return
                keys += [self._value(o) for o in [compare.left, *compare.comparators]]
        if any(k is not UNKNOWN for k in keys):
            results = [branch] if isinstance(branch, ast.expr) else _returned(branch)
            self._answered(node, ast.unparse(test), keys, results)

    def _answered(
        self, node: ast.AST, shown: str, keys: list[object], results: list[ast.expr]
    ) -> None:
        assert self.function is not None
        values = [k for k in keys if k is not UNKNOWN]
        answers = [a for a in (self._value(r) for r in results) if a is not UNKNOWN]
        if not values or not answers:
            return  # most branches return what they compute: no test file is read for them
        cases = self._cases_of(self.function.name)
        tested = _typed(i for c in cases for i in c.inputs)
        required = [v for v in values if not isinstance(v, tuple)]
        options = [v for v in values if isinstance(v, tuple)]
        # A set of alternatives is the tests' inputs when most of it is: ("yes", "y", "on",
        # "1", ...) with one of them tested is the code's vocabulary.
        if any(2 * len(_typed(o) & tested) < len(_typed(o)) for o in options):
            return
        for case in cases:
            inputs = _typed(case.inputs)
            if not set(_typed(required)) <= inputs:
                continue
            if any(not set(_typed(o)) & inputs for o in options):
                continue
            matched = [*required, *(e for o in options for e in o if _typed((e,)) & inputs)]
            if any(_key(a) == _key(case.expected) for a in answers) and _notable(matched):
                self.emit("fitted-to-test", node, f"{shown} answers the test case {case}")
                return

    def _tables(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A dict in (or named by) the function whose entries are the test's calls."""
        tables = []
        for table in _dicts(function, self.names):
            pairs = zip(table.keys, table.values, strict=True)
            entries = [(self._value(k), self._value(v)) for k, v in pairs if k]
            if any(UNKNOWN not in entry for entry in entries):
                tables.append((table, entries))
        cases = self._cases_of(function.name) if tables else []
        if not cases:
            return
        answers = {_key(c.inputs[0] if len(c.inputs) == 1 else c.inputs): c for c in cases}
        for table, entries in tables:
            hits = [
                answers[_key(k)]
                for k, v in entries
                if _key(k) in answers and _key(answers[_key(k)].expected) == _key(v)
            ]
            notable = [h for h in hits if _notable([*h.inputs])]
            if notable and 2 * len(hits) >= len(entries):
                where = f"{len(hits)} of {len(entries)} entries"
                self.emit(
                    "test-table", table, f"{function.name}: {where} are test cases ({notable[0]})"
                )

    def _cases_of(self, callee: str) -> list[Case]:
        return self.cases(callee)

    def _value(self, node: ast.expr) -> object:
        return fold(node, self.names)

    def _literals(self, operands: list[ast.expr]) -> Iterable[object]:
        for operand in operands:
            value = self._value(operand)
            for element in value if isinstance(value, tuple) else (value,):
                if element is not UNKNOWN:
                    yield element


def _returned(body: list[ast.stmt]) -> list[ast.expr]:
    """The values a block returns (not those of functions defined in it)."""
    found: list[ast.expr] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            found.append(node.value)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return found


def _dicts(
    function: ast.FunctionDef | ast.AsyncFunctionDef, names: dict[str, ast.expr]
) -> Iterator[ast.Dict]:
    for node in ast.walk(function):
        if isinstance(node, ast.Dict):
            yield node
        elif isinstance(node, ast.Name) and isinstance(names.get(node.id), ast.Dict):
            yield names[node.id]  # type: ignore[misc]


def _typed(values: Iterable[object]) -> set[object]:
    return {_key(v) for v in values}


def _key(value: object) -> object:
    # 1, 1.0 and True are equal in Python but not the same test case.
    try:
        hash(value)
    except TypeError:
        return (type(value).__name__, repr(value))
    return (type(value).__name__, value)


def _notable(values: list[object]) -> bool:
    """Whether some matched input is more than a base case's 0, 1, 2, a flag or a letter."""
    for value in values:
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int) and abs(value) <= _TRIVIAL_INT:
            continue
        if isinstance(value, float) and value in (0.0, 1.0, -1.0, 0.5, 2.0):
            continue
        if isinstance(value, (str, bytes)) and len(value.strip()) < _SHORT_TEXT:
            continue
        return True
    return False


def _reads_any(node: ast.AST, params: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in params for n in ast.walk(node))


def _hash_of_input(node: ast.expr, params: set[str]) -> bool:
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            name = dotted(call.func) or ""
            head = name.split(".")[0]
            hashing = head == "hashlib" or name in _HASHES or name.endswith(_DIGESTS)
            if hashing and _reads_any(call, params):
                return True
    return False


def _compares(node: ast.Compare) -> bool:
    return any(isinstance(op, _COMPARISONS) for op in node.ops)


def _matcher(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Attribute) and node.func.attr in _MATCHERS


def _environment(node: ast.expr) -> bool:
    while isinstance(node, (ast.Subscript, ast.Call)):
        node = node.value if isinstance(node, ast.Subscript) else node.func
    return dotted(node) in _ENVIRONMENT
