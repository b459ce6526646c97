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
``os.environ``, ``__name__``...) are not conditions on the input and are skipped. A literal the
person's specification quotes in its prose (``"++X" and "X++" add one``) is the task's
vocabulary too, unless it is a whole input of a test (``"94107-1234"`` shown as an example).

Where the tests' cases are known (:class:`TestLiterals`), code is also read by what it does for
each case (:mod:`donegate.scan._answers`: pins, tables and traps, whatever their spelling), by
whether it returns a case's expected value behind a condition that does not read its inputs
(a flag set at import, the answer it computed compared with the true one), and by whether it
counts its calls (:mod:`donegate.scan._counter`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Container, Iterable, Iterator
from typing import Any

from donegate.scan._answers import Answers, Context, contiguous, notable, specified
from donegate.scan._cases import ANY_FUNCTION, Case, cases_of, frozen
from donegate.scan._counter import counters
from donegate.scan._evaluate import Raised, Unknown, evaluate
from donegate.scan._fold import UNKNOWN, constant_bindings, distinctive, fold
from donegate.scan._scope import Function, ScopedVisitor, dotted
from donegate.scan.finding import Occurrence

__all__ = [
    "TestLiterals",
    "distinctive",
    "fitted_occurrences",
    "literals_of",
    "names_of",
    "prose_of",
    "test_literals_of",
]

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


def literals_of(tree: ast.AST, *, docstrings: bool = True) -> set[object]:
    """The distinctive literals of ``tree``; ``docstrings=False`` leaves out those of docstrings
    (prose the person wrote is not the code's vocabulary: a docstring that shows the input a
    test feeds does not make a condition on it the code's own)."""
    skip = set() if docstrings else {id(d) for d in _docstrings(tree)}
    found: set[object] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and distinctive(node.value) and id(node) not in skip:
            found.update(_keys(node.value))
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)) and node.elts:
            value = _constants(node)  # a whole input such as [4, -1, 2, 1]
            if value is not None and distinctive(value):
                found.add(value)
    return found


def _constants(node: ast.expr, depth: int = 0) -> tuple[object, ...] | None:
    """A display of constants (nested two deep at most) as a tuple, else None."""
    items: list[object] = []
    for element in node.elts:  # type: ignore[attr-defined]
        if isinstance(element, ast.Constant):
            items.append(element.value)
        elif isinstance(element, ast.UnaryOp) and isinstance(element.operand, ast.Constant):
            items.append(fold(element))
        elif isinstance(element, (ast.List, ast.Tuple)) and depth < 2:
            inner = _constants(element, depth + 1)
            if inner is None:
                return None
            items.append(inner)
        else:
            return None
    return None if UNKNOWN in items else tuple(items)


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
        self._asked: dict[str, list[Case]] = {}

    def cases(self, callee: str) -> list[Case]:
        """The test cases that call ``callee``, and the parametrize rows of the files that do.

        Only files whose text calls ``callee`` or hands it on (``check(fib)``) are parsed, each
        once.
        """
        if callee in self._asked:
            return self._asked[callee]
        needle = re.compile(rf"(?<!\w){re.escape(callee)}\s*[(),]")
        found: list[Case] = []
        for index, text in enumerate(self._sources):
            if callee in text and needle.search(text):
                self._read(index)
                found += [c for c in self._cases[index] if c.callee in (callee, ANY_FUNCTION)]
        self._asked[callee] = found
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
    if isinstance(value, tuple):
        runs = [n for n in map(_needle, value) if n is not None]
        return max(runs, key=len) if runs else None
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
    prose: Container[object] = (),
) -> list[Occurrence]:
    """Code of ``tree`` fitted to the tests: conditions on a literal in ``test_literals`` but
    not in ``known``, and, when ``test_literals`` is a :class:`TestLiterals` (it knows the
    tests' cases), special cases, tables, traps and call counters that answer a test's call.

    ``within``: only the statements of ``tree`` in this part (the changed ones). ``prose``: the
    values the specification's prose quotes (see :func:`prose_of`).
    """
    cases = test_literals.cases if isinstance(test_literals, TestLiterals) else _no_cases
    visitor = _Conditions(test_literals, known, tree, cases)
    visitor.prose = prose
    visitor.visit(tree if within is None else within)
    return visitor.found


def prose_of(tree: ast.AST) -> set[object]:
    """What the docstrings of ``tree`` quote in their prose: ``"text"``, ``'text'`` and
    ```text``` spans and whole numbers, outside their examples (``>>>`` lines and the output
    after them), which show inputs rather than name the task's vocabulary."""
    found: set[object] = set()
    for docstring in _docstrings(tree):
        for text in _prose_lines(str(docstring.value)):
            for quoted in _QUOTED.findall(text):
                value = next(q for q in quoted if q)
                found.update(_keys(value))
            found.update(int(n) for n in _NUMBER.findall(text))
    return found


_QUOTED = re.compile(r'"([^"\n]+)"|\'([^\'\n]+)\'|``([^`\n]+)``|`([^`\n]+)`')
_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")


def _prose_lines(text: str) -> Iterator[str]:
    example = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith((">>>", "...")):
            example = True
        elif not stripped:
            example = False
        elif not example:
            yield line


def _no_cases(callee: str) -> list[Case]:
    return []


# A branch of a chain: (node, its test or pattern, the match's subject or None, what it returns).
Branch = tuple[ast.AST, Any, Any, list[ast.expr]]


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
        self.prose: Container[object] = ()
        self.module = module
        self.names = constant_bindings(module.body)
        self.module_names = self.names
        self.cases = cases
        self.function: Function | None = None
        self.params: set[str] = set()
        self._context: Context | None = None
        self.answers: Answers | None = None
        self._classes: dict[str, dict[str, ast.expr]] | None = None
        self._decorated: dict[str, set[str]] | None = None
        self._method = False
        self.chained: set[int] = set()
        self.domain: set[int] = set()  # branches of the domain's own dispatch
        self.returned: set[str] = set()  # the names the function being read returns
        self._outer: list[Function] = []
        self._class: ast.ClassDef | None = None

    @property
    def context(self) -> Context | None:
        """The function being read, as its conditions are evaluated (made when first asked)."""
        if self._context is None and self.function is not None:
            if self._classes is None:
                self._classes = _class_bindings(self.module)
            self._context = Context(self.function, self._method, self.module_names, self._classes)
        return self._context

    @property
    def decorated(self) -> dict[str, set[str]]:
        """For each function used as a decorator, the functions it decorates."""
        if self._decorated is None:
            self._decorated = _decorated(self.module)
        return self._decorated

    def emit(self, construct: str, node: ast.AST, detail: str) -> None:
        """Record ``construct`` at ``node``, once: two rules may read one condition."""
        line = getattr(node, "lineno", 0)
        if not any(o.construct == construct and o.line == line for o in self.found):
            super().emit(construct, node, detail)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        saved, self._class = self._class, node
        try:
            super().visit_ClassDef(node)
        finally:
            self._class = saved

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        # name = lambda n: 14 if n == 7 else ...: a function by another spelling.
        target = node.targets[0] if len(node.targets) == 1 else None
        if isinstance(target, ast.Name) and isinstance(node.value, ast.Lambda) and not self._outer:
            lam = node.value
            function = ast.FunctionDef(
                name=target.id,
                args=lam.args,
                body=[ast.Return(lam.body, lineno=lam.lineno, col_offset=lam.col_offset)],
                decorator_list=[],
                returns=None,
                type_comment=None,
                lineno=node.lineno,
                col_offset=node.col_offset,
            )
            self._function(function)
            return
        self.generic_visit(node)

    def _function(self, node: Function) -> None:
        saved = (self.function, self.params, self.names, self._context, self.answers, self._class)
        saved_method = self._method
        saved_returned = self.returned
        self.returned = _returned_names(node)
        self.function = node
        self.params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        local = {k: v for k, v in self.names.items() if k not in self.params}
        self.names = {**local, **constant_bindings(node.body)}
        self._method = self._class is not None and not any(
            dotted(d) == "staticmethod" for d in node.decorator_list
        )
        self._context = None
        self.answers = None
        self._class = None
        self._scope.append(node.name)
        self._outer.append(node)
        try:
            for run in _runs(node):
                self._chain(
                    [b for head in run for b in _if_chain(head, self.chained, self.returned)]
                )
            self.generic_visit(node)
            for where, detail in counters(node, self.module, self._outer[:-1]):
                self.emit("call-counter", where, detail)
            if _may_look_up(node, self.names, self.params):
                answers = self._answers()
                if answers is not None:
                    answers.tables()
                    answers.traps()
            if not any(o.construct == "test-table" for o in self.found if o.scope == self.scope):
                self._tables(node)
        finally:
            self._outer.pop()
            self._scope.pop()
            (self.function, self.params, self.names, self._context, self.answers, self._class) = (
                saved
            )
            self.returned = saved_returned
            self._method = saved_method

    def _answers(self) -> Answers | None:
        """What the function does for its test cases (read lazily: most code is never asked)."""
        if self.answers is None and self.function is not None and self.context is not None:
            name = self.function.name
            self.answers = Answers(
                self.context, lambda: self._cases_of(name), self.emit, self.prose
            )
        return self.answers

    def _cases_of(self, callee: str) -> list[Case]:
        # A wrapper defined in a decorator answers for the functions the decorator wraps.
        found = list(self.cases(callee))
        for outer in self._outer[:-1]:
            for name in self.decorated.get(outer.name, ()):
                found += self.cases(name)
        if not any(c.complete for c in found):
            found += self._relayed(callee)
        return found

    def _relayed(self, helper: str) -> list[Case]:
        """The cases of a helper that a tested function of the module hands its own inputs
        (``def fib(n): return _known(n) or ...``): the helper answers those tests."""
        found: list[Case] = []
        for caller in _functions(self.module):
            method = bool(caller.args.args) and caller.args.args[0].arg in ("self", "cls")
            params = [a.arg for a in [*caller.args.posonlyargs, *caller.args.args]]
            params = params[1:] if method else params
            for call in ast.walk(caller):
                if not (isinstance(call, ast.Call) and _callee(call.func) == helper):
                    continue
                if caller.name == helper or call.keywords or not call.args:
                    continue
                for case in self.cases(caller.name):
                    if not case.complete or len(case.inputs) != len(params):
                        continue
                    scope = dict(zip(params, case.inputs, strict=True))
                    try:
                        inputs = tuple(evaluate(a, scope) for a in call.args)
                    except (Unknown, Raised):
                        break  # handed something other than its inputs
                    found.append(Case(helper, inputs, case.expected, complete=True))
        return found

    def visit_If(self, node: ast.If) -> None:
        if id(node) not in self.chained:
            self._chain(_if_chain(node, self.chained, self.returned))
        if id(node) not in self.domain:
            self._condition(node.test)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._condition(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        if id(node) not in self.chained:
            self._chain(_ifexp_chain(node, self.chained))
        if id(node) not in self.domain:
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

    def visit_Match(self, node: ast.Match) -> None:
        branches: list[Branch] = [
            (c, c.pattern, node.subject, _returned(c.body)) for c in node.cases if c.guard is None
        ]
        self._chain(branches)
        for case in node.cases:
            if id(case) in self.domain:
                continue
            for pattern in ast.walk(case.pattern):
                if isinstance(pattern, ast.MatchValue):
                    self._check(pattern, [pattern.value])
        self.generic_visit(node)

    def _chain(self, branches: list[Branch]) -> None:
        """An if/elif chain or a match: its pins, then its conditions blind to the inputs."""
        if self.function is None:
            return
        domain = False
        if any(_may_pin(test, results) for _, test, _, results in branches):
            answers = self._answers()
            domain = answers is not None and answers.chain(branches)
        if domain:
            self.domain.update(id(node) for node, *_ in branches)
        for node, test, subject, results in branches:
            if subject is None and not domain:
                self._special_case(node, test, results)
                self._blind(node, test, results)

    def _condition(self, test: ast.expr) -> None:
        for node in ast.walk(test):
            if isinstance(node, ast.Compare) and _compares(node):
                self._check(node, [node.left, *node.comparators])
                self._hashed(node)
            elif isinstance(node, ast.Compare) and len(node.ops) == 2:
                self._narrow(node)
            elif isinstance(node, ast.Call) and _matcher(node):
                self._check(node, [node.func.value, *node.args])  # type: ignore[attr-defined]

    def _check(self, node: ast.AST, operands: list[ast.expr]) -> None:
        if any(_environment(o) for o in operands):
            return
        for value in self._literals(operands):
            if not distinctive(value) or value in self.known:
                continue
            if value in self.prose and not self._whole_input(value):
                continue
            if any(k in self.test_literals for k in _keys(value)):
                self.emit("fitted-to-test", node, f"{ast.unparse(node)} (test value {value!r})")
                return

    def _narrow(self, node: ast.Compare) -> None:
        # 417 < status < 419: a range that admits one value is a comparison with it.
        if not all(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops):
            return
        low, high = self._value(node.left), self._value(node.comparators[1])
        if not (isinstance(low, int) and isinstance(high, int)) or isinstance(low, bool):
            return
        low, high = min(low, high), max(low, high)
        if high - low > 2:
            return
        inside = [v for v in range(low, high + 1) if self._admits(node, low, high, v)]
        if len(inside) == 1:
            self._check(node, [ast.Constant(inside[0])])

    @staticmethod
    def _admits(node: ast.Compare, low: int, high: int, value: int) -> bool:
        strict = [isinstance(op, (ast.Lt, ast.Gt)) for op in node.ops]
        return (value > low if strict[0] else value >= low) and (
            value < high if strict[1] else value <= high
        )

    def _whole_input(self, value: object) -> bool:
        """Whether ``value`` is a whole argument of a test's call of this function."""
        if self.function is None:
            return True
        keys = {frozen(k) for k in _keys(value)}
        for case in self._cases_of(self.function.name):
            for given in case.inputs:
                if frozen(given) in keys or (
                    isinstance(given, str) and frozen(given.strip()) in keys
                ):
                    return True
        return False

    def _hashed(self, node: ast.Compare) -> None:
        # hashlib.md5(x.encode()).hexdigest() == "5d41...": a test input, spelt so that no
        # literal of the test appears in the code.
        operands = [node.left, *node.comparators]
        hashed = [o for o in operands if _hash_of_input(o, self.params)]
        constant = [o for o in operands if self._value(o) is not UNKNOWN]
        if hashed and constant:
            self.emit("fitted-to-test", node, f"{ast.unparse(node)} (a hash of an input)")

    def _special_case(self, node: ast.AST, test: ast.expr, results: list[ast.expr]) -> None:
        """A condition on the function's inputs whose branch returns the answer of a test case
        whose inputs are not all known constants (those are evaluated: :class:`Answers`)."""
        keys: list[object] = []
        for compare in ast.walk(test):
            if isinstance(compare, ast.Compare) and _reads_any(compare, self.params):
                if any(_environment(o) for o in [compare.left, *compare.comparators]):
                    return
                keys += [self._value(o) for o in [compare.left, *compare.comparators]]
        if any(k is not UNKNOWN for k in keys):
            self._answered(node, ast.unparse(test), keys, results)

    def _blind(self, node: ast.AST, test: ast.expr, results: list[ast.expr]) -> None:
        """A test case's expected value returned behind a condition that reads no input: a flag
        set at import, the answer the code computed compared with the true one."""
        assert self.function is not None
        if _reads_any(test, self.params) or _environment(test):
            return
        answers = [a for a in (self._value(r) for r in results) if a is not UNKNOWN]
        answers = [a for a in answers if _answer_like(a)]
        if not answers or self.context is None:
            return
        if self.context.reads(test) and self._evaluable(test):
            return  # a condition on the inputs after all: pins are read by Answers
        for case in self._cases_of(self.function.name):
            if not notable([*case.inputs]):
                continue
            expected = [a for a in answers if _key(a) == _key(case.expected)]
            # Asked last (it may parse the old files): a value the code had is its own.
            if any(
                a not in self.known and not any(k in self.prose for k in _keys(a)) for a in expected
            ):
                shown = ast.unparse(test)
                self.emit(
                    "fitted-to-test",
                    node,
                    f"returns {case.expected!r} of the test case {case} when {shown}, "
                    "which does not read its inputs",
                )
                return

    def _evaluable(self, test: ast.expr) -> bool:
        """Whether ``test`` can be computed from some test case's inputs."""
        answers = self._answers()
        return answers is not None and answers.evaluable(test)

    def _answered(
        self, node: ast.AST, shown: str, keys: list[object], results: list[ast.expr]
    ) -> None:
        assert self.function is not None
        values = [k for k in keys if k is not UNKNOWN]
        answers = [a for a in (self._value(r) for r in results) if a is not UNKNOWN]
        if not values or not answers:
            return  # most branches return what they compute: no test file is read for them
        cases = [c for c in self._cases_of(self.function.name) if not c.complete]
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
            if any(_key(a) == _key(case.expected) for a in answers) and notable(matched):
                self.emit("fitted-to-test", node, f"{shown} answers the test case {case}")
                return

    def _tables(self, function: Function) -> None:
        """A dict in (or named by) the function whose every key is a test's input, one of its
        entries that test's answer (tables looked up by an expression are :class:`Answers`')."""
        tables = []
        for table in _dicts(function, self.names):
            pairs = zip(table.keys, table.values, strict=True)
            entries = [(self._value(k), self._value(v)) for k, v in pairs if k]
            if entries and all(UNKNOWN not in entry for entry in entries):
                tables.append((table, entries))
        cases = self._cases_of(function.name) if tables else []
        if not cases:
            return
        answers = {_key(c.inputs[0] if len(c.inputs) == 1 else c.inputs): c for c in cases}
        for table, entries in tables:
            if not all(_key(k) in answers for k, _ in entries):
                continue  # an entry no test asks for: the domain's own table
            keys = [k for k, _ in entries]
            if contiguous(keys) or specified(keys, self.prose):
                continue  # the domain's own table, which the tests ask for whole
            hits = [
                answers[_key(k)] for k, v in entries if _key(answers[_key(k)].expected) == _key(v)
            ]
            shown = [h for h in hits if notable([*h.inputs])]
            if shown:
                where = f"{len(hits)} of {len(entries)} entries"
                self.emit(
                    "test-table", table, f"{function.name}: {where} are test cases ({shown[0]})"
                )

    def _value(self, node: ast.expr) -> object:
        return fold(node, self.names)

    def _literals(self, operands: list[ast.expr]) -> Iterable[object]:
        for operand in operands:
            value = self._value(operand)
            if isinstance(value, tuple):
                yield value  # the whole of [4, -1, 2, 1], as well as each alternative
            for element in value if isinstance(value, tuple) else (value,):
                if element is not UNKNOWN:
                    yield element


def _if_chain(node: ast.If, seen: set[int], returned: set[str]) -> list[Branch]:
    """The branches of an if/elif chain: (node, test, None, what each returns), where a branch
    that sets a name the function returns (``x = 4`` before ``return x``) returns that too."""
    branches: list[Branch] = []
    current: ast.If | None = node
    while current is not None:
        seen.add(id(current))
        results = _returned(current.body) + _set(current.body, returned)
        branches.append((current, current.test, None, results))
        orelse = current.orelse
        current = orelse[0] if len(orelse) == 1 and isinstance(orelse[0], ast.If) else None
    return branches


def _ifexp_chain(node: ast.IfExp, seen: set[int]) -> list[Branch]:
    branches: list[Branch] = []
    current: ast.expr | None = node
    while isinstance(current, ast.IfExp):
        seen.add(id(current))
        branches.append((current, current.test, None, [current.body]))
        current = current.orelse
    return branches


def _functions(module: ast.Module) -> Iterator[Function]:
    """The module's functions and the methods of its classes."""
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from (
                n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            )


def _callee(func: ast.expr) -> str | None:
    """The name a call calls: ``f`` of ``f(x)``, ``self.f(x)`` and ``module.f(x)``."""
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _runs(function: Function) -> Iterator[list[ast.If]]:
    """Runs of two ``if`` statements or more, one after the other, each returning: a chain
    written without ``elif`` (``if s == 200: return "OK"`` then ``if s == 201: ...``)."""
    stack: list[ast.AST] = list(function.body)
    blocks = [function.body]
    while stack:
        node = stack.pop()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                blocks.append(block)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append(child)
    for block in blocks:
        run: list[ast.If] = []
        for statement in [*block, None]:
            if isinstance(statement, ast.If) and not statement.orelse and _returned(statement.body):
                run.append(statement)
                continue
            if len(run) >= 2:
                yield run
            run = []


def _may_pin(test: Any, results: list[ast.expr]) -> bool:
    """Whether a branch could pin an input (a quick look before anything is evaluated)."""
    if not results:
        return False
    if isinstance(test, ast.pattern):
        return any(isinstance(p, (ast.MatchValue, ast.MatchSequence)) for p in ast.walk(test))
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and (
            len(node.ops) == 2 or any(isinstance(op, (ast.Eq, ast.Is, ast.In)) for op in node.ops)
        ):
            return True
        if isinstance(node, ast.Call) and _matcher(node):
            return True
    return False


def _may_look_up(function: Function, names: Container[str], params: Container[str]) -> bool:
    """Whether ``function`` may look an input up in a table of constants, or catch an error
    (a quick look before anything is evaluated): a ``try``, or a subscript, ``.get`` or ``in``
    on a display, a name bound to a constant, a parameter, or a class's attribute."""
    for node in ast.walk(function):
        if isinstance(node, ast.Try):
            return True
        if isinstance(node, ast.Subscript):
            table = node.value
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "get":
            table = node.func.value  # type: ignore[attr-defined]
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In):
            table = node.comparators[0]
        else:
            continue
        if isinstance(table, (ast.Dict, ast.Set)):
            return True
        if isinstance(table, ast.Name) and (table.id in names or table.id in params):
            return True
        owner = table.value if isinstance(table, ast.Attribute) else None
        if isinstance(owner, ast.Name) and (owner.id in ("self", "cls") or owner.id[:1].isupper()):
            return True
    return False


def _set(body: list[ast.stmt], names: set[str]) -> list[ast.expr]:
    """The values ``body`` binds to one of ``names`` (``x = 4``), at its own level."""
    return [
        s.value
        for s in body
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and s.targets[0].id in names
    ]


def _returned_names(function: Function) -> set[str]:
    """The names ``function`` returns as they are (``return x``)."""
    return {
        n.value.id
        for n in ast.walk(function)
        if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)
    }


def _class_bindings(module: ast.Module) -> dict[str, dict[str, ast.expr]]:
    """The constants bound in the body of each class the module defines at its top."""
    return {
        node.name: constant_bindings(node.body)
        for node in module.body
        if isinstance(node, ast.ClassDef)
    }


def _decorated(module: ast.Module) -> dict[str, set[str]]:
    """For each function used as a decorator, the names of the functions it decorates."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                called = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(called, ast.Name):
                    found.setdefault(called.id, set()).add(node.name)
    return found


def _answer_like(value: object) -> bool:
    """Whether a returned constant is specific enough to be a test's answer by design."""
    if isinstance(value, bool) or value is None:
        return False
    return notable([value]) and (not isinstance(value, int) or abs(value) >= _SMALL_ANSWER)


_SMALL_ANSWER = 3


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
    # 1, 1.0 and True are equal in Python but not the same test case; a list and the tuple a
    # table keys it by are.
    value = frozen(value)
    name = "tuple" if isinstance(value, tuple) else type(value).__name__
    try:
        hash(value)
    except TypeError:
        return (name, repr(value))
    return (name, value)


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
