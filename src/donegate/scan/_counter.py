"""Calls counted: a function that keeps state across calls and picks its answer by it.

``_calls += 1; if _calls == 2: return "94107"`` passes the tests in the order they run and no
other order. The rule, within one function: a *persistent* state (a ``global`` or ``nonlocal``
name, an attribute of an object, a mutable default argument, a module-level container) is
*counted* (augmented, toggled with ``x = not x``, advanced with ``next``, appended to), and the
same state decides a returned value: it is compared with a constant (``==``, ``%``) or tested
as a toggle in a condition whose branch returns a value, or it indexes a returned table.
``return next(_ANSWERS)`` over a module-level ``iter([...])`` or ``cycle([...])`` is the same
cheat without a condition. A counter that only limits work (``if self.retries > 3: raise``),
walks a text (``self.pos >= len(text)``) or names ids (``next(self._ids)``) returns nothing by
it and is not reported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_MUTABLE_CALLS = frozenset({"list", "dict", "set", "count", "Counter", "defaultdict", "deque"})
_APPENDERS = frozenset({"append", "add", "extend", "appendleft"})
_SEQUENCES = frozenset({"iter", "cycle"})
Function = ast.FunctionDef | ast.AsyncFunctionDef


def counters(function: Function, module: ast.Module) -> Iterator[tuple[ast.AST, str]]:
    """(node, detail) for each counted state of ``function`` that decides what it returns."""
    if not any(map(_may_count, _own_nodes(function))):
        return  # most functions count nothing: no state to work out
    persistent = _Persistent(function, module)
    counted = set(_counted(function, persistent))
    for node in _own_nodes(function):
        if isinstance(node, ast.Return) and node.value is not None:
            sequence = _prepared_sequence(node.value, module)
            if sequence:
                yield node, f"{function.name} returns the next of {sequence}"
    if not counted:
        return
    for node, test, index in _decisions(function, module):
        keys = _reads(test, counted)
        if keys and _picks(test, keys, index):
            yield (
                node,
                f"{function.name}: {sorted(keys)[0]} counts its calls and decides "
                + (f"{ast.unparse(test)}"),
            )


class _Persistent:
    """Which expressions of a function outlive a call."""

    def __init__(self, function: Function, module: ast.Module) -> None:
        own = list(_own_nodes(function))
        self.declared = {
            name for n in own if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names
        }
        args = function.args
        positional = [*args.posonlyargs, *args.args][-len(args.defaults) :] if args.defaults else []
        pairs = [*zip(positional, args.defaults, strict=True)]
        pairs += [(p, d) for p, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
        self.defaults = {p.arg for p, d in pairs if _mutable(d)}
        self.locals = {t.id for n in own for t in _targets(n) if isinstance(t, ast.Name)}
        self.module = {
            t.id
            for s in module.body
            if isinstance(s, ast.Assign) and _mutable(s.value)
            for t in s.targets
            if isinstance(t, ast.Name)
        }

    def key(self, node: ast.expr) -> str | None:
        """The state ``node`` is (its source text), or None when it is a call's own."""
        root = node
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if not isinstance(root, ast.Name):
            return None
        name = root.id
        if name in self.declared or name in self.defaults:
            return ast.unparse(node)
        if node is root:
            return None
        if name in self.module and name not in self.locals:
            return ast.unparse(node)
        # self.calls, Cls.calls, func.calls: an object outlives the call unless made in it.
        outlives = isinstance(node, ast.Attribute) and name not in self.locals
        return ast.unparse(node) if outlives else None


def _counted(function: Function, persistent: _Persistent) -> Iterator[str]:
    for node in _own_nodes(function):
        if isinstance(node, ast.AugAssign):
            key = persistent.key(node.target)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            key = persistent.key(node.targets[0])
            key = key if key and _reads_text(node.value, key) else None
        elif isinstance(node, ast.Call) and node.args and _called(node) == "next":
            key = persistent.key(node.args[0])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            key = persistent.key(node.func.value) if node.func.attr in _APPENDERS else None
        else:
            key = None
        if key:
            yield key


def _may_count(node: ast.AST) -> bool:
    if isinstance(node, (ast.AugAssign, ast.Global, ast.Nonlocal)):
        return True
    if isinstance(node, ast.Assign):
        return isinstance(node.value, (ast.UnaryOp, ast.BinOp))
    return isinstance(node, ast.Call) and _called(node) in ("next", *_APPENDERS)


def _decisions(function: Function, module: ast.Module) -> Iterator[tuple[ast.AST, ast.expr, bool]]:
    """(node, deciding expression, whether it indexes) for what ``function`` returns by.

    Indexing counts only into a table of constants: ``self.items[self.i]`` is an iterator.
    """
    tables = {
        t.id
        for s in module.body
        if isinstance(s, ast.Assign) and _literal(s.value)
        for t in s.targets
        if isinstance(t, ast.Name)
    }
    for node in _own_nodes(function):
        if isinstance(node, (ast.If, ast.While)):
            if _returns_value(node.body) or _returns_value(node.orelse):
                yield node, node.test, False
        elif isinstance(node, ast.Return) and node.value is not None:
            for inner in ast.walk(node.value):
                if isinstance(inner, ast.IfExp):
                    yield inner, inner.test, False
                elif isinstance(inner, ast.Subscript) and (
                    _literal(inner.value) or ast.unparse(inner.value) in tables
                ):
                    yield inner, inner.slice, True
        elif isinstance(node, ast.Match) and any(_returns_value(c.body) for c in node.cases):
            yield node, node.subject, True


def _reads(test: ast.expr, counted: set[str]) -> set[str]:
    texts = {ast.unparse(n) for n in ast.walk(test) if isinstance(n, ast.expr)}
    found = texts & counted
    # next(state) in the condition reads the state by advancing it.
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and _called(node) in ("next", "len") and node.args:
            arg = ast.unparse(node.args[0])
            found |= {arg} & counted
    return found


def _picks(test: ast.expr, keys: set[str], index: bool) -> bool:
    """Whether ``test`` picks by the state: it indexes or is matched by it, compares it with a
    constant, takes it modulo, or is the state itself (a toggle)."""
    if index or ast.unparse(test) in keys:
        return True
    if isinstance(test, ast.UnaryOp) and ast.unparse(test.operand) in keys:
        return True
    for node in ast.walk(test):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Constant) and o.value is not None for o in operands):
                return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return True
    return False


def _prepared_sequence(value: ast.expr, module: ast.Module) -> str | None:
    if not (isinstance(value, ast.Call) and _called(value) == "next" and value.args):
        return None
    target = value.args[0]
    if not isinstance(target, ast.Name):
        return None
    for statement in module.body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == target.id for t in statement.targets
        ):
            bound = statement.value
            literal = isinstance(bound, ast.Call) and bound.args and _literal(bound.args[0])
            if isinstance(bound, ast.Call) and _called(bound) in _SEQUENCES and literal:
                return f"{target.id} = {ast.unparse(bound)[:60]}"
    return None


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    return True


def _own_nodes(function: Function) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body, not those of functions or classes defined in it."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append(child)


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return [e for t in node.targets for e in _flat(t)]
    if isinstance(node, (ast.AnnAssign, ast.For, ast.AsyncFor)):
        return _flat(node.target)
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return _flat(node.optional_vars)
    if isinstance(node, ast.NamedExpr):
        return [node.target]
    return []


def _flat(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [e for t in target.elts for e in _flat(t)]
    return [target]


def _mutable(node: ast.expr | None) -> bool:
    if isinstance(node, (ast.List, ast.Dict, ast.Set)):
        return True
    return isinstance(node, ast.Call) and _called(node) in _MUTABLE_CALLS


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _returns_value(body: list[ast.stmt]) -> bool:
    for statement in body:
        for node in ast.walk(statement):
            value = node.value if isinstance(node, ast.Return) else None
            if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
                return True
    return False


def _reads_text(node: ast.expr, key: str) -> bool:
    return any(ast.unparse(n) == key for n in ast.walk(node) if isinstance(n, ast.expr))
