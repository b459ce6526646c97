"""The ``[gate]`` table of ``donegate.toml``: the gate's options plus which paths are what.

Read by the hook path without the collectors' models, and by the configuration loader so that
``donegate collect`` rejects the same mistakes with the same key paths. :func:`parse_gate_tables`
also reads the tables beside it that the gate decides by: ``[[requirements]]`` and ``[judge]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from donegate.errors import InvalidInput
from donegate.gate.options import GateOptions, parse_options
from donegate.gate.requirements import RequirementContract, parse_contract
from donegate.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from donegate.gate.judge_config import JudgeConfig

# Keys of [gate] that are the hook layer's, not the ladder's: which paths are what.
WORKSPACE_KEYS = ("test_paths", "doc_paths", "ignore", "require_confined")
# Agent hooks stop blocking before the host's own loop cap (about 8 for Claude Code) would end
# the session silently; the team's [gate] table may set another value.
HOOK_MAX_BLOCKS_IN_A_ROW = 6


class GateTable(Record):
    """A validated ``[gate]`` table."""

    options: Mapping[str, Any] = MappingProxyType({})
    test_paths: tuple[str, ...] = ()
    doc_paths: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    requirements: RequirementContract | None = None
    judge: JudgeConfig | None = None
    # A stop of an agent whose commands no sandbox confined is never verified.
    require_confined: bool = False

    def gate_options(self, **defaults: Any) -> GateOptions:
        """The gate's options: ``defaults`` (a host's) overridden by the team's tables."""
        options = parse_options({**defaults, **self.options}, path="gate")
        return options._replace(requirement_contract=self.requirements, judge=self.judge)


def parse_gate_tables(config: Mapping[str, Any]) -> GateTable:
    """``[gate]``, ``[[requirements]]`` and ``[judge]`` of a parsed ``donegate.toml``.

    Rows are checked against what can meet them: a ``check`` row needs a check that declares
    ``satisfies = [id]``, a ``judge`` row needs a ``[judge]``, and ``satisfies`` may only name
    declared ``check`` rows. Otherwise a row would stay pending for ever.
    """
    table = parse_gate_table(config.get("gate"))
    rows = config.get("requirements")
    contract = None if rows is None else parse_contract(rows, "requirements")
    judge = _judge_table(config.get("judge"))
    if contract is not None:
        _check_reachable(contract, _satisfied(config.get("checks")), judge is not None)
    elif _satisfied(config.get("checks")):
        raise InvalidInput("names a requirement, but no [[requirements]] are declared", "checks")
    return table._replace(requirements=contract, judge=judge)


def _satisfied(checks: object) -> dict[str, str]:
    """Requirement id -> the key path of the check that declares it satisfies it."""
    found: dict[str, str] = {}
    for index, check in enumerate(checks if isinstance(checks, list) else []):
        names = check.get("satisfies") if isinstance(check, dict) else None
        if names is None:
            continue
        path = f"checks[{index}].satisfies"
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise InvalidInput("must be a list of requirement ids", path)
        found.update(dict.fromkeys(names, path))
    return found


def _check_reachable(
    contract: RequirementContract, satisfied: Mapping[str, str], has_judge: bool
) -> None:
    roles = {row.id: row.role for row in contract.requirements}
    for name, path in satisfied.items():
        if roles.get(name) != "check":
            raise InvalidInput(f"{name!r} is not a declared requirement with role check", path)
    for index, row in enumerate(contract.requirements):
        if row.role == "check" and row.id not in satisfied:
            raise InvalidInput("no check declares satisfies = [this id]", f"requirements[{index}]")
        if row.role == "judge" and not has_judge:
            raise InvalidInput("a judge row needs a [judge] table", f"requirements[{index}]")


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
        require_confined=_flag(value, "require_confined"),
    )


def _flag(table: dict[str, Any], key: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise InvalidInput(f"must be true or false, got {value!r}", path=f"gate.{key}")
    return value


def _strings(table: dict[str, Any], key: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput("must be a list of strings", path=f"gate.{key}")
    return tuple(value)


def _judge_table(value: object) -> JudgeConfig | None:
    """The ``[judge]`` table parsed; its module is imported only when the table is there."""
    if value is None:
        return None
    from donegate.gate.judge_config import parse_judge_table

    return parse_judge_table(value)
