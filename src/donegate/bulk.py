"""Verifying claims in bulk, one per line, at about the speed of parsing them.

A batch is read by a typed decoder (msgspec) straight into small structs that the rules read as
they read the validated models. The reader only ever accepts: a line it does not take as it is
(a field the format does not name, a dangling reference, a bad instant, deep nesting, anything
unexpected) goes to the one loader, :func:`donegate.claim.parse_claim`, which decides it as it
always has and names the JSON path of what is wrong. So a batch of well-formed claims never loads
pydantic, and no line is ever judged by rules or messages of its own.

Every line gets exactly one answer line: a verdict, or ``"state": "invalid"`` with the path and
the reason. Nothing a line holds can stop the batch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import accumulate
from typing import IO, TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from donegate.instant import Instant, instant_key
from donegate.rules import PolicyView, Ruling, VerifyOptions, rule

if TYPE_CHECKING:
    from donegate.policy import AppliedPolicy

NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
Seconds = Annotated[int, msgspec.Meta(ge=0)] | Annotated[float, msgspec.Meta(ge=0)]

SHALLOW = 190
"""Nesting the loader always allows (its parser stops near 200 levels, depending on where)."""
LONGEST_INTEGER = 4300
"""The loader refuses a number with more integer digits than this (Python's own limit)."""
# A digit run starting at a run's first digit, so each run is scanned once, however long.
_TOO_MANY_DIGITS = re.compile(rb"(?<![0-9])[0-9]{%d}" % (LONGEST_INTEGER + 1))


class _Struct(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """Unknown fields are refused here: the loader keeps them, so such a line goes to it.

    Decoded JSON holds no reference cycles, so the collector need not track these structs.
    """


class _Task(_Struct):
    id: NonEmpty
    description: str | None = None
    requested_by: str | None = None


class _Mutation(_Struct):
    id: NonEmpty
    kind: str
    target: str
    at: Instant


class _Verifier(_Struct):
    id: str
    kind: Literal["independent", "self_attested", "absent"]


class _Evidence(_Struct):
    check_type: NonEmpty
    target: str
    expected: dict[str, Any]
    at: Instant
    covers: list[str]
    verifier: _Verifier
    observed_value: Any = None


class _Policy(_Struct):
    id: str | msgspec.UnsetType | None = msgspec.UNSET
    requires: list[str] | msgspec.UnsetType = msgspec.UNSET
    max_age_s: Seconds | msgspec.UnsetType | None = msgspec.UNSET
    on_unverified: Literal["block", "warn", "record"] | msgspec.UnsetType = msgspec.UNSET


class _Claim(_Struct):
    spec_version: Literal["0.1"]
    task: _Task
    claimed_outcome: str
    mutations: list[_Mutation] = []
    evidence: list[_Evidence] = []
    policy: _Policy | None = None
    # Only the verifier computes a verdict, so this one is never read; it is decoded all the same,
    # as the loader reads it (raw, its text would go unchecked: invalid UTF-8 slips through).
    verdict: Any = None


class _DocumentPolicy:
    """The document's own policy as the rules read it (``requires``, ``max_age_s``)."""

    __slots__ = ("max_age_s", "requires")

    def __init__(self, policy: _Policy | None) -> None:
        requires = msgspec.UNSET if policy is None else policy.requires
        max_age = msgspec.UNSET if policy is None else policy.max_age_s
        self.requires: list[str] = [] if requires is msgspec.UNSET else requires
        self.max_age_s: int | float | None = None if max_age is msgspec.UNSET else max_age


def _instant(kind: type, value: object) -> object:
    if kind is not Instant or type(value) is not str:
        raise TypeError(f"not a {kind.__name__}")
    # Instants are immutable, and a batch repeats many (a session's writes, a run's checks).
    instant = _instants.get(value)
    if instant is None:
        if len(_instants) >= _INSTANTS_KEPT:
            _instants.clear()
        instant = _instants[value] = Instant(value, instant_key(value))
    return instant


_INSTANTS_KEPT = 65536
_instants: dict[str, Instant] = {}


_DECODER = msgspec.json.Decoder(_Claim, dec_hook=_instant)
_ENCODER = msgspec.json.Encoder()


class _Out(msgspec.Struct, gc=False):
    """An answer as written; fields in the order the loader's models write them."""


class _Applied(_Out):
    source: str
    policy: _Policy | msgspec.UnsetType = msgspec.UNSET  # unset fields are not written


class _FindingOut(_Out):
    index: int
    check_type: str
    counts: bool
    outcome: str | None
    why: str


class _VerdictOut(_Out):
    state: str
    unmet: list[str]
    reason: str | None
    decided_at: str
    applied_policy: Any
    evidence: list[_FindingOut]


class _Answer(_Out):
    line: int
    task_id: str
    verdict: _VerdictOut


_NO_POLICY = _Applied("none")


class Batch:
    """Answers lines, one JSON line each, under one set of options."""

    def __init__(self, options: VerifyOptions) -> None:
        self.options = options
        self.invalid = 0
        self._callers_policy = _plain_applied(options.policy) if options.policy else None

    def answer(self, number: int, line: bytes) -> bytes:
        """The answer line for input line ``number`` (without its newline)."""
        claim = _read(line)
        try:
            if claim is None:
                return self._answer_loaded(number, line)
            return self._answer_read(number, claim)
        except Exception as exc:  # one line never stops the batch; it is answered, never verified
            self.invalid += 1
            return _invalid(number, "", f"could not be decided: {type(exc).__name__}: {exc}")

    def _answer_read(self, number: int, claim: _Claim) -> bytes:
        options = self.options
        if options.policy is not None:
            ruling = rule(claim, options.policy, options)
            return _record(number, claim.task.id, ruling, self._callers_policy)
        policy = claim.policy
        ruling = rule(claim, _DocumentPolicy(policy), options)
        applied = _NO_POLICY if policy is None else _Applied("document", policy)
        return _record(number, claim.task.id, ruling, applied)

    def _answer_loaded(self, number: int, line: bytes) -> bytes:
        from donegate.claim import parse_claim
        from donegate.errors import InvalidInput
        from donegate.verdict import applied_policy

        try:
            loaded = parse_claim(line)
        except InvalidInput as exc:
            self.invalid += 1
            return _invalid(number, exc.path, str(exc))
        applied = applied_policy(loaded, self.options)
        ruling = rule(loaded, applied, self.options)
        return _record(number, loaded.task.id, ruling, _plain_applied(applied))


def verify_lines(lines: Iterable[tuple[int, bytes]], out: IO[bytes], options: VerifyOptions) -> int:
    """Answer every numbered line on ``out``; the number of lines that were not valid claims."""
    batch = Batch(options)
    write = out.write
    for number, line in lines:
        write(batch.answer(number, line) + b"\n")
    return batch.invalid


def _read(line: bytes) -> _Claim | None:
    """The claim on ``line`` if the fast reader takes it as the loader would, else None."""
    try:
        claim = _DECODER.decode(line)
    except Exception:  # whatever the reader does not take, the loader decides and explains
        return None
    if not _resolves(claim):
        return None
    if len(line) > LONGEST_INTEGER and _TOO_MANY_DIGITS.search(line):
        return None  # perhaps only digits in a string, but the loader alone can tell
    # A line with few brackets cannot nest deeply; else it is measured, on its text: a value the
    # reader dropped (the first of two equal keys) still counts for the loader's parser.
    if line.count(b"[") + line.count(b"{") > SHALLOW and _depth(line) > SHALLOW:
        return None
    return claim


def _resolves(claim: _Claim) -> bool:
    """Mutation ids are unique and every ``covers`` entry names one (else the loader says so)."""
    ids = {m.id for m in claim.mutations}
    if len(ids) != len(claim.mutations):
        return False
    return all(ids.issuperset(item.covers) for item in claim.evidence)


def _depth(line: bytes) -> int:
    """How deeply the JSON text ``line`` nests (it parsed: its strings are well formed)."""
    brackets = _STRING.sub(b"", line).translate(None, _NOT_BRACKETS)
    return max(accumulate(_STEP[byte] for byte in brackets), default=0)


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def _plain_applied(applied: AppliedPolicy) -> dict[str, Any]:
    plain: dict[str, Any] = applied.model_dump(mode="json", exclude_unset=True)
    return plain


def _record(number: int, task_id: str, ruling: Ruling, applied: object) -> bytes:
    findings = [
        _FindingOut(f.index, f.check_type, f.counts, f.outcome, f.why) for f in ruling.findings
    ]
    verdict = _VerdictOut(
        ruling.state, ruling.unmet, ruling.reason, ruling.decided_at.text, applied, findings
    )
    return _ENCODER.encode(_Answer(number, task_id, verdict))


def _invalid(number: int, path: str, error: str) -> bytes:
    record = {"line": number, "state": "invalid", "path": path, "error": error}
    try:
        return _ENCODER.encode(record)
    except (msgspec.EncodeError, UnicodeEncodeError):
        # Text the input could not have held (a lone surrogate in a message): written escaped.
        import json

        return json.dumps(record).encode()


__all__ = ["SHALLOW", "Batch", "PolicyView", "verify_lines"]
