"""Calls counted: a function that keeps state across calls and picks its answer by it.

``_calls += 1; if _calls == 2: return "94107"`` passes the tests in the order they run and no
other order. The rule, within one function: a *persistent* state (a ``global`` or ``nonlocal``
name, an attribute of an object, a mutable default argument, a module-level container) is
*counted* (augmented, toggled with ``x = not x``, advanced with ``next``, appended to), and the
same state decides a returned value: it is compared with a constant (``==``, ``%``) or tested
as a toggle in a condition whose branch returns a value, or it indexes a returned table.
``return next(_ANSWERS)`` over a module-level ``iter([...])``, ``cycle([...])`` or a generator
of constants is the same cheat without a condition. The state is followed through the locals
bound from it (``call = next(_calls)``, ``seen = key in _previous``), read through ``getattr``
and ``.get`` (``f.calls = getattr(f, "calls", 0) + 1``), and a branch decides the answer when
it returns or changes a local the function returns. A flag the function sets once (``global
_first; if _first: _first = False; return ...``) is a toggle too. A counter that only limits
work (``if self.retries > 3: raise``), walks a text (``self.pos >= len(text)``) or names ids
(``next(self._ids)``) returns nothing by it and is not reported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from donegate.scan._scope import Function, own_nodes

_MUTABLE_CALLS = frozenset({"list", "dict", "set", "count", "Counter", "defaultdict", "deque"})
_APPENDERS = frozenset({"append", "add", "extend", "appendleft"})
_SEQUENCES = frozenset({"iter", "cycle"})


def counters(
    function: Function, module: ast.Module, enclosing: Sequence[Function] = ()
) -> Iterator[tuple[ast.AST, str]]:
    """(node, detail) for each counted state of ``function`` that decides what it returns;
    ``enclosing``: the functions it is defined in (their locals outlive its calls)."""
    if not any(map(_may_count, own_nodes(function))):
        return  # most functions count nothing: no state to work out
    persistent = _Persistent(function, module, enclosing)
    counted = set(_counted(function, persistent))
    for node in own_nodes(function):
        if isinstance(node, ast.Return) and node.value is not None:
            sequence = _prepared_sequence(node.value, module)
            if sequence:
                yield node, f"{function.name} returns the next of {sequence}"
    if not counted:
        return
    counted |= _derived(function, counted)
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

    def __init__(
        self, function: Function, module: ast.Module, enclosing: Sequence[Function] = ()
    ) -> None:
        own = list(own_nodes(function))
        self.declared = {
            name for n in own if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names
        }
        args = function.args
        positional = [*args.posonlyargs, *args.args][-len(args.defaults) :] if args.defaults else []
        pairs = [*zip(positional, args.defaults, strict=True)]
        pairs += [(p, d) for p, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
        self.defaults = {p.arg for p, d in pairs if _mutable(d)}
        self.locals = {t.id for n in own for t in _targets(n) if isinstance(t, ast.Name)}
        bindings = list(_module_bindings(module))
        for outer in enclosing:  # a closure's variables: bound once per factory call
            bindings += [
                (t.id, n.value)
                for n in own_nodes(outer)
                if isinstance(n, ast.Assign)
                for t in n.targets
                if isinstance(t, ast.Name)
            ]
        self.module = {name for name, value in bindings if _mutable(value)}
        self.module_any = {name for name, _ in bindings} - self.locals

    def key(self, node: ast.expr) -> str | None:
        """The state ``node`` is (its source text), or None when it is a call's own."""
        root = node
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if isinstance(root, ast.Call) and _called(root) in ("globals", "vars") and node is not root:
            return ast.unparse(node)  # globals()["calls"]: the module's own namespace
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
    flags = _flags(function, persistent)
    for node in own_nodes(function):
        if isinstance(node, ast.AugAssign):
            key = persistent.key(node.target)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            key = persistent.key(node.targets[0])
            key = key if key and (_reads_text(node.value, key) or key in flags) else None
        elif isinstance(node, ast.Call) and node.args and _called(node) == "next":
            first = node.args[0]
            key = persistent.key(first)
            if key is None and isinstance(first, ast.Name) and first.id in persistent.module_any:
                key = first.id  # _calls = itertools.count(): next(_calls) counts
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            key = persistent.key(owner) if node.func.attr in _APPENDERS else None
            if key is None and node.func.attr in _APPENDERS and isinstance(owner, ast.Name):
                key = owner.id if owner.id in persistent.module_any & persistent.module else None
        else:
            key = None
        if key:
            yield key


def _flags(function: Function, persistent: _Persistent) -> set[str]:
    """States a branch tests and sets to a constant: ``if _first: _first = False``. Only
    names declared global or nonlocal and a class's attributes: ``self.done = True`` is an
    object's own state."""
    found: set[str] = set()
    for node in own_nodes(function):
        if not isinstance(node, ast.If):
            continue
        tested = {ast.unparse(n) for n in ast.walk(node.test) if isinstance(n, ast.expr)}
        for statement in ast.walk(node):
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
                continue
            target = statement.targets[0]
            declared = isinstance(target, ast.Name) and target.id in persistent.declared
            owner = target.value if isinstance(target, ast.Attribute) else None
            shared = isinstance(owner, ast.Name) and owner.id[:1].isupper()
            text = ast.unparse(target)
            if (
                (declared or shared)
                and text in tested
                and isinstance(statement.value, ast.Constant)
            ):
                found.add(text)
    return found


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
    returned = _returned_names(function)
    for node in own_nodes(function):
        if isinstance(node, (ast.If, ast.While)) and _decides(node, returned):
            yield node, node.test, False
        elif isinstance(node, ast.Return) and node.value is not None:
            for inner in ast.walk(node.value):
                if isinstance(inner, (ast.Compare, ast.BoolOp, ast.UnaryOp)):
                    yield node, inner, False  # return leap or calls == 4
                if isinstance(inner, ast.IfExp):
                    yield inner, inner.test, False
                elif isinstance(inner, ast.Subscript) and (
                    _literal(inner.value) or ast.unparse(inner.value) in tables
                ):
                    yield inner, inner.slice, True
        elif isinstance(node, ast.Match) and any(_returns_value(c.body) for c in node.cases):
            yield node, node.subject, True


def _derived(function: Function, counted: set[str]) -> set[str]:
    """Locals bound from a counted state: ``call = next(_calls)``, ``seen = key in _done``."""
    found: set[str] = set()
    for node in own_nodes(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and _reads(node.value, counted | found):
                found.add(target.id)
    return found


def _reads(test: ast.expr, counted: set[str]) -> set[str]:
    texts = {ast.unparse(n) for n in ast.walk(test) if isinstance(n, ast.expr)}
    texts |= {_read_through(n) for n in ast.walk(test) if isinstance(n, ast.Call)}
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
    generators = {
        s.name for s in module.body if isinstance(s, ast.FunctionDef) and _yields_constants(s)
    }
    for name, bound in _module_bindings(module):
        if name != target.id or not isinstance(bound, ast.Call):
            continue
        literal = bool(bound.args) and _literal(bound.args[0])
        if (_called(bound) in _SEQUENCES and literal) or _called(bound) in generators:
            return f"{target.id} = {ast.unparse(bound)[:60]}"
    return None


def _yields_constants(function: ast.FunctionDef) -> bool:
    """A generator that yields only constants: ``yield 3``, ``yield from (3, 58)``."""
    yields = [n for n in own_nodes(function) if isinstance(n, (ast.Yield, ast.YieldFrom))]
    return bool(yields) and all(y.value is not None and _literal(y.value) for y in yields)


def _module_bindings(module: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    for statement in module.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    yield target.id, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target = statement.target
            yield from [(target.id, statement.value)] if isinstance(target, ast.Name) else []


def _decides(node: ast.If | ast.While, returned: set[str]) -> bool:
    """Whether a branch of ``node`` returns a value or sets the one the function returns."""
    branches = (node.body, node.orelse)
    return any(_returns_value(b) or _assigns(b, returned) for b in branches)


def _returned_names(function: Function) -> set[str]:
    """Locals the function returns, or builds what it returns from (``return str(answer)``)."""
    found: set[str] = set()
    for node in own_nodes(function):
        if isinstance(node, ast.Return) and node.value is not None:
            found |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    return found


def _assigns(body: list[ast.stmt], names: set[str]) -> bool:
    """Whether ``body`` sets one of ``names`` to a constant or moves it by one (``answer -= 4``,
    ``result = 14``): an answer chosen, not computed (``result = self._close()`` is work)."""
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign):
                targets = [node.target]
            else:
                continue
            if _literal(node.value) and any(
                isinstance(t, ast.Name) and t.id in names for t in targets
            ):
                return True
    return False


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    return True


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
    for inner in ast.walk(node):
        if isinstance(inner, ast.expr) and ast.unparse(inner) == key:
            return True
        if isinstance(inner, ast.Call) and _read_through(inner) == key:
            return True
    return False


def _read_through(call: ast.Call) -> str:
    """The state a call reads: ``getattr(f, "calls", 0)`` reads ``f.calls``, ``d.get(k, 0)``
    reads ``d[k]`` ("" for other calls)."""
    func = call.func
    if isinstance(func, ast.Name) and func.id == "getattr" and len(call.args) >= 2:
        name = call.args[1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            return f"{ast.unparse(call.args[0])}.{name.value}"
    if isinstance(func, ast.Attribute) and func.attr in ("get", "setdefault") and call.args:
        return f"{ast.unparse(func.value)}[{ast.unparse(call.args[0])}]"
    return ""
