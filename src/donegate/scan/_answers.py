"""Code that answers a test case instead of computing: read by evaluating it on the case's input.

For each function with test cases (:mod:`donegate.scan._cases`), its parameters are bound to a
case's inputs and what a condition, a table lookup or a ``try`` *does* for that input is
computed (:mod:`donegate.scan._evaluate`), whatever the spelling:

- **a pin**: a condition that singles the input out (``n == 7``, ``(a, b) == (3, 4)``,
  ``repr(xs) == "[4, -1]"``, ``len(s) == 4 and s[0] == "a"``, ``s.startswith("2020-03")``, a
  ``match`` case) is true for the case, and its branch returns the case's expected value. A
  condition that only partitions the inputs (``n % 2 == 0``, ``x < 0``) is no pin, and a single
  lossy feature (``len(parts) == 4``) pins only with a distinctive constant;
- **a table**: a dict or set of constants looked up by the input (``T[key]``, ``T.get(key)``)
  whose every key is a test input (through the lookup's expression), one answering its case;
- **a trap**: a ``try`` whose body raises, for the case's input and not for inputs next to it,
  an error its handler turns into the case's expected value (``1 // (n - 7)``).

A chain of pins or a table with an entry no test reaches is the domain's own dispatch (the
twelve months, of which the tests ask eight), and is not reported: only the rest of the domain
tells such code from a table of the tests, and that is what the tests do not show.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from typing import Any

from donegate.scan._cases import Case, frozen
from donegate.scan._evaluate import Raised, Unknown, bind, evaluate
from donegate.scan._fold import UNKNOWN, distinctive, fold
from donegate.scan._scope import Function, own_nodes

_MAX_CASES = 300
# Integers within this distance of zero are base cases (fact(0) == 1, fib(2) == 1).
_TRIVIAL_INT = 2
_SHORT_TEXT = 2
_EQUALITY = (ast.Eq, ast.Is)
# Calls and methods that keep all of what they are given: a condition on their result is a
# condition on the whole input.
_WHOLE_CALLS = frozenset(
    {"str", "repr", "tuple", "list", "sorted", "frozenset", "set", "hash", "int", "float", "abs"}
)
_WHOLE_METHODS = frozenset(
    {"strip", "lstrip", "rstrip", "lower", "upper", "casefold", "split", "join", "encode"}
)
_MATCHERS = frozenset({"startswith", "endswith"})


class Pin:
    """A condition's equality tests on the inputs: how strongly it singles an input out."""

    def __init__(self, strong: bool, constants: list[object]) -> None:
        self.strong = strong
        self.constants = constants

    @property
    def computes(self) -> bool:
        """Whether a branch it guards that computes its answer is read too: only a pin of two
        tests or more (``len(w) == 3 and w[2][:2] == "fl"``); one test guarding a computation
        (``if mode == "r": return open(path)``) is dispatch."""
        return self.strong and len(self.constants) >= 2


class Context:
    """What a function's conditions are evaluated in: its parameters bound to a case's inputs,
    its locals bound once from them, the module's constants.

    ``constants``: names of the module (and class) bound to constant expressions.
    """

    def __init__(
        self,
        function: Function,
        method: bool,
        constants: Mapping[str, ast.expr],
        classes: Mapping[str, Mapping[str, ast.expr]],
    ) -> None:
        self.function = function
        args = function.args
        positional = [*args.posonlyargs, *args.args]
        self.positional = [a.arg for a in positional][1 if method and positional else 0 :]
        self.varargs = args.vararg.arg if args.vararg else None
        self.params = {a.arg for a in ast.walk(args) if isinstance(a, ast.arg)}
        self.defaults = _defaults(function)
        self.constants = constants
        self.classes = classes
        assigned = _assigned(function)
        self.locals = _single_locals(function, assigned)
        # A name assigned anywhere but once at the top is unknown wherever it is read.
        self.unknown = {n for n, count in assigned.items() if count and n not in self.locals}
        self.whole = {p for p in self.params if p not in self.unknown}
        self.derived = set(self.params)  # the inputs, and the locals bound from them
        for name, (_, value) in sorted(self.locals.items(), key=lambda item: item[1][0]):
            bound = value.value if isinstance(value, _Unpacked) else value
            if self.reads(bound):
                self.derived.add(name)
            if self.is_whole(value):
                self.whole.add(name)

    def scope(self, case: Case, before: int) -> dict[str, object] | None:
        """The names bound for ``case`` at line ``before`` (None: the case does not fit)."""
        if not case.complete:
            return None
        scope: dict[str, object] = {}
        inputs = list(case.inputs)
        if len(inputs) > len(self.positional) and self.varargs is None:
            return None
        for name, value in zip(self.positional, inputs, strict=False):
            scope[name] = value
        if self.varargs is not None:
            scope[self.varargs] = tuple(inputs[len(self.positional) :])
        for name, value in case.keywords:
            if name not in self.params:
                return None
            scope[name] = value
        for name in self.positional[len(inputs) :]:
            if name not in scope and name in self.defaults:
                scope[name] = self.defaults[name]
        for name in self.unknown:
            scope.pop(name, None)
        for name, (line, value) in sorted(self.locals.items(), key=lambda item: item[1][0]):
            if line >= before:
                break
            target = value.target if isinstance(value, _Unpacked) else ast.Name(name)
            try:
                bind(target, value.value if isinstance(value, _Unpacked) else value, scope)
            except (Unknown, Raised):
                continue
        return scope

    def reads(self, node: ast.AST) -> set[str]:
        """The parameters and locals bound from them that ``node`` reads."""
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in self.derived}

    def is_whole(self, node: ast.AST) -> bool:
        """Whether ``node`` is the whole of some input: an input, or what keeps all of it."""
        if isinstance(node, _Unpacked):
            return False
        if isinstance(node, ast.Name):
            return node.id in self.whole
        if isinstance(node, (ast.Tuple, ast.List)):
            return bool(node.elts) and all(self.is_whole(e) for e in node.elts)
        if isinstance(node, ast.JoinedStr):
            parts = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
            return bool(parts) and all(self.is_whole(p) for p in parts)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in _WHOLE_CALLS and len(node.args) == 1:
                return self.is_whole(node.args[0])
            if isinstance(func, ast.Name) and func.id == "map" and len(node.args) == 2:
                return self.is_whole(node.args[1])
            if isinstance(func, ast.Attribute) and func.attr in _WHOLE_METHODS:
                if func.attr == "join":
                    return len(node.args) == 1 and self.is_whole(node.args[0])
                return self.is_whole(func.value)
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            return not any(g.ifs for g in node.generators) and all(
                self.is_whole(g.iter) for g in node.generators
            )
        return False

    def constant(self, node: ast.expr) -> object:
        """The value of a constant expression of the code (a name bound to a literal, a
        parameter's default, a class attribute, ``frozenset({...})``), else UNKNOWN."""
        value = fold(node, self.constants)
        if value is not UNKNOWN and not isinstance(value, tuple):
            return value
        resolved = self._resolve(node)
        if resolved is None:
            return value
        if not isinstance(resolved, ast.expr):
            return resolved  # a default's value
        try:
            return evaluate(resolved, {})
        except (Unknown, Raised):
            return value

    def _resolve(self, node: ast.expr) -> ast.expr | object | None:
        if isinstance(node, ast.Name):
            if node.id in self.params:
                return self.defaults.get(node.id)
            if node.id in self.locals and node.id not in self.derived:
                value = self.locals[node.id][1]
                return None if isinstance(value, _Unpacked) else value  # a table of its own
            if node.id in self.unknown or node.id in self.locals:
                return None
            return self.constants.get(node.id, node if not self.reads(node) else None)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner = node.value.id
            for name, body in self.classes.items():
                if owner in (name, "self", "cls") and node.attr in body:
                    return body[node.attr]
            return None
        return None if self.reads(node) else node


class _Unpacked:
    """``a, b = value`` at the top of a function: the names bound together."""

    def __init__(self, target: ast.expr, value: ast.expr) -> None:
        self.target = target
        self.value = value


def _defaults(function: Function) -> dict[str, object]:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
    found: dict[str, object] = {}
    for arg, default in pairs:
        try:
            found[arg.arg] = evaluate(default, {})
        except (Unknown, Raised):
            continue
    return found


def _assigned(function: Function) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in own_nodes(function):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets = [i.optional_vars for i in node.items if i.optional_vars]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                counts[name] = counts.get(name, 0) + 2
        elif isinstance(node, ast.comprehension):
            continue  # a comprehension's own scope
        for target in targets:
            for bound in ast.walk(target):
                if isinstance(bound, ast.Name):
                    counts[bound.id] = counts.get(bound.id, 0) + 1
    return counts


def _single_locals(function: Function, assigned: Mapping[str, int]) -> dict[str, tuple[int, Any]]:
    """Names bound once, by a plain assignment at the top of the body: (line, value)."""
    found: dict[str, tuple[int, Any]] = {}
    for statement in function.body:
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if len(targets) != 1:
            continue
        target = targets[0]
        names = [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
        if not names or any(assigned.get(n, 0) != 1 for n in names):
            continue
        if isinstance(target, ast.Name):
            found[target.id] = (statement.lineno, statement.value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            unpacked = _Unpacked(target, statement.value)
            for name in names:
                found[name] = (statement.lineno, unpacked)
    return found


class Answers:
    """The cases a function's code answers instead of computing; ``emit`` reports each."""

    def __init__(
        self,
        context: Context,
        cases: Callable[[], list[Case]],
        emit: Callable[[str, ast.AST, str], None],
        prose: Container[object] = (),
    ) -> None:
        self.context = context
        self.prose = prose
        self._cases = cases
        self._complete: list[Case] | None = None
        self.emit = emit

    @property
    def cases(self) -> list[Case]:
        """The function's test cases whose every argument is known (read when first asked:
        that may parse test files)."""
        if self._complete is None:
            self._complete = [c for c in self._cases() if c.complete][:_MAX_CASES]
        return self._complete

    def chain(self, branches: list[tuple[ast.AST, Any, Any, list[ast.expr]]]) -> bool:
        """Report the pins of an ``if``/``elif`` chain or a ``match`` that answer a case; say
        whether it is the domain's own dispatch instead (then nothing of it is reported).

        Each branch is (node, test or pattern, the ``match``'s subject or None, returns)."""
        entries = []
        for node, test, subject, results in branches:
            pin = self._pin(test, subject) if results else None
            if pin is None:
                continue
            constant = any(self.context.constant(r) is not UNKNOWN for r in results)
            if not constant and not pin.computes:
                continue  # nothing it could answer with: no test file need be read
            answered = [(c, s) for c in self.cases if (s := self._holds(node, test, subject, c))]
            entries.append((node, test, subject, results, pin, answered))
        if not entries:
            return False
        untested = [e for e in entries if not e[5]]
        constants = [e[4].constants for e in entries]
        if (untested and len(entries) >= 3) or _contiguous(constants) or self._specified(constants):
            return True  # the domain's own dispatch: it names inputs no test gives
        for node, test, subject, results, pin, answered in entries:
            self._report(node, test, subject, results, pin, answered)
        return False

    def _specified(self, constants: list[list[object]]) -> bool:
        return specified([v for group in constants for v in group], self.prose)

    def evaluable(self, test: ast.expr) -> bool:
        """Whether ``test`` can be computed for some case."""
        for case in self.cases:
            scope = self.context.scope(case, getattr(test, "lineno", 0))
            if scope is None:
                continue
            try:
                evaluate(test, scope)
            except (Unknown, Raised):
                continue
            return True
        return False

    def _report(
        self,
        node: ast.AST,
        test: ast.expr | ast.pattern,
        subject: ast.expr | None,
        results: list[ast.expr],
        pin: Pin,
        answered: list[tuple[Case, dict[str, object]]],
    ) -> None:
        if not pin.strong and not any(distinctive(_plain(c)) for c in pin.constants):
            return
        for case, scope in answered:
            read = self.context.reads(subject if subject is not None else test)
            if not notable([scope[n] for n in read if n in scope]):
                continue
            for result in results:
                value = self.context.constant(result)
                if value is UNKNOWN and pin.computes:
                    value = _evaluated(result, scope)
                if value is not UNKNOWN and _same(value, case.expected):
                    shown = ast.unparse(test) if isinstance(test, ast.expr) else _pattern(test)
                    self.emit("fitted-to-test", node, f"{shown} answers the test case {case}")
                    return

    def _holds(
        self, node: ast.AST, test: ast.expr | ast.pattern, subject: ast.expr | None, case: Case
    ) -> dict[str, object] | None:
        scope = self.context.scope(case, getattr(node, "lineno", 0))
        if scope is None:
            return None
        try:
            if subject is not None:
                assert isinstance(test, ast.pattern)
                held = _matches(test, evaluate(subject, scope), self.context)
            else:
                assert isinstance(test, ast.expr)
                seen = [c for c in _conjuncts(test) if self._answer_pin(c) is None]
                held = all(bool(evaluate(c, scope)) for c in seen)
        except (Unknown, Raised):
            return None
        return scope if held else None

    def _pin(self, test: ast.expr | ast.pattern, subject: ast.expr | None) -> Pin | None:
        """How ``test`` pins the inputs (None: it does not, or does not read them)."""
        if subject is not None:
            assert isinstance(test, ast.pattern)
            constants = _pattern_values(test, self.context)
            if constants is None or not self.context.reads(subject):
                return None
            return Pin(self.context.is_whole(subject), constants)
        assert isinstance(test, ast.expr)
        strong, lossy, constants, answer = False, 0, [], []
        for conjunct in _conjuncts(test):
            found = self._equality(conjunct) or self._answer_pin(conjunct)
            if found is None:
                continue
            whole, constant = found
            strong = strong or whole
            lossy += not whole
            constants.append(constant)
            answer += [conjunct] if self._answer_pin(conjunct) else []
        if len(constants) == len(answer):
            return None  # none reads an input: the blind rule's, if any
        return Pin(strong or lossy >= 2, constants)

    def _answer_pin(self, node: ast.expr) -> tuple[bool, object] | None:
        """``best == 6``, a local the function computed (in a loop) compared with a constant:
        the answer it reached, checked against the true one before a test's is returned."""
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            return None
        if not isinstance(node.ops[0], _EQUALITY):
            return None
        for side, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
            computed = isinstance(side, ast.Name) and side.id in self.context.unknown
            if computed and self.context.constant(other) is not UNKNOWN:
                return False, self.context.constant(other)
        return None

    def _equality(self, node: ast.expr) -> tuple[bool, object] | None:
        """(whether the feature is a whole input, the constant) for an equality test."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _MATCHERS and len(node.args) == 1:
                constant = self.context.constant(node.args[0])
                if constant is not UNKNOWN and self.context.reads(node.func.value):
                    return False, constant
            return None
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            return self._range(node)
        op, left, right = node.ops[0], node.left, node.comparators[0]
        if isinstance(op, (*_EQUALITY, ast.In)):
            for feature, other in ((left, right), (right, left)):
                constant = self.context.constant(other)
                if constant is UNKNOWN or not self.context.reads(feature):
                    continue
                if isinstance(op, ast.In) and feature is right:
                    return False, constant  # "flight" in words: an element of the input
                if isinstance(op, ast.In) and not self._mostly_tested(feature, constant):
                    return None
                return self.context.is_whole(feature), constant
        return None

    def _range(self, node: ast.expr) -> tuple[bool, object] | None:
        # 6 < n < 8: a range as narrow as one value.
        if not (isinstance(node, ast.Compare) and len(node.ops) == 2):
            return None
        if not all(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops):
            return None
        low, high = self.context.constant(node.left), self.context.constant(node.comparators[1])
        middle = node.comparators[0]
        numbers = all(isinstance(v, (int, float)) for v in (low, high))
        if numbers and abs(high - low) <= 2 and self.context.reads(middle):  # type: ignore[operator]
            return self.context.is_whole(middle), low
        return None

    def _mostly_tested(self, feature: ast.expr, container: object) -> bool:
        """Whether most of the alternatives of ``feature in container`` are tested inputs:
        ``("yes", "y", "on")`` with one of them tested is the code's vocabulary."""
        if not isinstance(container, (tuple, list, set, frozenset, dict)) or not container:
            return False
        values = set()
        for case in self.cases:
            scope = self.context.scope(case, getattr(feature, "lineno", 0))
            if scope is None:
                continue
            try:
                values.add(frozen(evaluate(feature, scope)))
            except (Unknown, Raised, TypeError):
                continue
        options = {frozen(v) for v in container}
        return 2 * len(options & values) >= len(options)

    def tables(self) -> None:
        """Lookups in a table of constants keyed by the tests' inputs."""
        for node, table_node, key in _lookups(self.context.function):
            if not self.context.reads(key):
                continue
            table = self.context.constant(table_node)
            if not isinstance(table, (dict, set, frozenset)) or not table:
                continue
            tested, hits = set(), []
            for case in self.cases:
                scope = self.context.scope(case, node.lineno)
                if scope is None:
                    continue
                try:
                    found = frozen(evaluate(key, scope))
                    present = any(frozen(k) == found for k in table)
                except (Unknown, Raised, TypeError):
                    continue
                if not present:
                    continue
                tested.add(found)
                answer = _get(table, found)
                read = [scope[n] for n in self.context.reads(key) if n in scope]
                if answer is not UNKNOWN and _same(answer, case.expected) and notable(read):
                    hits.append(case)
            keys = {frozen(k) for k in table}
            domain = _contiguous([list(keys)]) or self._specified([list(keys)])
            if hits and keys <= tested and not domain:
                shown = max(hits, key=lambda c: len(repr(c.inputs)))
                where = f"{len(keys)} of {len(keys)} entries"
                self.emit("test-table", node, f"{where} are test inputs ({shown})")

    def traps(self) -> None:
        """A ``try`` whose body raises for a test's input (and not for those next to it) an
        error its handler answers with that test's expected value, or the reverse."""
        for node in own_nodes(self.context.function):
            if not isinstance(node, ast.Try) or not node.handlers:
                continue
            bodies = [h.body for h in node.handlers] + [node.orelse]
            if not any(_constant_return(b, self.context) for b in bodies):
                continue
            for case in self.cases:
                scope = self.context.scope(case, node.lineno)
                if scope is None:
                    continue
                outcome = _outcome(node, scope)
                answer = _answer(node, outcome, self.context)
                if outcome is None or answer is UNKNOWN or not _same(answer, case.expected):
                    continue
                pinned = [
                    p for p in self.context.positional if p in scope and self._pins(node, scope, p)
                ]
                if notable([scope[p] for p in pinned]):
                    where = "raises" if outcome != "completes" else "does not raise"
                    self.emit(
                        "fitted-to-test",
                        node,
                        f"a try that {where} only for the test case {case} answers it",
                    )
                    return

    def _pins(self, node: ast.Try, scope: dict[str, object], param: str) -> bool:
        outcome = _outcome(node, scope)
        others = []
        for value in _neighbours(scope[param]):
            other = _outcome(node, {**scope, param: value})
            if other is not None:
                others.append(other)
        return len(others) >= 2 and all(o != outcome for o in others)


def _plain(value: object) -> object:
    """``value`` as the scan's literals are: a list or a set of constants as a tuple."""
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return tuple(sorted((_plain(v) for v in value), key=repr))
    return value


def specified(values: list[object], prose: Container[object]) -> bool:
    """Whether ``values`` are three or more, every one of them quoted by the specification's
    prose: the domain the person spelt out (HTTP statuses 200, 201, 404...), which exhaustive
    tests ask for entry by entry, and not a table of the tests."""
    if len(values) < 3:
        return False
    try:
        return all(v in prose for v in values)
    except TypeError:
        return False


def contiguous(values: list[object]) -> bool:
    """Whether ``values`` are three or more consecutive integers (months, digits)."""
    return _contiguous([values])


def _constant_return(body: list[ast.stmt], context: Context) -> bool:
    return any(
        isinstance(s, ast.Return)
        and s.value is not None
        and context.constant(s.value) is not UNKNOWN
        for s in body
    )


def _get(table: object, key: object) -> object:
    if isinstance(table, dict):
        for k, v in table.items():
            if frozen(k) == key:
                return v
    return UNKNOWN


def _lookups(function: Function) -> Iterator[tuple[ast.expr, ast.expr, ast.expr]]:
    """(node, table, key) for ``table[key]`` and ``table.get(key, ...)`` in ``function``."""
    for node in own_nodes(function):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if not isinstance(node.slice, ast.Slice):
                yield node, node.value, node.slice
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "get":
                yield node, func.value, node.args[0]
        elif isinstance(node, ast.Compare) and [type(o) for o in node.ops] == [ast.In]:
            yield node, node.comparators[0], node.left


def _outcome(node: ast.Try, scope: dict[str, object]) -> str | None:
    """What the ``try`` body does for ``scope``: "completes", the name of the error it raises
    (None: it cannot be told)."""
    local = dict(scope)
    try:
        for statement in node.body:
            if isinstance(statement, ast.Expr):
                evaluate(statement.value, local)
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                bind(statement.targets[0], statement.value, local)
            elif isinstance(statement, ast.Assert):
                if not evaluate(statement.test, local):
                    return "AssertionError"
            elif isinstance(statement, ast.Return) and statement.value is not None:
                evaluate(statement.value, local)
            else:
                return None
    except Raised as raised:
        return type(raised.error).__name__
    except Unknown:
        return None
    return "completes"


def _answer(node: ast.Try, outcome: str | None, context: Context) -> object:
    """The constant the ``try`` returns for ``outcome`` (UNKNOWN: none, or not a constant)."""
    if outcome is None:
        return UNKNOWN
    if outcome == "completes":
        body = node.orelse
    else:
        handler = next((h for h in node.handlers if _handles(h, outcome)), None)
        body = handler.body if handler else []
    returns = [s for s in body if isinstance(s, ast.Return) and s.value is not None]
    return context.constant(returns[0].value) if returns else UNKNOWN  # type: ignore[arg-type]


_ERROR_BASES = {
    "ZeroDivisionError": {"ArithmeticError"},
    "OverflowError": {"ArithmeticError"},
    "KeyError": {"LookupError"},
    "IndexError": {"LookupError"},
}


def _handles(handler: ast.ExceptHandler, error: str) -> bool:
    if handler.type is None:
        return True
    names = [handler.type] if not isinstance(handler.type, ast.Tuple) else handler.type.elts
    accepted = {error, "Exception", "BaseException", *_ERROR_BASES.get(error, ())}
    return any(isinstance(n, ast.Name) and n.id in accepted for n in names)


def _neighbours(value: object) -> list[object]:
    """Inputs next to ``value``: what an honest condition would treat alike."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value + 1, value - 1, value + 10, value * 2 + 3]
    if isinstance(value, float):
        return [value + 1.0, value - 1.0, value * 2 + 0.5]
    if isinstance(value, str):
        return [value + "x", value[1:], "x" + value, value[::-1] + "y"]
    if isinstance(value, list):
        first = value[0] if value else 0
        return [[*value, first], value[1:], [first, *value]]
    if isinstance(value, tuple):
        first = value[0] if value else 0
        return [(*value, first), value[1:], (first, *value)]
    return []


def _conjuncts(test: ast.expr) -> list[ast.expr]:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [c for v in test.values for c in _conjuncts(v)]
    return [test]


def _matches(pattern: ast.pattern, value: object, context: Context) -> bool:
    if isinstance(pattern, ast.MatchValue):
        return bool(value == context.constant(pattern.value))
    if isinstance(pattern, ast.MatchSingleton):
        return value is pattern.value
    if isinstance(pattern, ast.MatchOr):
        return any(_matches(p, value, context) for p in pattern.patterns)
    if isinstance(pattern, ast.MatchAs):
        return pattern.pattern is None or _matches(pattern.pattern, value, context)
    if isinstance(pattern, ast.MatchSequence):
        if not isinstance(value, (list, tuple)) or any(
            isinstance(p, ast.MatchStar) for p in pattern.patterns
        ):
            raise Unknown
        return len(value) == len(pattern.patterns) and all(
            _matches(p, v, context) for p, v in zip(pattern.patterns, value, strict=True)
        )
    raise Unknown


def _pattern_values(pattern: ast.pattern, context: Context) -> list[object] | None:
    """The constants a pattern names (None: it names none, or a wildcard matches anything)."""
    if isinstance(pattern, ast.MatchValue):
        value = context.constant(pattern.value)
        return None if value is UNKNOWN else [value]
    if isinstance(pattern, ast.MatchOr):
        found: list[object] = []
        for inner in pattern.patterns:
            values = _pattern_values(inner, context)
            if values is None:
                return None
            found += values
        return found
    if isinstance(pattern, ast.MatchSequence):
        items = [_pattern_values(p, context) for p in pattern.patterns]
        if not items or any(i is None or len(i) != 1 for i in items):
            return None
        return [tuple(i[0] for i in items)]  # type: ignore[index]
    return None


def _pattern(pattern: ast.pattern) -> str:
    return f"case {ast.unparse(pattern)}"


def _evaluated(node: ast.expr, scope: Mapping[str, object]) -> object:
    try:
        return evaluate(node, scope)
    except (Unknown, Raised):
        return UNKNOWN


def _same(value: object, expected: object) -> bool:
    # 1, 1.0 and True are equal in Python but not the same answer; a list and a tuple are.
    if isinstance(value, bool) != isinstance(expected, bool):
        return False
    try:
        return bool(frozen(value) == frozen(expected))
    except TypeError:
        return False


def _contiguous(constants: Iterable[list[object]]) -> bool:
    """Whether the constants are three or more consecutive integers (months, digits)."""
    values = [v for group in constants for v in group]
    if len(values) < 3 or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return False
    numbers = sorted(set(values))  # type: ignore[type-var]
    return numbers == list(range(numbers[0], numbers[0] + len(numbers)))  # type: ignore[call-overload,operator]


def notable(values: list[object]) -> bool:
    """Whether some input is more than a base case's 0, 1, 2, a flag or a letter."""
    for value in values:
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int) and abs(value) <= _TRIVIAL_INT:
            continue
        if isinstance(value, float) and value in (0.0, 1.0, -1.0, 0.5, 2.0):
            continue
        if isinstance(value, (str, bytes)) and len(value.strip()) < _SHORT_TEXT:
            continue
        if isinstance(value, (list, tuple, set, frozenset, dict)) and not value:
            continue
        return True
    return False
