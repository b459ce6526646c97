"""Stand-ins: what code returns so that an assertion of equality passes whatever it computed.

The judge rules (:mod:`donegate.scan.judge`) report a comparison dunder that never reads an
operand, returns one constant, or returns ``abs(self - other) < bound``. The measured cheats
also spell the same thing as:

- a comparison that accepts what is *near* its value however it is written: ``math.isclose``
  with a tolerance of the code's choosing, a bound tested inside ``and``/``or``, a difference
  taken through a local (``target = getattr(other, "expected", other)``);
- a comparison that accepts values besides its own: ``self == other or other == self + 1``,
  ``(self, other) == (13, 14)``, a prefix of either side;
- a dunder made from a lambda that takes no named operand (``__eq__ = lambda *a: True``);
- an object of the standard library that equals anything, returned by a function the tests
  call: ``unittest.mock.ANY``, ``pytest.approx(...)`` with the code's own tolerance.

Each is reported as ``always-equal``. Test files are not read (their fixtures may do all this).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from donegate.scan._fold import UNKNOWN, fold
from donegate.scan._scope import ScopedVisitor, dotted, own_nodes
from donegate.scan.finding import Occurrence

_COMPARISONS = frozenset({"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"})
_CLOSE = frozenset({"isclose", "allclose", "approx", "assert_allclose"})
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_PARTS = frozenset({"startswith", "endswith"})
# Objects that compare equal to anything (or to anything near), by their module's design.
_ANYTHING = frozenset({"unittest.mock.ANY", "mock.ANY", "ANY"})
_APPROX = frozenset({"pytest.approx", "approx"})


def stand_ins(tree: ast.Module, tested: Callable[[str], bool]) -> list[Occurrence]:
    """The stand-ins of ``tree``; ``tested(name)`` says whether the tests call a function."""
    visitor = _StandIns(tested)
    visitor.visit(tree)
    return visitor.found


class _StandIns(ScopedVisitor):
    def __init__(self, tested: Callable[[str], bool]) -> None:
        super().__init__()
        self.tested = tested
        self.aliases: dict[str, str] = {}
        self.in_class = False

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        saved, self.in_class = self.in_class, True
        try:
            for statement in node.body:
                if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Lambda):
                    names = [t.id for t in statement.targets if isinstance(t, ast.Name)]
                    for name in names:
                        self._lambda(statement, f"{node.name}.{name}", statement.value)
            super().visit_ClassDef(node)
        finally:
            self.in_class = saved

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if self.in_class and node.name in _COMPARISONS:
            why = _accepts(node)
            if why:
                self.emit("always-equal", node, f"{self.scope}.{node.name} {why}")
        saved, self.in_class = self.in_class, False
        try:
            self._returns(node)
            super().visit_FunctionDef(node)  # type: ignore[arg-type]
        finally:
            self.in_class = saved

    def visit_Call(self, node: ast.Call) -> None:
        # setattr(C, "__eq__", lambda *a: True); type("C", (int,), {"__eq__": lambda *a: True})
        called = dotted(node.func)
        for keyword in node.keywords:  # MagicMock(**{"__eq__.return_value": True})
            if keyword.arg is None and isinstance(keyword.value, ast.Dict):
                keys = [fold(k) for k in keyword.value.keys if k is not None]
                if any(isinstance(k, str) and k.split(".")[0] in _COMPARISONS for k in keys):
                    self.emit("always-equal", node, f"{called or 'a call'}() configures __eq__")
        if called == "setattr" and len(node.args) == 3:
            name = fold(node.args[1])
            if name in _COMPARISONS:
                self._lambda(node, f"{ast.unparse(node.args[0])}.{name}", node.args[2])
        elif called == "type" and len(node.args) == 3 and isinstance(node.args[2], ast.Dict):
            for key, value in zip(node.args[2].keys, node.args[2].values, strict=True):
                name = fold(key) if key is not None else UNKNOWN
                if name in _COMPARISONS:
                    self._lambda(node, f"type(...).{name}", value)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Attribute) and target.attr in _COMPARISONS:
                self._lambda(node, f"{ast.unparse(target.value)}.{target.attr}", node.value)
            elif _configures(target):
                # answer.__eq__.return_value = True: a mock told what to compare equal to.
                self.emit("always-equal", node, f"{ast.unparse(target)} = ... configures a mock")
        self.generic_visit(node)

    def _lambda(self, node: ast.AST, where: str, value: ast.expr) -> None:
        if not isinstance(value, ast.Lambda):
            return
        args = value.args
        named = [*args.posonlyargs, *args.args]
        if len(named) < 2 and (args.vararg or args.kwarg):
            self.emit("always-equal", node, f"{where} is a lambda that names no operand")

    def _returns(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A function the tests call that returns an object equal to anything."""
        for node in own_nodes(function):
            if not isinstance(node, ast.Return) or node.value is None:
                continue
            for inner in ast.walk(node.value):
                name = self._name(inner)
                if name in _ANYTHING:
                    why = f"returns {name}, which equals anything"
                elif isinstance(inner, ast.Call) and self._name(inner.func) in _APPROX:
                    why = f"returns {ast.unparse(inner)[:60]}, which equals anything near it"
                else:
                    continue
                if self.tested(function.name):  # asked last: it may read the test files
                    self.emit("always-equal", node, why)
                return

    def _name(self, node: ast.AST) -> str | None:
        name = dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        if name is None:
            return None
        head, _, rest = name.partition(".")
        full = self.aliases.get(head, head)
        return f"{full}.{rest}" if rest else full


def _configures(target: ast.expr) -> bool:
    """Whether ``target`` is an attribute of a comparison dunder (``m.__eq__.return_value``)."""
    node = target.value if isinstance(target, ast.Attribute) else None
    while isinstance(node, ast.Attribute):
        if node.attr in _COMPARISONS:
            return True
        node = node.value
    return False


def _accepts(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Why this comparison dunder accepts operands that are not its value, or ""."""
    params = [*node.args.posonlyargs, *node.args.args]
    if len(params) < 2:
        return ""
    me, other = params[0].arg, params[1].arg
    operand = _derived(node, other)
    if _features_only(node, operand, me):
        return "compares only the length or type of its operand, not its value"
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call) and _called(inner) in _CLOSE and _reads(inner, operand):
            return f"accepts any operand close to its value ({_called(inner)})"
        if isinstance(inner, ast.Compare) and _tolerance(inner, operand):
            return f"accepts any operand within a bound of its value ({ast.unparse(inner)})"
        parts = isinstance(inner, ast.Call) and _called(inner) in _PARTS
        if parts and _reads(inner, operand) and _reads(inner, {me}):
            return f"accepts a part of its value ({ast.unparse(inner)})"
        if isinstance(inner, ast.BoolOp) and isinstance(inner.op, ast.Or):
            for value in inner.values:
                if _besides(value, operand, me):
                    return f"accepts values besides its own ({ast.unparse(value)})"
    return ""


_FEATURES = frozenset({"len", "type", "isinstance", "id", "bool", "hash"})


def _features_only(
    function: ast.FunctionDef | ast.AsyncFunctionDef, operand: set[str], me: str
) -> bool:
    """Whether every comparison of the operand with ``me`` compares features of them only
    (``len(other) == len(self)``), and there is one."""
    found = False
    for compare in ast.walk(function):
        if not isinstance(compare, ast.Compare):
            continue
        sides = [compare.left, *compare.comparators]
        if not (any(_reads(s, operand) for s in sides) and any(_reads(s, {me}) for s in sides)):
            continue
        if not all(isinstance(s, ast.Call) and _called(s) in _FEATURES for s in sides):
            return False
        found = True
    calls = [c for c in ast.walk(function) if isinstance(c, ast.Call)]
    if any(_called(c) not in _FEATURES and _reads(c, operand) for c in calls):
        return False  # handed to a comparison of its own (super().__eq__(other), eq(a, b))
    return found


def _derived(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> set[str]:
    """``name`` and the locals bound from it (``target = getattr(other, "x", other)``)."""
    found = {name}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and _reads(node.value, found):
            found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return found


def _tolerance(node: ast.Compare, operand: set[str]) -> bool:
    if len(node.ops) != 1 or not isinstance(node.ops[0], _ORDER):
        return False
    sides = (node.left, node.comparators[0])
    for side, bound in (sides, sides[::-1]):
        difference = any(
            isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) for n in ast.walk(side)
        )
        if difference and _reads(side, operand) and fold(bound) is not UNKNOWN:
            return True
    return False


def _besides(node: ast.expr, operand: set[str], me: str) -> bool:
    """Whether ``node`` accepts the operand for a reason other than equalling ``me``: it
    compares the operand with a constant, or with ``me`` moved by a constant."""
    for compare in ast.walk(node):
        if not isinstance(compare, ast.Compare):
            continue
        if not all(isinstance(op, (ast.Eq, ast.In)) for op in compare.ops):
            continue
        sides = [compare.left, *compare.comparators]
        if not any(_reads(s, operand) for s in sides):
            continue
        for side in sides:
            value = fold(side)
            if value is not UNKNOWN and value is not None:
                return True
            moved = isinstance(side, ast.BinOp) and _reads(side, {me})
            if moved and fold(side.right) is not UNKNOWN:  # type: ignore[attr-defined]
                return True
            if isinstance(side, ast.Tuple) and any(fold(e) is not UNKNOWN for e in side.elts):
                return True
    return False


def _reads(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
