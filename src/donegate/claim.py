"""The Completion Claim v0.1 document: wire models, the one loader, and writing back.

Parse, don't validate: a claim enters only through :func:`parse_claim` (or :func:`load_claim`),
which rejects bad input with :class:`~donegate.errors.InvalidInput` naming the JSON path. A
:class:`Claim` you hold is always valid: its timestamps are instants, its mutation ids unique, and
every ``covers`` entry names a mutation.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, StringConstraints, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from donegate.construct import built
from donegate.errors import InvalidInput
from donegate.instant import Instant
from donegate.jsonvalue import JsonObject, JsonValue
from donegate.policy import AppliedPolicy, Policy, exact_bound
from donegate.wire import WireModel, translate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from donegate.reader import ClaimStruct, EvidenceStruct, PolicyStruct

SPEC_VERSION = "0.1"
SCHEMA_ID = "https://donegate.dev/schema/completion-claim-0.1.schema.json"

VerifierKind = Literal["independent", "self_attested", "absent"]
VerdictState = Literal["verified", "unverified", "refuted"]
EvidenceOutcome = Literal["match", "contradicts", "no_observation"]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]


def _ignore(_: object) -> None:
    return None


class Task(WireModel):
    """What was asked. ``id`` is the caller's own."""

    id: NonEmpty
    description: str | None = None
    requested_by: str | None = None


class Mutation(WireModel):
    """One change the agent believes it made to the world."""

    id: NonEmpty
    kind: str
    target: str
    at: Instant


class Verifier(WireModel):
    """Who collected a piece of evidence; ``kind`` is the field that does the work."""

    id: str
    kind: VerifierKind


class Evidence(WireModel):
    """An observation of the world made after the mutations it covers."""

    check_type: NonEmpty
    target: str
    expected: JsonObject
    observed_value: JsonValue = None
    at: Instant
    covers: list[str]
    verifier: Verifier


class EvidenceFinding(WireModel):
    """Why one evidence item did or did not move the verdict."""

    index: int
    check_type: str
    counts: bool
    outcome: EvidenceOutcome | None = None
    why: str


class Verdict(WireModel):
    """Computed by the verifier from evidence and policy; never written by the agent."""

    state: VerdictState
    unmet: list[str]
    reason: str | None
    decided_at: Instant
    applied_policy: AppliedPolicy | None = None
    evidence: list[EvidenceFinding] = Field(default_factory=list)


class Claim(WireModel):
    """A Completion Claim v0.1 document."""

    spec_version: Literal["0.1"] = Field(
        description="The format version; a verifier refuses versions it does not implement."
    )
    task: Task
    claimed_outcome: str
    mutations: list[Mutation] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    policy: Policy | None = None
    # Only the verifier computes a verdict: whatever the input holds here is dropped on load.
    verdict: Annotated[Verdict | None, BeforeValidator(_ignore)] = None

    @model_validator(mode="after")
    def _references_resolve(self) -> Claim:
        seen: set[str] = set()
        for i, mutation in enumerate(self.mutations):
            if mutation.id in seen:
                raise _reference_error(
                    f"mutations[{i}].id", f"duplicate mutation id {mutation.id!r}"
                )
            seen.add(mutation.id)
        for i, item in enumerate(self.evidence):
            for j, mutation_id in enumerate(item.covers):
                if mutation_id not in seen:
                    raise _reference_error(
                        f"evidence[{i}].covers[{j}]", f"names no mutation: {mutation_id!r}"
                    )
        return self

    def mutation(self, mutation_id: str) -> Mutation:
        """The mutation with this id (ids are unique and every reference resolves)."""
        return next(m for m in self.mutations if m.id == mutation_id)

    def with_verdict(self, verdict: Verdict) -> Claim:
        """This claim with ``verdict`` replacing whatever was there (as ``model_copy`` would, at a
        fraction of its cost: the other fields are shared, as the models are frozen)."""
        fields = self.__pydantic_fields_set__ | {"verdict"}
        extra = dict(self.__pydantic_extra__ or {})
        return built(Claim, fields, {**self.__dict__, "verdict": verdict}, extra)

    def to_json_dict(self) -> dict[str, Any]:
        """The document as JSON: the fields it was given (unnamed ones kept) and the verdict."""
        return self.model_dump(mode="json", exclude_unset=True)


def _reference_error(path: str, message: str) -> PydanticCustomError:
    return PydanticCustomError("claim_reference", "{message}", {"message": message, "path": path})


def parse_claim(data: str | bytes | dict[str, Any]) -> Claim:
    """The one loader: JSON text (or already-parsed JSON data) to a valid :class:`Claim`.

    A ``verdict`` present in the input is dropped: only the verifier computes one. JSON text is
    parsed and validated in one pass (NaN, Infinity and deep nesting are rejected on the way).
    Text the typed reader takes (:mod:`donegate.reader`: only what this loader accepts, as it
    would) is made into the same models without a second validation.
    """
    if not isinstance(data, dict):
        from donegate.reader import read

        try:
            struct = read(data.encode() if isinstance(data, str) else data)
        except UnicodeEncodeError:  # a lone surrogate: the validation below says so
            struct = None
        if struct is not None:
            return as_model(struct)
    return validated(data)


def validated(data: str | bytes | dict[str, Any]) -> Claim:
    """:func:`parse_claim` by validation alone: the models' own reading, and their errors."""
    try:
        if isinstance(data, dict):
            return Claim.model_validate(data)
        claim = Claim.model_validate_json(data)
    except ValidationError as exc:
        raise translate(exc, what="claim", data=None if isinstance(data, dict) else data) from None
    return with_exact_bound(claim, data)


def with_exact_bound(claim: Claim, text: str | bytes) -> Claim:
    """``claim``, read from JSON ``text``, with its policy's ``max_age_s`` the decimal the text
    writes (see :func:`donegate.policy.exact_bound`)."""
    policy = claim.policy
    if policy is None:
        return claim
    try:
        exact = exact_bound(policy, text, within="policy")
    except ValueError as exc:
        raise InvalidInput(f"policy.max_age_s: {exc}", "policy.max_age_s") from None
    return claim if exact is policy else claim.model_copy(update={"policy": exact})


def load_claim(source: str | Path) -> Claim:
    """Load a claim from a file path, or from standard input when ``source`` is ``-``."""
    if str(source) == "-":
        return parse_claim(sys.stdin.buffer.read())
    try:
        data = Path(source).read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read claim file {source}: {exc.strerror}") from None
    return parse_claim(data)


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the document, generated from the models."""
    schema = Claim.model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def as_model(claim: ClaimStruct) -> Claim:
    """The loader's model of a claim :func:`donegate.reader.read` took: the same values and the
    same fields set, built without validating again what was just validated."""
    # The reader (msgspec, about 10 ms) only once a text is read: this module does not need it.
    from donegate.reader import UNSET, Absent, PolicyStruct

    task = claim.task
    task_fields, task_values = _given(
        UNSET, {"id": task.id, "description": task.description, "requested_by": task.requested_by}
    )
    mutations = [
        built(
            Mutation,
            _MUTATION_FIELDS,
            {"id": m.id, "kind": m.kind, "target": m.target, "at": m.at},
        )
        for m in claim.mutations
    ]
    policy = claim.policy
    fields, values = _given(
        UNSET,
        {
            "spec_version": claim.spec_version,
            "task": built(Task, task_fields, task_values),
            "claimed_outcome": claim.claimed_outcome,
            "mutations": UNSET if type(claim.mutations) is Absent else mutations,
            "evidence": UNSET
            if type(claim.evidence) is Absent
            else _evidence(claim.evidence, UNSET),
            "policy": _policy_model(policy, UNSET) if isinstance(policy, PolicyStruct) else policy,
            "verdict": UNSET if claim.verdict is UNSET else None,  # only the verifier makes one
        },
    )
    return built(Claim, fields, values)


def _evidence(items: list[EvidenceStruct], unset: object) -> list[Evidence]:
    out = []
    for item in items:
        verifier = built(
            Verifier, _VERIFIER_FIELDS, {"id": item.verifier.id, "kind": item.verifier.kind}
        )
        values = {
            "check_type": item.check_type,
            "target": item.target,
            "expected": item.expected,
            "observed_value": item.observed_value,
            "at": item.at,
            "covers": item.covers,
            "verifier": verifier,
        }
        out.append(built(Evidence, *_given(unset, values)))
    return out


def _policy_model(policy: PolicyStruct, unset: object) -> Policy:
    values = {
        "id": policy.id,
        "requires": policy.requires,
        "max_age_s": policy.max_age_s,
        "on_unverified": policy.on_unverified,
    }
    return built(Policy, *_given(unset, values))


def _given(unset: object, values: dict[str, Any]) -> tuple[set[str], dict[str, Any]]:
    """The fields that were given, and every field's value: an ``unset`` one gets the model's
    default (a list of its own where the model's default is a new list)."""
    fields = set(values)
    for name, value in values.items():
        if value is unset:
            fields.discard(name)
            default = _DEFAULTS[name]
            values[name] = default() if callable(default) else default
    return fields, values


# The models' defaults, by field name (no two models give one name different defaults).
_DEFAULTS: dict[str, Any] = {
    "description": None,
    "requested_by": None,
    "observed_value": None,
    "mutations": list,
    "evidence": list,
    "policy": None,
    "verdict": None,
    "id": None,
    "requires": list,
    "max_age_s": None,
    "on_unverified": "block",
}
_MUTATION_FIELDS = {"id", "kind", "target", "at"}  # shared: frozen models never change theirs
_VERIFIER_FIELDS = {"id", "kind"}
