"""The tests' cases: which function a test calls, with which constant inputs, expecting what.

``assert fact(5) == 120`` is the case ``fact(5) -> 120``. Code fitted to it need not contain a
distinctive literal: ``if n == 5: return 120`` and ``{5: 120}[n]`` match the case as a pair
even though 5 alone is any count. Read from asserts (``==``, ``is``, a bare call for True, ``not``
for False), ``unittest``'s ``assertEqual``/``assertTrue``/``assertFalse``, and
``pytest.mark.parametrize`` rows (any function: the row's last value is taken as expected).

The inputs are followed where tests keep them: names bound in the test function or the module,
the rows of a ``for`` loop over a constant table, a parametrized test's arguments, and the
function a helper is handed (ImpossibleBench's ``def check(candidate): assert candidate(7) ==
13`` called as ``check(fib)`` is the case ``fib(7) -> 13``). Values keep their type: a list the
test passes is a list (:func:`frozen` makes one hashable).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

from donegate.record import Record
from donegate.scan._fold import UNKNOWN, constant_bindings, fold

ANY_FUNCTION = "*"  # the callee of a parametrize row: the test may call any function with it
_EQUALITY = (ast.Eq, ast.Is)
_MAX_ROWS = 500  # rows of a loop or a parametrize read per test


class Case(Record):
    """One call of a test: ``callee(*inputs, **keywords)`` is expected to give ``expected``.

    ``complete``: every argument of the call is known (``inputs`` are then its positional
    arguments in order; otherwise only the known ones).
    """

    callee: str
    inputs: tuple[object, ...]
    expected: object
    complete: bool = False
    keywords: tuple[tuple[str, object], ...] = ()

    def __str__(self) -> str:
        shown = ", ".join(repr(i) for i in self.inputs)
        return f"{self.callee}({shown}) == {self.expected!r}"


def frozen(value: object) -> object:
    """``value`` made hashable: lists as tuples, sets as frozensets, dicts as item tuples."""
    if isinstance(value, (list, tuple)):
        return tuple(frozen(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple((frozen(k), frozen(v)) for k, v in value.items())
    return value


def cases_of(tree: ast.Module) -> list[Case]:
    """Every case of a parsed test file."""
    reader = _Reader()
    reader.block(tree.body, constant_bindings(tree.body), "")
    if reader.handed_on:  # check(candidate): find what the file hands each function
        handed = _handed(tree)
        for function, case in reader.handed_on:
            callees = handed.get(function, {}).get(case.callee, set())
            reader.found += [case._replace(callee=c) for c in sorted(callees)]
    return reader.found


class _Reader:
    def __init__(self) -> None:
        self.found: list[Case] = []
        # Cases whose callee is a parameter of the test function: (function, case).
        self.handed_on: list[tuple[str, Case]] = []
        self.params: dict[str, set[str]] = {}

    def block(self, body: list[ast.stmt], names: dict[str, ast.expr], function: str) -> None:
        names = dict(names)
        for statement in body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if isinstance(target, ast.Name):
                    names[target.id] = statement.value  # result = f(x); assert result == 6
                    continue
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.function(statement, names)
            elif isinstance(statement, ast.ClassDef):
                self.block(statement.body, names, function)
            elif isinstance(statement, (ast.For, ast.AsyncFor)):
                self.loop(statement, names, function)
            else:
                self.statement(statement, names, function)

    def function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, names: dict[str, ast.expr]
    ) -> None:
        params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        local = {k: v for k, v in names.items() if k not in params}
        local.update(constant_bindings(node.body))
        self.params[node.name] = params
        rows = list(_parametrize_rows(node, names))
        for row in rows[:_MAX_ROWS]:
            self.block(node.body, {**local, **row}, node.name)
        if not rows:
            self.block(node.body, local, node.name)
        for decorator in node.decorator_list:
            for call in ast.walk(decorator):
                if isinstance(call, ast.Call):
                    self.found.extend(_parametrized(call, names))

    def loop(self, node: ast.For | ast.AsyncFor, names: dict[str, ast.expr], function: str) -> None:
        rows = _literal(node.iter, names)
        if isinstance(rows, (list, tuple)):
            for row in rows[:_MAX_ROWS]:
                bound = _bind(node.target, row)
                if bound is not None:
                    self.block(node.body, {**names, **bound}, function)
        else:
            self.block(node.body, names, function)
        self.block(node.orelse, names, function)

    def statement(self, node: ast.stmt, names: dict[str, ast.expr], function: str) -> None:
        nested = _blocks(node)
        if nested:
            for inner in nested:
                self.block(inner, names, function)
            return
        for part in ast.walk(node):
            if isinstance(part, ast.Assert):
                found = _asserted(part.test, names)
            elif isinstance(part, ast.Call):
                found = _unittest(part, names)
            else:
                continue
            for case in found:
                if case.callee in self.params.get(function, ()):
                    self.handed_on.append((function, case))
                else:
                    self.found.append(case._replace(callee=_alias(case.callee, names)))


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists inside a compound statement (an ``if``, ``with``, ``try``...)."""
    if isinstance(node, (ast.If, ast.While)):
        return [node.body, node.orelse]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [node.body]
    if isinstance(node, ast.Try):
        return [node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody]
    return []


def _handed(tree: ast.Module) -> dict[str, dict[str, set[str]]]:
    """For each function of the file, its parameters that are called and the functions the
    file hands them (``check(fib)``: ``check``'s ``candidate`` is ``fib``)."""
    params: dict[str, list[str]] = {}
    calls: list[ast.Call] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params[node.name] = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            calls.append(node)
    called = {c.func.id for c in calls}  # type: ignore[attr-defined]
    if not any(p in called for names in params.values() for p in names):
        return {}  # no function calls what it is handed: the common case
    handed: dict[str, dict[str, set[str]]] = {}
    for call in calls:
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            continue
        names = params.get(call.func.id, [])
        for param, arg in zip(names, call.args, strict=False):
            callee = _callee_name(arg)
            if callee is not None:
                handed.setdefault(call.func.id, {}).setdefault(param, set()).add(callee)
    return handed


def _callee_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _alias(callee: str, names: Mapping[str, ast.expr]) -> str:
    # solve = Solution().solve; f = module.function: the test calls the function by another name.
    bound = names.get(callee)
    name = _callee_name(bound) if bound is not None else None
    return name or callee


def _asserted(test: ast.expr, names: dict[str, ast.expr]) -> Iterator[Case]:
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], _EQUALITY):
        left, right = test.left, test.comparators[0]
        yield from _call_case(left, right, names)
        yield from _call_case(right, left, names)
    elif isinstance(test, ast.Compare) and len(test.ops) == 1:
        yield from _near(test.left, test.ops[0], test.comparators[0], names)
    elif isinstance(test, ast.Call) and _callee_name(test.func) == "isclose" and test.args:
        yield from _call_case(test.args[0], test.args[1], names) if len(test.args) > 1 else ()
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _call_case(test.operand, ast.Constant(False), names)
    else:
        yield from _call_case(test, ast.Constant(True), names)


def _unittest(node: ast.Call, names: dict[str, ast.expr]) -> Iterator[Case]:
    method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
    if method in ("assertEqual", "assertEquals", "assertIs", "assertAlmostEqual"):
        if len(node.args) >= 2:
            yield from _call_case(node.args[0], node.args[1], names)
            yield from _call_case(node.args[1], node.args[0], names)
    elif method in ("assertTrue", "assertFalse") and node.args:
        yield from _call_case(node.args[0], ast.Constant(method == "assertTrue"), names)


def _near(
    left: ast.expr, op: ast.cmpop, right: ast.expr, names: dict[str, ast.expr]
) -> Iterator[Case]:
    """``abs(f(x) - 2.0) < 1e-9``: the case ``f(x) -> 2.0``."""
    if not (isinstance(op, (ast.Lt, ast.LtE)) and isinstance(left, ast.Call) and left.args):
        return
    inner = left.args[0]
    if _callee_name(left.func) != "abs" or not isinstance(inner, ast.BinOp):
        return
    if isinstance(inner.op, ast.Sub):
        yield from _call_case(inner.left, inner.right, names)
        yield from _call_case(inner.right, inner.left, names)


def _call_case(call: ast.expr, expected: ast.expr, names: dict[str, ast.expr]) -> Iterator[Case]:
    if isinstance(call, ast.Name) and isinstance(names.get(call.id), ast.Call):
        call = names[call.id]  # result = f(x); assert result == 6
    if not isinstance(call, ast.Call):
        return
    callee = _callee_name(call.func)
    value = _literal(_approximated(expected), names)
    args = [_literal(a, names) for a in call.args]
    keywords = [(k.arg, _literal(k.value, names)) for k in call.keywords]
    inputs = tuple(v for v in args if v is not UNKNOWN)
    complete = len(inputs) == len(args) and all(
        k is not None and v is not UNKNOWN for k, v in keywords
    )
    if callee and value is not UNKNOWN and (inputs or keywords):
        known = tuple((k, v) for k, v in keywords if k is not None and v is not UNKNOWN)
        yield Case(callee, inputs, value, complete and not any(_starred(call)), known)


def _starred(call: ast.Call) -> Iterator[bool]:
    for arg in call.args:
        yield isinstance(arg, ast.Starred)


def _approximated(node: ast.expr) -> ast.expr:
    # pytest.approx(3.5) expects 3.5, give or take.
    if isinstance(node, ast.Call) and _callee_name(node.func) == "approx" and node.args:
        return node.args[0]
    return node


def _parametrized(node: ast.Call, names: dict[str, ast.expr]) -> Iterator[Case]:
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "parametrize"):
        return
    if len(node.args) < 2:
        return
    rows = _literal(node.args[1], names)
    if not isinstance(rows, (list, tuple)):
        return
    for row in rows[:_MAX_ROWS]:
        if isinstance(row, (list, tuple)) and len(row) >= 2:
            yield Case(ANY_FUNCTION, tuple(row[:-1]), row[-1])


def _parametrize_rows(
    node: ast.FunctionDef | ast.AsyncFunctionDef, names: dict[str, ast.expr]
) -> Iterator[dict[str, ast.expr]]:
    """Each row of the function's parametrize decorators, as its arguments' bindings."""
    for decorator in node.decorator_list:
        if not (
            isinstance(decorator, ast.Call)
            and isinstance(decorator.func, ast.Attribute)
            and decorator.func.attr == "parametrize"
            and len(decorator.args) >= 2
        ):
            continue
        argnames = _literal(decorator.args[0], names)
        if isinstance(argnames, str):
            argnames = [a.strip() for a in argnames.split(",") if a.strip()]
        rows = _literal(decorator.args[1], names)
        if not isinstance(argnames, (list, tuple)) or not isinstance(rows, (list, tuple)):
            continue
        target = ast.Tuple([ast.Name(str(a)) for a in argnames]) if len(argnames) > 1 else None
        for row in rows:
            bound = _bind(target, row) if target else {str(argnames[0]): _node(row)}
            if bound is not None:
                yield bound


def _bind(target: ast.expr | None, value: object) -> dict[str, ast.expr] | None:
    """Names of ``target`` bound to the parts of ``value`` (None: they do not fit)."""
    if isinstance(target, ast.Name):
        return {target.id: _node(value)}
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (list, tuple)):
        if len(target.elts) != len(value):
            return None
        bound: dict[str, ast.expr] = {}
        for element, item in zip(target.elts, value, strict=True):
            inner = _bind(element, item)
            if inner is None:
                return None
            bound.update(inner)
        return bound
    return None


def _node(value: object) -> ast.expr:
    """An expression that :func:`_literal` reads back as ``value``."""
    if isinstance(value, list):
        return ast.List([_node(v) for v in value])
    if isinstance(value, tuple):
        return ast.Tuple([_node(v) for v in value])
    if isinstance(value, (set, frozenset)):
        return ast.Set([_node(v) for v in value])
    if isinstance(value, dict):
        return ast.Dict([_node(k) for k in value], [_node(v) for v in value.values()])
    return ast.Constant(value)  # type: ignore[arg-type]  # a value fold gave: a constant


def _literal(node: ast.expr, names: Mapping[str, ast.expr], depth: int = 0) -> object:
    """The value ``node`` stands for, lists as lists (:func:`fold` makes them tuples)."""
    if depth > 20:
        return UNKNOWN
    if isinstance(node, ast.Name) and node.id in names:
        return _literal(names[node.id], {k: v for k, v in names.items() if k != node.id}, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_literal(e, names, depth + 1) for e in node.elts]
        if UNKNOWN in items:
            return UNKNOWN
        if isinstance(node, ast.Set):
            try:
                return set(items)
            except TypeError:
                return UNKNOWN
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        keys = [UNKNOWN if k is None else _literal(k, names, depth + 1) for k in node.keys]
        values = [_literal(v, names, depth + 1) for v in node.values]
        if UNKNOWN in keys or UNKNOWN in values:
            return UNKNOWN
        try:
            return dict(zip(keys, values, strict=True))
        except TypeError:
            return UNKNOWN
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = _literal(node.operand, names, depth + 1)
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            return -operand
        return UNKNOWN
    return fold(node, names)
