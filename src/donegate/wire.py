"""What every wire model shares: strictness, immutability, and path-precise errors.

Documents enter as bytes or text and leave as JSON; in between they are frozen pydantic models.
Foreign errors (pydantic's, the JSON parser's) are translated here into :class:`InvalidInput`
whose ``path`` names the offending value as ``evidence[0].at``.
"""

from __future__ import annotations

import re
from typing import Any

import pydantic_core
from pydantic import BaseModel, ConfigDict, ValidationError

from donegate.errors import InvalidInput

MAX_ERRORS_SHOWN = 5
_UNION_TAGS = frozenset({"int", "float", "str", "bool", "none", "list", "dict"})
_NON_FINITE = re.compile(rb"(?<![\w\"])-?(NaN|Infinity)(?![\w\"])")


class WireModel(BaseModel):
    """A strict, frozen model that keeps fields the format does not name (they never decide)."""

    model_config = ConfigDict(
        strict=True,
        frozen=True,
        extra="allow",
        allow_inf_nan=False,
        populate_by_name=True,
    )


def parse_json(data: str | bytes, *, what: str = "document") -> Any:
    """Parse JSON text, rejecting NaN/Infinity and absurd nesting, as :class:`InvalidInput`."""
    try:
        return pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError as exc:
        raise InvalidInput(
            f"{what} is not valid JSON: {_json_error_text(str(exc), data)}"
        ) from None


def _json_error_text(text: str, data: str | bytes) -> str:
    if "recursion limit" in text:
        return f"nested too deeply ({text})"
    raw = data.encode() if isinstance(data, str) else data
    if _NON_FINITE.search(raw):
        return f"{text} (NaN and Infinity are not JSON numbers)"
    return text


def json_path(loc: tuple[int | str, ...]) -> str:
    """``('evidence', 0, 'at')`` -> ``evidence[0].at``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def translate(
    exc: ValidationError,
    *,
    prefix: str = "",
    what: str = "document",
    data: str | bytes | None = None,
) -> InvalidInput:
    """One :class:`InvalidInput` for a pydantic error, naming the first path and listing a few."""
    first = exc.errors(include_url=False)[0]
    if first["type"] == "json_invalid":
        detail = str(first["msg"]).removeprefix("Invalid JSON: ")
        return InvalidInput(f"{what} is not valid JSON: {_json_error_text(detail, data or b'')}")
    if first["type"] == "model_type" and not first["loc"]:
        return InvalidInput(f"a {what} is a JSON object, got {_short(first.get('input'))}")
    by_path: dict[str, str] = {}
    for error in exc.errors(include_url=False):
        ctx = error.get("ctx") or {}
        path = _join(prefix, str(ctx.get("path") or json_path(_without_union_tags(error["loc"]))))
        by_path.setdefault(path, _message(error))
    lines = [f"{path or '(document)'}: {message}" for path, message in by_path.items()]
    if len(lines) > MAX_ERRORS_SHOWN:
        lines = [*lines[:MAX_ERRORS_SHOWN], f"... and {len(lines) - MAX_ERRORS_SHOWN} more"]
    return InvalidInput("\n".join(lines), path=next(iter(by_path)))


def _without_union_tags(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    # pydantic names the branch of a union it tried ("int", "function-after[...]"); a user's
    # document has no such key, so the path stops before it.
    while loc and isinstance(loc[-1], str) and (loc[-1] in _UNION_TAGS or "[" in loc[-1]):
        loc = loc[:-1]
    return loc


def _join(prefix: str, path: str) -> str:
    if not prefix:
        return path
    if not path:
        return prefix
    return f"{prefix}{path}" if path.startswith("[") else f"{prefix}.{path}"


def _message(error: Any) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required field is missing"
    if kind == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    if kind == "literal_error" or kind.endswith("_type"):
        return f"{error['msg']}, got {_short(error.get('input'))}"
    return str(error["msg"])


def _short(value: object) -> str:
    text = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."
