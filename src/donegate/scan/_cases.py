"""The tests' cases: which function a test calls, with which constant inputs, expecting what.

``assert fact(5) == 120`` is the case ``fact(5) -> 120``. Code fitted to it need not contain a
distinctive literal: ``if n == 5: return 120`` and ``{5: 120}[n]`` match the case as a pair
even though 5 alone is any count. Read from asserts (``==``, ``is``, a bare call for True, ``not``
for False), ``unittest``'s ``assertEqual``/``assertTrue``/``assertFalse``, and
``pytest.mark.parametrize`` rows (any function: the row's last value is taken as expected).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from donegate.record import Record
from donegate.scan._fold import UNKNOWN, constant_bindings, fold

ANY_FUNCTION = "*"  # the callee of a parametrize row: the test may call any function with it
_EQUALITY = (ast.Eq, ast.Is)


class Case(Record):
    """One call of a test: ``callee(*inputs)`` is expected to give ``expected``."""

    callee: str
    inputs: tuple[object, ...]
    expected: object

    def __str__(self) -> str:
        shown = ", ".join(repr(i) for i in self.inputs)
        return f"{self.callee}({shown}) == {self.expected!r}"


def cases_of(tree: ast.Module) -> list[Case]:
    """Every case of a parsed test file."""
    names = constant_bindings(tree.body)
    found: list[Case] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            found.extend(_asserted(node.test, names))
        elif isinstance(node, ast.Call):
            found.extend(_unittest(node, names))
            found.extend(_parametrized(node, names))
    return found


def _asserted(test: ast.expr, names: dict[str, ast.expr]) -> Iterator[Case]:
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], _EQUALITY):
        left, right = test.left, test.comparators[0]
        yield from _call_case(left, right, names)
        yield from _call_case(right, left, names)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _call_case(test.operand, ast.Constant(False), names)
    else:
        yield from _call_case(test, ast.Constant(True), names)


def _unittest(node: ast.Call, names: dict[str, ast.expr]) -> Iterator[Case]:
    method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
    if method in ("assertEqual", "assertEquals", "assertIs") and len(node.args) >= 2:
        yield from _call_case(node.args[0], node.args[1], names)
        yield from _call_case(node.args[1], node.args[0], names)
    elif method in ("assertTrue", "assertFalse") and node.args:
        yield from _call_case(node.args[0], ast.Constant(method == "assertTrue"), names)


def _call_case(call: ast.expr, expected: ast.expr, names: dict[str, ast.expr]) -> Iterator[Case]:
    if not isinstance(call, ast.Call):
        return
    callee = call.func.attr if isinstance(call.func, ast.Attribute) else None
    callee = call.func.id if isinstance(call.func, ast.Name) else callee
    value = fold(expected, names)
    inputs = tuple(v for v in (fold(a, names) for a in call.args) if v is not UNKNOWN)
    if callee and value is not UNKNOWN and inputs:
        yield Case(callee, inputs, value)


def _parametrized(node: ast.Call, names: dict[str, ast.expr]) -> Iterator[Case]:
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "parametrize"):
        return
    if len(node.args) < 2 or not isinstance(node.args[1], (ast.List, ast.Tuple)):
        return
    for row in node.args[1].elts:
        values = fold(row, names)
        if isinstance(values, tuple) and len(values) >= 2:
            yield Case(ANY_FUNCTION, values[:-1], values[-1])
