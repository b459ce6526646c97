"""Arbitrary JSON values inside a claim (``expected``, ``observed_value``).

pydantic's own ``JsonValue`` dispatches every nested value through a Python callback, which made it
the most expensive part of loading a claim. Values parsed from JSON text are JSON by construction,
so one tight recursive check is enough; it still rejects what Python callers could pass that JSON
cannot hold (non-finite floats, non-string keys, arbitrary objects).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import AfterValidator, WithJsonSchema

# The JSON parser reads a number past a float's range (1e400) as an infinity: say so.
NOT_FINITE = "NaN, Infinity and numbers beyond a float's range (like 1e400) are refused"


def _check(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise ValueError(NOT_FINITE)
        return value
    if kind is list:
        for item in value:
            _check(item)
        return value
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise ValueError(f"JSON object keys are strings, got {type(key).__name__}")
            _check(item)
        return value
    raise ValueError(f"not a JSON value: {kind.__name__}")


def _check_object(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise ValueError(f"Input should be a JSON object, got {type(value).__name__}")
    checked: dict[str, Any] = _check(value)
    return checked


JsonValue = Annotated[Any, AfterValidator(_check), WithJsonSchema({})]
JsonObject = Annotated[
    Any,
    AfterValidator(_check_object),
    WithJsonSchema({"type": "object", "additionalProperties": True}),
]
