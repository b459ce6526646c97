"""The ``[gate]`` table of ``donegate.toml``: the gate's options plus which paths are what.

Read by the hook path without the collectors' models, and by the configuration loader so that
``donegate collect`` rejects the same mistakes with the same key paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from donegate.errors import InvalidInput
from donegate.gate.options import GateOptions, parse_options

# Keys of [gate] that are the hook layer's, not the ladder's: which paths are what.
WORKSPACE_KEYS = ("test_paths", "doc_paths", "ignore")
# Agent hooks stop blocking before the host's own loop cap (about 8 for Claude Code) would end
# the session silently; the team's [gate] table may set another value.
HOOK_MAX_BLOCKS_IN_A_ROW = 6


class GateTable(NamedTuple):
    """A validated ``[gate]`` table."""

    options: Mapping[str, Any] = MappingProxyType({})
    test_paths: tuple[str, ...] = ()
    doc_paths: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def gate_options(self, **defaults: Any) -> GateOptions:
        """The gate's options: ``defaults`` (a host's) overridden by the team's table."""
        return parse_options({**defaults, **self.options}, path="gate")


def parse_gate_table(value: object) -> GateTable:
    """Validate a ``[gate]`` table (None: absent), or raise InvalidInput naming the key."""
    if value is None:
        return GateTable()
    if not isinstance(value, dict):
        raise InvalidInput("must be a table", path="gate")
    options = {k: v for k, v in value.items() if k not in WORKSPACE_KEYS}
    parse_options(options, path="gate")
    return GateTable(
        options=options,
        test_paths=_strings(value, "test_paths"),
        doc_paths=_strings(value, "doc_paths"),
        ignore=_strings(value, "ignore"),
    )


def _strings(table: dict[str, Any], key: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput("must be a list of strings", path=f"gate.{key}")
    return tuple(value)
