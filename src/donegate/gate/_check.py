"""Hand-written validation for plain data: pydantic stays off the hook's import path.

Each check raises :class:`~donegate.errors.InvalidInput` naming the key path of the offending
value and saying both sides ("got X, expected Y").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from donegate.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def type_name(value: object) -> str:
    """The JSON-ish name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "list"
    return type(value).__name__


def count(value: object, path: str, *, minimum: int = 0) -> int:
    """An integer >= ``minimum``; booleans and floats are rejected, not coerced."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"got {type_name(value)} {value!r}, expected an integer", path)
    if value < minimum:
        raise InvalidInput(f"got {value}, expected an integer >= {minimum}", path)
    return value


def optional_count(value: object, path: str) -> int | None:
    return None if value is None else count(value, path)


def boolean(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(f"got {type_name(value)} {value!r}, expected true or false", path)
    return value


def optional_boolean(value: object, path: str) -> bool | None:
    return None if value is None else boolean(value, path)


def optional_text(value: object, path: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidInput(f"got {type_name(value)}, expected a string", path)
    return value


def mapping(value: object, path: str, known: frozenset[str]) -> Mapping[str, Any]:
    """An object whose keys are all in ``known``."""
    if not isinstance(value, Mapping):
        raise InvalidInput(f"got {type_name(value)}, expected an object", path)
    unknown = sorted(str(key) for key in value if key not in known)
    if unknown:
        raise InvalidInput(
            f"unknown key {unknown[0]!r}; expected one of {', '.join(sorted(known))}",
            join(path, unknown[0]),
        )
    return value


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


@contextmanager
def within(prefix: str) -> Iterator[None]:
    """Re-raise an :class:`InvalidInput` from inside with its path under ``prefix``."""
    try:
        yield
    except InvalidInput as exc:
        path = prefix + ("" if not exc.path or exc.path.startswith("[") else ".") + exc.path
        raise InvalidInput(exc.message, path) from None
