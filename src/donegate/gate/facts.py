"""Completion facts: what the host observed (writes, verifier results), parsed and normalised.

The gate never reads the agent's words; these facts are all it decides from. Every record here
validates itself when built, so an object you hold is always valid; :func:`parse_facts` turns plain
data (the CLI's JSON) into them, naming the key path of anything it rejects.

Records are named tuples, validated in ``__new__``: a hook defines them in a fresh process at every
agent stop, and dataclasses (with the ``inspect`` import they pull in) cost several times more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from donegate.errors import InvalidInput
from donegate.gate import _check
from donegate.gate.requirements import (
    RequirementAssessment,
    RequirementEvidence,
    parse_assessments,
    parse_evidence,
)
from donegate.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SOURCE = "source"
COSMETIC = "cosmetic"

ClassifyWrite = Callable[[str, "str | None"], str]
"""``classify_write(path, diff) -> kind``: labels one write (``source``, ``cosmetic``, ...)."""


class _WriteFactFields(Record):
    path: str | None = None
    diff: str | None = None
    kind: str | None = None


class WriteFact(_WriteFactFields):
    """One write the agent made. A missing ``kind`` counts as source (the conservative reading)."""

    __slots__ = ()

    def __new__(
        cls, path: str | None = None, diff: str | None = None, kind: str | None = None
    ) -> WriteFact:
        _check.optional_text(path, "path")
        _check.optional_text(diff, "diff")
        _check.optional_text(kind, "kind")
        return super().__new__(cls, path, diff, kind)


class _VerifyResultFields(Record):
    ok: bool | None = None
    findings: str | None = None
    command: str | None = None
    unavailable: str | None = None


class VerifyResult(_VerifyResultFields):
    """One verifier result. Only ``ok is True`` is green; a result without ``ok`` is red.

    ``unavailable`` says, of a red result, what the environment lacks for the verifier to run
    (a runner not installed): something the agent cannot fix, and the person must.
    """

    __slots__ = ()

    def __new__(
        cls,
        ok: bool | None = None,
        findings: str | None = None,
        command: str | None = None,
        unavailable: str | None = None,
    ) -> VerifyResult:
        _check.optional_boolean(ok, "ok")
        _check.optional_text(findings, "findings")
        _check.optional_text(command, "command")
        _check.optional_text(unavailable, "unavailable")
        return super().__new__(cls, ok, findings, command, unavailable)


class _CompletionFactsFields(Record):
    consecutive_failed_after_write: int | None = None
    source_write_count: int | None = None
    cosmetic_write_count: int | None = None
    writes: tuple[WriteFact, ...] | None = None
    verify: tuple[VerifyResult, ...] | None = None
    verification_failures_converging: bool = False
    requires_write: bool | None = None
    requirement_assessments: tuple[RequirementAssessment, ...] | None = None
    requirement_evidence: tuple[RequirementEvidence, ...] | None = None


class CompletionFacts(_CompletionFactsFields):
    """The host's facts at one stop.

    Give write counts (``source_write_count``, ``cosmetic_write_count``) or a ``writes`` list for
    the gate to classify; neither means the writes are unknown. ``verify`` holds the verifier's
    results (one result is a tuple of one; an empty tuple is "unmeasured"). The presence of
    ``consecutive_failed_after_write`` (even 0) turns on the streak-aware reasons.
    ``requirement_assessments`` and ``requirement_evidence`` are joined to the declared
    requirement contract (:mod:`.requirements`).
    """

    __slots__ = ()

    def __new__(
        cls,
        consecutive_failed_after_write: int | None = None,
        source_write_count: int | None = None,
        cosmetic_write_count: int | None = None,
        writes: tuple[WriteFact, ...] | None = None,
        verify: tuple[VerifyResult, ...] | None = None,
        verification_failures_converging: bool = False,
        requires_write: bool | None = None,
        requirement_assessments: tuple[RequirementAssessment, ...] | None = None,
        requirement_evidence: tuple[RequirementEvidence, ...] | None = None,
    ) -> CompletionFacts:
        _check.optional_count(consecutive_failed_after_write, "consecutive_failed_after_write")
        _check.optional_count(source_write_count, "source_write_count")
        _check.optional_count(cosmetic_write_count, "cosmetic_write_count")
        _check.boolean(verification_failures_converging, "verification_failures_converging")
        _check.optional_boolean(requires_write, "requires_write")
        _check_items(writes, WriteFact, "writes")
        _check_items(verify, VerifyResult, "verify")
        _check_items(requirement_assessments, RequirementAssessment, "requirement_assessments")
        _check_items(requirement_evidence, RequirementEvidence, "requirement_evidence")
        return super().__new__(
            cls,
            consecutive_failed_after_write,
            source_write_count,
            cosmetic_write_count,
            writes,
            verify,
            verification_failures_converging,
            requires_write,
            requirement_assessments,
            requirement_evidence,
        )


def _check_items(items: object, kind: type, path: str) -> None:
    if items is None:
        return
    if not isinstance(items, tuple):
        raise InvalidInput(f"got {_check.type_name(items)}, expected a tuple", path)
    for index, item in enumerate(items):
        if not isinstance(item, kind):
            raise InvalidInput(
                f"got {_check.type_name(item)}, expected {kind.__name__}", f"{path}[{index}]"
            )


_FACT_KEYS = frozenset(CompletionFacts._fields)
_REQUIREMENT_PARSERS: dict[str, Callable[[object, str], tuple[Any, ...]]] = {
    "requirement_assessments": parse_assessments,
    "requirement_evidence": parse_evidence,
}
_WRITE_KEYS = frozenset(WriteFact._fields)
_VERIFY_KEYS = frozenset(VerifyResult._fields)


def parse_facts(data: object, path: str = "facts") -> CompletionFacts:
    """Plain data (a JSON object) -> :class:`CompletionFacts`; unknown keys are rejected."""
    if isinstance(data, CompletionFacts):
        return data
    raw = _check.mapping(data, path, _FACT_KEYS)
    fields: dict[str, Any] = {k: v for k, v in raw.items() if k not in ("writes", "verify")}
    if fields.get("verification_failures_converging") is None:
        fields.pop("verification_failures_converging", None)
    if "writes" in raw and raw["writes"] is not None:
        fields["writes"] = _parse_writes(raw["writes"], _check.join(path, "writes"))
    if "verify" in raw:
        fields["verify"] = parse_verify(raw["verify"], _check.join(path, "verify"))
    for key, parse in _REQUIREMENT_PARSERS.items():
        if raw.get(key) is not None:
            fields[key] = parse(raw[key], _check.join(path, key))
    with _check.within(path):
        return CompletionFacts(**fields)


def _parse_writes(data: object, path: str) -> tuple[WriteFact, ...]:
    if not isinstance(data, list | tuple):
        raise InvalidInput(f"got {_check.type_name(data)}, expected a list of writes", path)
    return tuple(_parse_write(item, f"{path}[{i}]") for i, item in enumerate(data))


def _parse_write(data: object, path: str) -> WriteFact:
    if isinstance(data, WriteFact):
        return data
    with _check.within(path):
        return WriteFact(**_check.mapping(data, "", _WRITE_KEYS))


def parse_verify(data: object, path: str = "verify") -> tuple[VerifyResult, ...] | None:
    """One result or a list of them -> a tuple; ``None`` stays None (no reading)."""
    if data is None:
        return None
    if isinstance(data, VerifyResult | Mapping):
        return (_parse_result(data, path),)
    if isinstance(data, list | tuple):
        return tuple(_parse_result(item, f"{path}[{i}]") for i, item in enumerate(data))
    raise InvalidInput(
        f"got {_check.type_name(data)}, expected a verify result object or a list of them", path
    )


def _parse_result(data: object, path: str) -> VerifyResult:
    if isinstance(data, VerifyResult):
        return data
    with _check.within(path):
        return VerifyResult(**_check.mapping(data, "", _VERIFY_KEYS))


# --- normalisation: what the ladder reads ---------------------------------------------------


class WriteCounts(Record):
    """Writes by class. ``known`` is False when the host gave neither counts nor a list."""

    known: bool
    source: int = 0
    cosmetic: int = 0
    other: int = 0


class Reading(Record):
    """The combined verifier reading: green only if every result is green. ``unavailable``:
    what the environment lacks, when every red result is red for want of it."""

    ok: bool
    findings: str | None
    command: str | None
    unavailable: str | None = None


def count_writes(facts: CompletionFacts, classify: ClassifyWrite | None) -> WriteCounts:
    """Counts first, else the ``writes`` list (an empty list is known: no writes), else unknown."""
    if facts.source_write_count is not None:
        return WriteCounts(True, facts.source_write_count, facts.cosmetic_write_count or 0)
    if facts.writes is None:
        return WriteCounts(False)
    kinds = [_kind(write, classify, i) for i, write in enumerate(facts.writes)]
    source = kinds.count(SOURCE)
    cosmetic = kinds.count(COSMETIC)
    return WriteCounts(True, source, cosmetic, len(kinds) - source - cosmetic)


def _kind(write: WriteFact, classify: ClassifyWrite | None, index: int) -> str:
    if classify is None or not write.path:
        return write.kind or SOURCE
    kind = classify(write.path, write.diff)
    if not isinstance(kind, str) or not kind:
        raise InvalidInput(
            f"classify_write returned {_check.type_name(kind)} {kind!r}, expected a kind string",
            f"facts.writes[{index}].kind",
        )
    return kind


def combine(results: Sequence[VerifyResult] | None) -> Reading | None:
    """All results are required: one red blocks, and no results at all is no reading."""
    if not results:
        return None
    red = [result for result in results if result.ok is not True]
    findings = "; ".join(result.findings for result in red if result.findings)
    command = next((r.command for r in results if r.command and r.command.strip()), None)
    lacks = [result.unavailable for result in red]
    # One red result of the agent's own making keeps the reading the agent's to fix.
    unavailable = "; ".join(lack for lack in lacks if lack) if red and all(lacks) else None
    return Reading(not red, findings or None, command, unavailable)
