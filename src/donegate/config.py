"""``donegate.toml``: the team's configuration of checks and policy, never the agent's.

Commands, URLs and queries come only from here. Values may name environment variables as
``${NAME}`` (``$$`` is a literal ``$``); what they expand to is treated as secret, masked in
every message, evidence item and output, except inside ``expected``, which evidence records by
design. Unknown keys and bad values are rejected with :class:`~donegate.errors.InvalidInput`
naming the key path (``checks[1].timeout_s``).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, ValidationError

from donegate import checks, configtext
from donegate.checks.base import CheckSettings
from donegate.errors import InvalidInput
from donegate.gate.table import GateTable, parse_gate_tables
from donegate.policy import AppliedPolicy, Policy
from donegate.redact import NO_SECRETS, Redactor
from donegate.scan.settings import ScanSettings, parse_scan_table
from donegate.wire import translate

CONFIG_FILE = "donegate.toml"
_TOP_LEVEL = ("policy", "checks", "trust", "gate", "requirements", "judge", "scan")


class _StrictPolicy(Policy):
    # The wire model keeps unknown fields (the format allows them); a team's file may not.
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """One configured check: its position in the file and its validated settings."""

    index: int
    settings: CheckSettings

    @property
    def label(self) -> str:
        """How output names the check."""
        return self.settings.name or f"checks[{self.index}] {self.settings.check_type}"


@dataclass(frozen=True, slots=True)
class Config:
    """A loaded, valid configuration.

    ``base_dir`` is where relative paths (a test command's working directory, a file source)
    start: the configuration file's directory. ``trust`` lists verifier ids whose evidence already
    in a claim is believed; donegate's own is always trusted. ``scan`` is the ``[scan]`` table: what
    the stop's scan of written code blocks on, and what it allows where
    (:mod:`donegate.scan.settings`).
    """

    checks: tuple[CheckSpec, ...] = ()
    policy: Policy | None = None
    trust: frozenset[str] = frozenset()
    gate: GateTable = field(default_factory=GateTable)
    scan: ScanSettings = field(default_factory=ScanSettings)
    base_dir: Path = field(default_factory=Path.cwd)
    redactor: Redactor = NO_SECRETS
    source: str = "<config>"

    def applied_policy(self) -> AppliedPolicy | None:
        """The policy that overrides a claim's own, when the configuration sets one."""
        return None if self.policy is None else AppliedPolicy(source="config", policy=self.policy)

    def warnings(self) -> list[str]:
        """Weaknesses of the configured checks, one line each."""
        return [f"{spec.label}: {w}" for spec in self.checks for w in spec.settings.warnings()]


def load_config(path: str | Path, *, environ: Mapping[str, str] | None = None) -> Config:
    """Read and validate a ``donegate.toml`` file; relative paths in it start at its directory."""
    path = Path(path)
    text = configtext.read_text(path)
    return parse_config(text, base_dir=path.resolve().parent, environ=environ, source=str(path))


def parse_config(
    text: str,
    *,
    base_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    source: str = "<config>",
) -> Config:
    """Validate configuration TOML text; ``environ`` defaults to the process environment."""
    environ = os.environ if environ is None else environ
    expanded, secrets = configtext.expanded(text, environ, source)
    _exact_bound(expanded, text)
    redactor = NO_SECRETS.with_secrets(secrets)
    try:
        return _build(expanded, base_dir or Path.cwd(), redactor, source)
    except InvalidInput as exc:
        raise InvalidInput(redactor.text(exc.message), exc.path) from None


def _build(raw: dict[str, Any], base_dir: Path, redactor: Redactor, source: str) -> Config:
    for key in raw:
        if key not in _TOP_LEVEL:
            raise InvalidInput(f"unknown key; allowed: {', '.join(_TOP_LEVEL)}", key)
    return Config(
        checks=tuple(_check(i, table) for i, table in enumerate(_list(raw, "checks"))),
        policy=_policy(raw.get("policy")),
        trust=frozenset(_trust(raw.get("trust", []))),
        gate=parse_gate_tables(raw),
        scan=parse_scan_table(raw.get("scan")),
        base_dir=base_dir,
        redactor=redactor,
        source=source,
    )


def _exact_bound(raw: dict[str, Any], text: str) -> None:
    """``[policy] max_age_s`` made the decimal the text writes: TOML's reader makes a float of
    ``0.3`` (the binary number nearest it), which a bound of that age is not."""
    table = raw.get("policy")
    if isinstance(table, dict) and type(table.get("max_age_s")) is float:
        table["max_age_s"] = tomllib.loads(text, parse_float=Decimal)["policy"]["max_age_s"]


def _list(raw: dict[str, Any], key: str) -> list[Any]:
    value = raw.get(key, [])
    if not isinstance(value, list):
        raise InvalidInput(
            f"expected an array of tables ([[{key}]]), got {type(value).__name__}", key
        )
    return value


def _policy(value: object) -> Policy | None:
    if value is None:
        return None
    try:
        strict = _StrictPolicy.model_validate(value)
    except ValidationError as exc:
        raise translate(exc, prefix="policy") from None
    return Policy.model_validate(strict.model_dump(exclude_unset=True))


def _trust(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput("expected a list of verifier ids", "trust")
    return value


def _check(index: int, table: object) -> CheckSpec:
    where = f"checks[{index}]"
    if not isinstance(table, dict):
        raise InvalidInput(f"expected a table, got {type(table).__name__}", where)
    check_type = table.get("check_type")
    if not isinstance(check_type, str):
        raise InvalidInput("required: the check type, as a string", f"{where}.check_type")
    try:
        collector = checks.lookup(check_type)
    except KeyError as exc:
        raise InvalidInput(str(exc.args[0]), f"{where}.check_type") from None
    try:
        settings = collector.settings_model.model_validate(table)
    except ValidationError as exc:
        raise translate(exc, prefix=where) from None
    _check_timeout(getattr(settings, "timeout_s", None), f"{where}.timeout_s")
    return CheckSpec(index, settings)


MAX_TIMEOUT_S = 86400
"""The longest ``timeout_s`` accepted: a day. Past it, clocks and sockets overflow, not wait."""


def _check_timeout(value: object, path: str) -> None:
    if isinstance(value, int | float) and not 0 < value <= MAX_TIMEOUT_S:
        raise InvalidInput(f"expected more than 0 and at most {MAX_TIMEOUT_S} s, got {value}", path)
