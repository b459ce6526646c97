"""What the state_readback backends share: their error and the records they return."""

from __future__ import annotations

from pydantic import JsonValue

from donegate.checks._jsonpath import MISSING, at_path
from donegate.checks.state_readback._values import to_json

# Several records are ambiguous; reading more than this many only to count them is waste.
MAX_RECORDS = 100

Records = list[dict[str, JsonValue]]


class ReadError(Exception):
    """The backend could not read (connection, permission, a rejected query): no observation."""


def records_at(document: object, path: str | None) -> Records:
    """The records a parsed document holds at ``path``: none, one object, or a list of them."""
    node = at_path(document, path or "")
    if node is MISSING or node is None:
        return []
    items = node if isinstance(node, list) else [node]
    return [_as_record(to_json(item)) for item in items[: MAX_RECORDS + 1]]


def _as_record(value: JsonValue) -> dict[str, JsonValue]:
    return value if isinstance(value, dict) else {"value": value}
