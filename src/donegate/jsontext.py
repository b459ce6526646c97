"""JSON text from outside (stdin, a hook payload), read with the standard library only.

The hook path cannot afford pydantic, so the gate and the hooks read their input here. Whatever
the bytes hold (invalid UTF-8, NaN, nesting deeper than the parser's stack, an integer with more
digits than Python converts), the answer is a value or :class:`~donegate.errors.InvalidInput`,
never another exception.
"""

from __future__ import annotations

import json

from donegate.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 200
"""Arrays and objects nested deeper than this are refused (the parser's own stack is finite)."""


def loads(raw: bytes | str, *, what: str) -> Any:
    """Parse ``raw`` as JSON, or raise :class:`InvalidInput` saying why, in terms of ``what``."""
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:  # the C parser's own guard, past about a thousand levels
        raise InvalidInput(f"{what} is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # UnicodeDecodeError and the digit limit on integers included
        raise InvalidInput(f"{what} is not JSON: {_short(str(exc))}") from None
    if depth(value) > MAX_DEPTH:
        raise InvalidInput(f"{what} is nested more than {MAX_DEPTH} levels deep")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def depth(value: object) -> int:
    """How deeply arrays and objects nest in a parsed JSON value (a scalar: 0); no recursion."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        level += 1
        if level > deepest:
            deepest = level
            if deepest > MAX_DEPTH:
                return deepest  # no need to walk further
        stack.extend((child, level) for child in children if isinstance(child, dict | list))
    return deepest


def clean_text(value: str) -> bool:
    """True for text that can be stored and shown: UTF-8 encodable (no lone surrogate), no NUL."""
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:197] + "..."
