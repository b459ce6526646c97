"""The ``[scan]`` table of ``donegate.toml``, parsed without pydantic (the hook path reads it).

::

    [scan]
    fitted_to_test = "block"   # or "warn" (reported, verdict unchanged) or "off"
    allow = [
      { construct = "frame-inspection", path = "src/debug/**", reason = "our tracer" },
    ]

Paths are globs as everywhere in the workspace (:mod:`donegate.globs`). A rule
without a reason is rejected: an exception a team cannot explain is not one it should keep.
"""

from __future__ import annotations

from typing import Any, Literal

from donegate.errors import InvalidInput
from donegate.globs import matches
from donegate.record import Record
from donegate.scan.finding import CONSTRUCTS

Mode = Literal["block", "warn", "off"]
_MODES: tuple[Mode, ...] = ("block", "warn", "off")
_KEYS = ("fitted_to_test", "allow")
_RULE_KEYS = ("construct", "path", "reason")


class AllowRule(Record):
    """Let one construct through in the files that ``path`` (a glob) matches."""

    construct: str
    path: str
    reason: str

    def covers(self, construct: str, path: str) -> bool:
        """Whether this rule allows ``construct`` in the workspace-relative ``path``."""
        return construct == self.construct and matches(path, self.path)


class ScanSettings(Record):
    """A validated ``[scan]`` table; the defaults are those of an absent table."""

    fitted_to_test: Mode = "block"
    allow: tuple[AllowRule, ...] = ()

    def allowed_by(self, construct: str, path: str) -> AllowRule | None:
        """The first rule that allows ``construct`` in ``path``, or None."""
        return next((r for r in self.allow if r.covers(construct, path)), None)


def parse_scan_table(value: object) -> ScanSettings:
    """Validate a ``[scan]`` table (None: absent), or raise InvalidInput naming the key."""
    if value is None:
        return ScanSettings()
    if not isinstance(value, dict):
        raise InvalidInput("must be a table", path="scan")
    for key in value:
        if key not in _KEYS:
            raise InvalidInput(f"unknown key; allowed: {', '.join(_KEYS)}", path=f"scan.{key}")
    mode = value.get("fitted_to_test", "block")
    if mode not in _MODES:
        raise InvalidInput(
            f"must be one of {', '.join(_MODES)}, got {mode!r}", path="scan.fitted_to_test"
        )
    rules = value.get("allow", [])
    if not isinstance(rules, list):
        raise InvalidInput("must be an array of tables", path="scan.allow")
    return ScanSettings(mode, tuple(_rule(r, f"scan.allow[{i}]") for i, r in enumerate(rules)))


def _rule(table: object, where: str) -> AllowRule:
    if not isinstance(table, dict):
        raise InvalidInput("must be a table", path=where)
    for key in table:
        if key not in _RULE_KEYS:
            raise InvalidInput(f"unknown key; allowed: {', '.join(_RULE_KEYS)}", f"{where}.{key}")
    construct = _text(table, "construct", where)
    if construct not in CONSTRUCTS:
        known = ", ".join(CONSTRUCTS)
        raise InvalidInput(f"unknown construct {construct!r}; known: {known}", f"{where}.construct")
    return AllowRule(construct, _text(table, "path", where), _text(table, "reason", where))


def _text(table: dict[str, Any], key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("required: a non-empty string", f"{where}.{key}")
    return value
