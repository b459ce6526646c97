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
        raise InvalidInput(f"{what} is not valid JSON: {_json_error_text(exc, data)}") from None


def _json_error_text(exc: ValueError, data: str | bytes) -> str:
    text = str(exc)
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


def translate(exc: ValidationError, *, prefix: str = "") -> InvalidInput:
    """One :class:`InvalidInput` for a pydantic error, naming the first path and listing a few."""
    lines: list[str] = []
    first_path = ""
    for error in exc.errors(include_url=False)[:MAX_ERRORS_SHOWN]:
        ctx = error.get("ctx") or {}
        path = str(ctx.get("path") or json_path(tuple(error["loc"])))
        path = _join(prefix, path)
        first_path = first_path or path
        lines.append(f"{path or '(document)'}: {_message(error)}")
    hidden = exc.error_count() - len(lines)
    if hidden > 0:
        lines.append(f"... and {hidden} more")
    return InvalidInput("\n".join(lines), path=first_path)


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
    if kind == "literal_error" or kind.endswith("_type"):
        return f"{error['msg']}, got {_short(error.get('input'))}"
    return str(error["msg"])


def _short(value: object) -> str:
    text = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."
