"""A condition of written code evaluated on a test's input: what it *means* for that case.

``if len(xs) == 5 and xs[0] == 2: return 7`` names no literal of the test ``f([2, 9, 4, 1, 3])
== 7``, but evaluated with ``xs`` bound to that input it is true, and it returns the case's
answer. :func:`evaluate` computes the few pure operations such conditions use (comparisons,
arithmetic, indexing, ``len``, ``sorted``, ``str`` methods, comprehensions...) on values only,
never calling anything the code defines, within a budget of steps and sizes. Anything else is
:class:`Unknown`; an error of the operation itself (a ``KeyError``, a ``ZeroDivisionError``) is
:class:`Raised`, which a ``try`` of the code may be built to catch.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterator, Mapping
from typing import Any

_MAX_STEPS = 20_000
_MAX_SIZE = 100_000  # longest sequence or string built
_MAX_BITS = 4_096  # largest integer built


class Unknown(Exception):
    """The expression is not one this module computes."""


class Raised(Exception):
    """The expression raised ``error`` (a builtin exception of the operation itself)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(repr(error))
        self.error = error


def _sized(value: Any) -> Any:
    if isinstance(value, (str, bytes, list, tuple, set, frozenset, dict)):
        if len(value) > _MAX_SIZE:
            raise Unknown
    elif isinstance(value, int) and value.bit_length() > _MAX_BITS:
        raise Unknown
    return value


def _hash(value: object) -> int:
    # A string's hash changes with every process: only numbers hash the same everywhere.
    if isinstance(value, (int, float)) or (
        isinstance(value, tuple) and all(isinstance(v, (int, float)) for v in value)
    ):
        return hash(value)
    raise Unknown


def _range(*args: int) -> list[int]:
    if not all(isinstance(a, int) for a in args) or len(range(*args)) > _MAX_SIZE:
        raise Unknown
    return list(range(*args))


def _listed(function: Callable[..., Any]) -> Callable[..., list[Any]]:
    return lambda *args: list(function(*args))


_BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len,
    "sum": sum,
    "min": min,
    "max": max,
    "sorted": sorted,
    "reversed": _listed(reversed),
    "tuple": tuple,
    "list": list,
    "set": set,
    "frozenset": frozenset,
    "str": str,
    "repr": repr,
    "int": int,
    "float": float,
    "bool": bool,
    "abs": abs,
    "ord": ord,
    "chr": chr,
    "all": all,
    "any": any,
    "enumerate": _listed(enumerate),
    "zip": _listed(zip),
    "range": _range,
    "round": round,
    "divmod": divmod,
    "hash": _hash,
    "dict": dict,
}
_MAPPED = frozenset({"str", "int", "float", "ord", "chr", "len", "abs", "repr", "tuple", "sorted"})
_METHODS: dict[type, frozenset[str]] = {
    str: frozenset(
        {
            "lower",
            "upper",
            "strip",
            "lstrip",
            "rstrip",
            "split",
            "rsplit",
            "splitlines",
            "join",
            "startswith",
            "endswith",
            "count",
            "find",
            "rfind",
            "replace",
            "isdigit",
            "isalpha",
            "isalnum",
            "isspace",
            "islower",
            "isupper",
            "isdecimal",
            "isnumeric",
            "casefold",
            "title",
            "capitalize",
            "swapcase",
            "zfill",
            "partition",
            "rpartition",
            "removeprefix",
            "removesuffix",
            "encode",
        }
    ),
    bytes: frozenset({"decode", "startswith", "endswith", "count", "lower", "upper", "strip"}),
    list: frozenset({"count", "index"}),
    tuple: frozenset({"count", "index"}),
    dict: frozenset({"get", "keys", "values", "items"}),
    int: frozenset({"bit_length", "bit_count"}),
    float: frozenset({"is_integer"}),
    set: frozenset({"issubset", "issuperset", "union", "intersection", "difference"}),
    frozenset: frozenset({"issubset", "issuperset", "union", "intersection", "difference"}),
}
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: lambda a, b: a is b or (_is_singleton(b) and a == b and type(a) is type(b)),
    ast.IsNot: lambda a, b: not (a is b or (_is_singleton(b) and a == b and type(a) is type(b))),
}
_CONVERSIONS: dict[int, Callable[[object], str]] = {ord("r"): repr, ord("s"): str, ord("a"): ascii}
# The plain values a test passes and code compares with; no object of the code is ever one.
_VALUES = (str, bytes, int, float, complex, bool, type(None), list, tuple, set, frozenset, dict)


def _is_singleton(value: object) -> bool:
    return value is None or isinstance(value, bool)


def evaluate(node: ast.expr, scope: Mapping[str, object]) -> object:
    """The value of ``node`` with the names of ``scope`` bound; raises :class:`Unknown` or
    :class:`Raised`."""
    return _Evaluator(scope).value(node)


class _Evaluator:
    def __init__(self, scope: Mapping[str, object]) -> None:
        self.scope = dict(scope)
        self.steps = 0

    def value(self, node: ast.expr) -> Any:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise Unknown
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise Unknown
        try:
            result = method(node)
        except (Unknown, Raised):
            raise
        except (ArithmeticError, LookupError, ValueError, TypeError, AttributeError) as error:
            raise Raised(error) from None
        if not isinstance(result, _VALUES) and not _iterable_view(result):
            raise Unknown
        return _sized(result)

    def _Constant(self, node: ast.Constant) -> Any:
        return node.value

    def _Name(self, node: ast.Name) -> Any:
        if node.id not in self.scope:
            raise Unknown
        return self.scope[node.id]

    def _Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self._elements(node.elts))

    def _List(self, node: ast.List) -> Any:
        return self._elements(node.elts)

    def _Set(self, node: ast.Set) -> Any:
        return set(self._elements(node.elts))

    def _Dict(self, node: ast.Dict) -> Any:
        if any(k is None for k in node.keys):
            raise Unknown
        return {self.value(k): self.value(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]

    def _elements(self, elements: list[ast.expr]) -> list[Any]:
        found: list[Any] = []
        for element in elements:
            if isinstance(element, ast.Starred):
                found.extend(self.value(element.value))
            else:
                found.append(self.value(element))
        return found

    def _BinOp(self, node: ast.BinOp) -> Any:
        left, right = self.value(node.left), self.value(node.right)
        op = type(node.op)
        if op not in _BINARY:
            raise Unknown
        if op is ast.Pow and isinstance(right, int) and abs(right) > 512:
            raise Unknown
        if op is ast.LShift and isinstance(right, int) and right > _MAX_BITS:
            raise Unknown
        if op is ast.Mult and _too_long(left, right):
            raise Unknown
        return _BINARY[op](left, right)

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:
        operand = self.value(node.operand)
        if isinstance(node.op, ast.Not):
            return not operand
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.UAdd):
            return +operand
        return ~operand

    def _BoolOp(self, node: ast.BoolOp) -> Any:
        result: Any = None
        for operand in node.values:
            result = self.value(operand)
            if bool(result) is isinstance(node.op, ast.Or):
                return result
        return result

    def _Compare(self, node: ast.Compare) -> Any:
        left = self.value(node.left)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.value(comparator)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def _IfExp(self, node: ast.IfExp) -> Any:
        return self.value(node.body if self.value(node.test) else node.orelse)

    def _Subscript(self, node: ast.Subscript) -> Any:
        container = self.value(node.value)
        index = node.slice
        if isinstance(index, ast.Slice):
            bounds = [None if b is None else self.value(b) for b in _bounds(index)]
            return container[slice(*bounds)]
        return container[self.value(index)]

    def _JoinedStr(self, node: ast.JoinedStr) -> Any:
        parts: list[str] = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                value = self.value(part.value)
                spec = "" if part.format_spec is None else self.value(part.format_spec)
                convert = _CONVERSIONS.get(part.conversion)
                value = value if convert is None else convert(value)
                parts.append(format(value, spec))
            else:
                parts.append(str(self.value(part)))
        return "".join(parts)

    def _Call(self, node: ast.Call) -> Any:
        if node.keywords:
            raise Unknown  # key= takes a function, and keywords are rare in a condition
        func = node.func
        if isinstance(func, ast.Name) and func.id == "map" and len(node.args) == 2:
            mapped = node.args[0]
            if isinstance(mapped, ast.Name) and mapped.id in _MAPPED:
                return [_BUILTINS[mapped.id](v) for v in self.value(node.args[1])]
            raise Unknown
        args = [self.value(a) for a in node.args]
        if isinstance(func, ast.Name) and func.id in _BUILTINS and func.id not in self.scope:
            return _BUILTINS[func.id](*args)
        if isinstance(func, ast.Attribute):
            owner = self.value(func.value)
            allowed = _METHODS.get(type(owner), frozenset())
            if func.attr not in allowed:
                raise Unknown
            if func.attr == "join" and args:
                args = [list(args[0])]
            return getattr(owner, func.attr)(*args)
        raise Unknown

    def _ListComp(self, node: ast.ListComp) -> Any:
        return [self.value(node.elt) for _ in self._loops(node.generators)]

    def _GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        return [self.value(node.elt) for _ in self._loops(node.generators)]

    def _SetComp(self, node: ast.SetComp) -> Any:
        return {self.value(node.elt) for _ in self._loops(node.generators)}

    def _DictComp(self, node: ast.DictComp) -> Any:
        return {self.value(node.key): self.value(node.value) for _ in self._loops(node.generators)}

    def _loops(self, generators: list[ast.comprehension]) -> Iterator[None]:
        if not generators:
            yield None
            return
        first, rest = generators[0], generators[1:]
        if first.is_async:
            raise Unknown
        for item in list(self.value(first.iter)):
            self.bind(first.target, item)
            if all(self.value(test) for test in first.ifs):
                yield from self._loops(rest)

    def bind(self, target: ast.expr, value: object) -> None:
        """Bind ``target`` (a name or a tuple of names) to ``value`` in this scope."""
        if isinstance(target, ast.Name):
            self.scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = list(value)  # type: ignore[call-overload]
            if len(items) != len(target.elts):
                raise Raised(ValueError("unpacking"))
            for element, item in zip(target.elts, items, strict=True):
                self.bind(element, item)
        else:
            raise Unknown


def bind(target: ast.expr, node: ast.expr, scope: dict[str, object]) -> None:
    """Evaluate ``node`` and bind ``target`` to it in ``scope`` (names, tuples of names)."""
    evaluator = _Evaluator(scope)
    evaluator.bind(target, evaluator.value(node))
    scope.update(evaluator.scope)


def _iterable_view(value: object) -> bool:
    return type(value).__name__ in ("dict_keys", "dict_values", "dict_items")


def _too_long(left: object, right: object) -> bool:
    sequence, count = (left, right) if isinstance(right, int) else (right, left)
    if isinstance(sequence, (str, bytes, list, tuple)) and isinstance(count, int):
        return len(sequence) * max(count, 0) > _MAX_SIZE
    return False


def _bounds(index: ast.Slice) -> tuple[ast.expr | None, ast.expr | None, ast.expr | None]:
    return index.lower, index.upper, index.step
