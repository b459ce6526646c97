"""Requirement contracts: declared rows, assessed from typed evidence, and the acceptance ledger.

A team declares what "done" means beyond a green verifier (a PR URL in the final message, a check
that exercises the endpoint, a manner clause only a reviewer can judge). The host supplies
``requirement_assessments`` and ``requirement_evidence`` with its facts; :func:`join` joins them to
the declared roster. A row is met only by exactly one assessment that says it is met and cites
evidence of the row's role. Missing, duplicate, unsupported and unmet assessments leave the row
*pending*, whatever the verifier or the budget said: nothing else can mark a row met.

Roles: ``check`` (a configured check that declares ``satisfies = [id]``), ``assistant_output`` (a
pattern the agent's final message must contain, observed by the gate itself) and ``judge`` (the
bounded judge's structured assessment).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from donegate.errors import InvalidInput
from donegate.gate import _check
from donegate.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ROLES = frozenset({"check", "assistant_output", "judge"})
# The evidence id the gate gives its own observation of the final message.
ASSISTANT_OUTPUT_EVIDENCE = "assistant_output"
JUDGE_EVIDENCE = "judge"


class _RequirementFields(Record):
    id: str
    role: str
    description: str | None = None
    pattern: str | None = None


class Requirement(_RequirementFields):
    """One declared row: its id, the role of the evidence that can meet it, and what satisfies it.

    ``pattern`` (a regular expression, searched in the final message) is required for an
    ``assistant_output`` row and refused for any other.
    """

    __slots__ = ()

    def __new__(
        cls, id: str, role: str, description: str | None = None, pattern: str | None = None
    ) -> Requirement:
        _blank(id, "id")
        if role not in ROLES:
            raise InvalidInput(f"got {role!r}, expected one of {', '.join(sorted(ROLES))}", "role")
        _check.optional_text(description, "description")
        _check_pattern(role, pattern)
        return super().__new__(cls, id, role, description, pattern)


def _check_pattern(role: str, pattern: object) -> None:
    if role != "assistant_output":
        if pattern is not None:
            raise InvalidInput("only an assistant_output requirement takes a pattern", "pattern")
        return
    if not isinstance(pattern, str) or not pattern:
        raise InvalidInput(
            f"got {_check.type_name(pattern)}, expected a regular expression", "pattern"
        )
    try:
        re.compile(pattern)
    except re.error as exc:
        raise InvalidInput(f"not a regular expression: {exc}", "pattern") from None


class RequirementContract(Record):
    """The declared roster; ids are unique (checked by :func:`parse_contract`)."""

    requirements: tuple[Requirement, ...] = ()

    def ids(self) -> tuple[str, ...]:
        return tuple(row.id for row in self.requirements)


class _AssessmentFields(Record):
    id: str
    met: bool | None = None
    evidence: tuple[str, ...] = ()
    detail: str | None = None


class RequirementAssessment(_AssessmentFields):
    """Someone's reading of one row: met or not, and the ids of the evidence it cites."""

    __slots__ = ()

    def __new__(
        cls,
        id: str,
        met: bool | None = None,
        evidence: tuple[str, ...] = (),
        detail: str | None = None,
    ) -> RequirementAssessment:
        _blank(id, "id")
        _check.optional_boolean(met, "met")
        _strings(evidence, "evidence")
        _check.optional_text(detail, "detail")
        return super().__new__(cls, id, met, tuple(evidence), detail)


class _EvidenceFields(Record):
    id: str
    role: str
    detail: str | None = None


class RequirementEvidence(_EvidenceFields):
    """One typed evidence item an assessment can cite: its id and its role."""

    __slots__ = ()

    def __new__(cls, id: str, role: str, detail: str | None = None) -> RequirementEvidence:
        _blank(id, "id")
        if role not in ROLES:
            raise InvalidInput(f"got {role!r}, expected one of {', '.join(sorted(ROLES))}", "role")
        _check.optional_text(detail, "detail")
        return super().__new__(cls, id, role, detail)


def _blank(value: object, path: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(
            f"got {_check.type_name(value)} {value!r}, expected a non-blank id", path
        )


def _strings(value: object, path: str) -> None:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"got {_check.type_name(value)}, expected a list of strings", path)


# --- the ledger ------------------------------------------------------------------------------

PENDING_WHY = ("missing", "duplicate", "unsupported", "unmet")


class Ledger(Record):
    """The acceptance ledger of one decision.

    ``declared`` is False when no contract was declared: the explicit empty ledger, distinct from
    rows declared and never assessed (those are all pending). ``pending`` maps each pending row to
    why (missing, duplicate, unsupported, unmet), in declaration order.
    """

    declared: bool
    required: tuple[str, ...] = ()
    pending: Mapping[str, str] = {}

    @property
    def required_count(self) -> int:
        return len(self.required)

    @property
    def pending_count(self) -> int:
        return len(self.pending)

    @property
    def clear(self) -> bool:
        return not self.pending

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "declared": self.declared,
            "required_count": self.required_count,
            "pending_count": self.pending_count,
            "pending": list(self.pending),
            "pending_why": dict(self.pending),
        }


EMPTY_LEDGER = Ledger(declared=False)


def join(
    contract: RequirementContract | None,
    assessments: Sequence[RequirementAssessment] | None,
    evidence: Sequence[RequirementEvidence] | None,
) -> Ledger:
    """Join assessments to the declared roster; every row not proven met stays pending.

    1. no contract                                   -> the empty ledger (declared: false)
    2. a row with no assessment                      -> pending: missing
    3. a row with more than one assessment           -> pending: duplicate
    4. an assessment citing no evidence of the row's role (or none that exists) -> unsupported
    5. an assessment whose ``met`` is not true       -> pending: unmet
    Assessments of undeclared ids are ignored: they cannot meet anything.
    """
    if contract is None:
        return EMPTY_LEDGER
    by_id: dict[str, list[RequirementAssessment]] = {}
    for assessment in assessments or ():
        by_id.setdefault(assessment.id, []).append(assessment)
    roles: dict[str, set[str]] = {}
    for item in evidence or ():
        roles.setdefault(item.id, set()).add(item.role)
    pending: dict[str, str] = {}
    for row in contract.requirements:
        why = _why_pending(row, by_id.get(row.id, []), roles)
        if why is not None:
            pending[row.id] = why
    return Ledger(True, contract.ids(), pending)


def _why_pending(
    row: Requirement, found: list[RequirementAssessment], roles: Mapping[str, set[str]]
) -> str | None:
    if not found:
        return "missing"
    if len(found) > 1:
        return "duplicate"
    (assessment,) = found
    if not any(row.role in roles.get(cited, ()) for cited in assessment.evidence):
        return "unsupported"
    if assessment.met is not True:
        return "unmet"
    return None


# --- producers: typed evidence the gate and the hook path observe -----------------------------


def observe_output(
    contract: RequirementContract | None, text: str | None
) -> tuple[list[RequirementAssessment], list[RequirementEvidence]]:
    """Assess the ``assistant_output`` rows from the final message (the gate's own observation)."""
    rows = [r for r in (contract.requirements if contract else ()) if r.role == "assistant_output"]
    if not rows or text is None:
        return [], []
    evidence = RequirementEvidence(ASSISTANT_OUTPUT_EVIDENCE, "assistant_output", "final message")
    assessments = []
    for row in rows:
        assert row.pattern is not None
        match = re.search(row.pattern, text)
        detail = f"found {match.group(0)!r}" if match else f"no match for {row.pattern!r}"
        assessments.append(RequirementAssessment(row.id, match is not None, (evidence.id,), detail))
    return assessments, [evidence]


class CheckOutcome(Record):
    """A configured check's result as the hook path knows it: its label, whether it passed
    (observed and held), and the requirement ids it declares it satisfies."""

    label: str
    passed: bool
    satisfies: tuple[str, ...]


def from_checks(
    outcomes: Iterable[CheckOutcome],
) -> tuple[list[RequirementAssessment], list[RequirementEvidence]]:
    """Assessments and evidence from checks that declare ``satisfies``.

    Several checks naming one row make duplicate assessments, so the row stays pending: declare
    one check per row.
    """
    assessments: list[RequirementAssessment] = []
    evidence: list[RequirementEvidence] = []
    for index, outcome in enumerate(outcomes):
        if not outcome.satisfies:
            continue
        evidence_id = f"check:{index}:{outcome.label}"
        evidence.append(RequirementEvidence(evidence_id, "check", outcome.label))
        for req in outcome.satisfies:
            detail = "passed" if outcome.passed else "did not pass"
            assessments.append(RequirementAssessment(req, outcome.passed, (evidence_id,), detail))
    return assessments, evidence


# --- plain data -------------------------------------------------------------------------------

_ROW_KEYS = frozenset(Requirement._fields)
_ASSESSMENT_KEYS = frozenset(RequirementAssessment._fields)
_EVIDENCE_KEYS = frozenset(RequirementEvidence._fields)


def parse_contract(data: object, path: str = "requirement_contract") -> RequirementContract:
    """A list of rows (or ``{"requirements": [...]}``) -> a contract with unique ids."""
    if isinstance(data, RequirementContract):
        return data
    if isinstance(data, Mapping):
        data = _check.mapping(data, path, frozenset({"requirements"})).get("requirements", [])
        path = _check.join(path, "requirements")
    rows = tuple(_items(data, path, _ROW_KEYS, Requirement))
    seen: set[str] = set()
    for index, row in enumerate(rows):
        if row.id in seen:
            raise InvalidInput(f"duplicate requirement id {row.id!r}", f"{path}[{index}].id")
        seen.add(row.id)
    return RequirementContract(rows)


def parse_assessments(data: object, path: str) -> tuple[RequirementAssessment, ...]:
    """Plain data -> assessments (``evidence`` as a list of ids)."""
    return tuple(_items(data, path, _ASSESSMENT_KEYS, RequirementAssessment))


def parse_evidence(data: object, path: str) -> tuple[RequirementEvidence, ...]:
    """Plain data -> typed evidence items."""
    return tuple(_items(data, path, _EVIDENCE_KEYS, RequirementEvidence))


def _items(data: object, path: str, keys: frozenset[str], kind: Any) -> Iterable[Any]:
    if not isinstance(data, list | tuple):
        raise InvalidInput(f"got {_check.type_name(data)}, expected a list", path)
    for index, item in enumerate(data):
        where = f"{path}[{index}]"
        if isinstance(item, kind):
            yield item
            continue
        fields = dict(_check.mapping(item, where, keys))
        if isinstance(fields.get("evidence"), list):
            fields["evidence"] = tuple(fields["evidence"])
        with _check.within(where):
            try:
                yield kind(**fields)
            except TypeError:
                raise InvalidInput("required: id (and role, for a row or evidence)") from None
