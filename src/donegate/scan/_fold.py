"""Constant expressions read as the values they compute: what a name or a call *means*.

``"_get" + "frame"``, ``"".join(["py", "test"])``, ``base64.b64decode("cHl0ZXN0").decode()`` and a
name bound once to any of them all mean one string; a scan that matched literal text alone was
defeated by spelling the string another way. :func:`fold` evaluates the few pure operations
such spellings use, on constants only, with a bound on the size of what it builds (``"a" * 10**9``
is not built), and answers :data:`UNKNOWN` for anything else. Nothing is ever executed.
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
from collections.abc import Callable, Mapping

UNKNOWN = object()  # not a constant expression (or not one this module knows)
# Integers within this distance of zero are counts, indices, lengths, exit codes and flags:
# they coincide between code and tests by chance. Measured on real histories (see
# benchmarks/scan_false_hits.py), a bound of 10 leaves HTTP statuses and ports, which honest
# code compares with as often as tests use them, to the rule that a value the code had before
# is its own.
_SMALL_INT = 10
# Strings shorter than this after stripping are separators, flags and single letters.
_SHORT_TEXT = 2
_MAX_SIZE = 100_000  # longest string or bytes built; bigger is read as unknown
_MAX_DEPTH = 40

_DECODERS: dict[str, Callable[[bytes], bytes]] = {
    "b64decode": base64.b64decode,
    "standard_b64decode": base64.standard_b64decode,
    "urlsafe_b64decode": base64.urlsafe_b64decode,
    "b32decode": base64.b32decode,
    "b16decode": base64.b16decode,
    "b85decode": base64.b85decode,
    "a85decode": base64.a85decode,
    "unhexlify": binascii.unhexlify,
    "a2b_hex": binascii.a2b_hex,
    "a2b_base64": binascii.a2b_base64,
    "fromhex": bytes.fromhex,  # type: ignore[dict-item]
}
# Methods of str and bytes that take and return constants; the arguments are folded too.
_METHODS = frozenset(
    {
        "encode",
        "decode",
        "join",
        "replace",
        "lower",
        "upper",
        "strip",
        "lstrip",
        "rstrip",
        "swapcase",
        "title",
        "capitalize",
        "casefold",
        "removeprefix",
        "removesuffix",
        "format",
        "hex",
        "translate",
    }
)


def distinctive(value: object) -> bool:
    """Whether a literal is specific enough that matching a test's copy is not chance.

    A tuple (a list folded) is, when one of its elements is or when it holds three values or
    more, not all equal: ``[4, -1, 2, 1]`` is as specific as a long string.
    """
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
    if isinstance(value, tuple):
        if any(distinctive(v) for v in value):
            return True
        try:
            return len(value) >= 3 and len(set(value)) >= 2
        except TypeError:
            return False
    return False


def fold(node: ast.expr, names: Mapping[str, ast.expr] | None = None) -> object:
    """The value ``node`` computes, following ``names`` (name -> bound expression); else UNKNOWN."""
    return _Folder(names or {}).value(node, 0)


def fold_text(node: ast.expr, names: Mapping[str, ast.expr] | None = None) -> str | None:
    """The string ``node`` computes (bytes read as latin-1), or None."""
    value = fold(node, names)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value if isinstance(value, str) else None


def constant_bindings(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """Names bound exactly once in ``body`` (not nested), to the expression they are bound to.

    A name bound twice may mean either value, so it means none; the folder decides whether the
    expression is constant.
    """
    bound: dict[str, ast.expr] = {}
    seen: set[str] = set()
    for statement in body:
        for target, value in _assignments(statement):
            if target in seen:
                bound.pop(target, None)
            elif value is not None:
                bound[target] = value
            seen.add(target)
    return bound


def _assignments(statement: ast.stmt) -> list[tuple[str, ast.expr | None]]:
    if isinstance(statement, ast.Assign):
        single = len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
        return [
            (t.id, statement.value if single else None)
            for t in statement.targets
            if isinstance(t, ast.Name)
        ]
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return [(statement.target.id, statement.value)]
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        return [(statement.target.id, None)]
    return []


class _Folder:
    def __init__(self, names: Mapping[str, ast.expr]) -> None:
        self.names = names
        self.following: set[str] = set()

    def value(self, node: ast.expr, depth: int) -> object:
        if depth > _MAX_DEPTH:
            return UNKNOWN
        try:
            result = self._value(node, depth + 1)
        except (ValueError, TypeError, OverflowError, binascii.Error, LookupError):
            return UNKNOWN
        if isinstance(result, (str, bytes)) and len(result) > _MAX_SIZE:
            return UNKNOWN
        return result

    def _value(self, node: ast.expr, depth: int) -> object:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node.id, depth)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = [self.value(e, depth) for e in node.elts]
            return UNKNOWN if UNKNOWN in items else tuple(items)
        if isinstance(node, ast.JoinedStr):
            return self._joined(node, depth)
        if isinstance(node, ast.BinOp):
            return self._binop(node, depth)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = self.value(node.operand, depth)
            return -operand if _ints(operand) else UNKNOWN  # type: ignore[operator]
        if isinstance(node, ast.Subscript):
            return self._subscript(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        return UNKNOWN

    def _name(self, name: str, depth: int) -> object:
        bound = self.names.get(name)
        if bound is None or name in self.following:
            return UNKNOWN
        self.following.add(name)
        try:
            return self.value(bound, depth)
        finally:
            self.following.discard(name)

    def _joined(self, node: ast.JoinedStr, depth: int) -> object:
        parts: list[str] = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue) and (
                part.format_spec is not None or part.conversion not in (-1, ord("s"))
            ):
                return UNKNOWN
            inner = part.value if isinstance(part, ast.FormattedValue) else part
            value = self.value(inner, depth)
            if not isinstance(value, (str, int)):
                return UNKNOWN
            parts.append(str(value))
        return "".join(parts)

    def _binop(self, node: ast.BinOp, depth: int) -> object:
        left, right = self.value(node.left, depth), self.value(node.right, depth)
        if UNKNOWN in (left, right):
            return UNKNOWN
        if isinstance(node.op, ast.Add) and type(left) is type(right):
            return left + right  # type: ignore[operator]
        if isinstance(node.op, ast.Mult) and _small_repeat(left, right):
            return left * right  # type: ignore[operator]
        if isinstance(node.op, ast.Mod) and isinstance(left, (str, bytes)):
            return left % right
        if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.BitXor)) and _ints(left, right):
            return _arith(node.op, left, right)  # type: ignore[arg-type]
        if isinstance(node.op, ast.Pow) and _ints(left, right) and 0 <= right <= 64:  # type: ignore[operator]
            result = left**right  # type: ignore[operator]
            return result if _ints(result) else UNKNOWN
        return UNKNOWN

    def _subscript(self, node: ast.Subscript, depth: int) -> object:
        container = self.value(node.value, depth)
        if not isinstance(container, (str, bytes, tuple)):
            return UNKNOWN
        index = node.slice
        if isinstance(index, ast.Slice):
            bounds = [None if b is None else self.value(b, depth) for b in _slice(index)]
            if not all(b is None or isinstance(b, int) for b in bounds):
                return UNKNOWN
            return container[slice(*bounds)]  # type: ignore[arg-type]
        position = self.value(index, depth)
        return container[position] if isinstance(position, int) else UNKNOWN

    def _call(self, node: ast.Call, depth: int) -> object:
        if node.keywords and not isinstance(node.func, ast.Attribute):
            return UNKNOWN
        args = [self.value(a, depth) for a in node.args]
        if UNKNOWN in args:
            return UNKNOWN
        func = node.func
        if isinstance(func, ast.Name):
            return _builtin(func.id, args)
        if not isinstance(func, ast.Attribute):
            return UNKNOWN
        if func.attr in _DECODERS and args and not node.keywords:
            text = func.attr == "fromhex"  # the one decoder that wants str, not bytes
            data = args[0].encode("ascii") if isinstance(args[0], str) and not text else args[0]
            return _DECODERS[func.attr](data)  # type: ignore[arg-type]
        if func.attr == "decode" and _dotted_end(func.value, "codecs") and len(args) == 2:
            return codecs.decode(args[0], args[1])  # type: ignore[call-overload]
        if func.attr not in _METHODS:
            return UNKNOWN
        owner = self.value(func.value, depth)
        kwargs = {k.arg: self.value(k.value, depth) for k in node.keywords if k.arg}
        if not isinstance(owner, (str, bytes)) or UNKNOWN in kwargs.values():
            return UNKNOWN
        if func.attr == "join" and args:
            args = [list(args[0])] if isinstance(args[0], tuple) else args
        return getattr(owner, func.attr)(*args, **kwargs)


def _builtin(name: str, args: list[object]) -> object:
    if name == "chr" and len(args) == 1 and isinstance(args[0], int):
        return chr(args[0])
    if name == "str" and len(args) == 1 and isinstance(args[0], (str, int)):
        return str(args[0])
    if name == "bytes" and len(args) == 1 and isinstance(args[0], tuple):
        return bytes(args[0])
    if name == "bytes" and len(args) == 2 and isinstance(args[0], str):
        return args[0].encode(str(args[1]))
    if name == "reversed" and len(args) == 1 and isinstance(args[0], (str, tuple)):
        return tuple(reversed(args[0]))
    if name in ("tuple", "list") and len(args) == 1 and isinstance(args[0], (str, tuple)):
        return tuple(args[0])
    if name in ("set", "frozenset") and len(args) == 1 and isinstance(args[0], (str, tuple)):
        return tuple(dict.fromkeys(args[0]))  # a set of constants, read as its elements
    if name == "int" and len(args) == 1 and isinstance(args[0], (str, int)):
        text = args[0]
        return (
            int(text)
            if not isinstance(text, str) or text.strip().lstrip("+-").isdigit()
            else UNKNOWN
        )
    return UNKNOWN


def _small_repeat(left: object, right: object) -> bool:
    text, count = (left, right) if isinstance(right, int) else (right, left)
    if not isinstance(text, (str, bytes, tuple)) or not isinstance(count, int):
        return False
    return len(text) * max(count, 0) <= _MAX_SIZE


def _ints(*values: object) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2**64 for v in values)


def _arith(op: ast.operator, left: int, right: int) -> int:
    if isinstance(op, ast.Add):
        return left + right
    if isinstance(op, ast.Sub):
        return left - right
    if isinstance(op, ast.Mult):
        return left * right
    return left ^ right


def _slice(index: ast.Slice) -> tuple[ast.expr | None, ast.expr | None, ast.expr | None]:
    return index.lower, index.upper, index.step


def _dotted_end(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
