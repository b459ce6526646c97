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

from collections.abc import Iterable
from decimal import Decimal
from typing import IO, TYPE_CHECKING, Any

import msgspec

from donegate.reader import ClaimStruct, PolicyStruct, read
from donegate.rules import Ruling, VerifyOptions, rule

if TYPE_CHECKING:
    from donegate.policy import AppliedPolicy


class _DocumentPolicy:
    """The document's own policy as the rules read it (``requires``, ``max_age_s``)."""

    __slots__ = ("max_age_s", "requires")

    def __init__(self, policy: PolicyStruct) -> None:
        requires, max_age = policy.requires, policy.max_age_s
        self.requires: list[str] = [] if requires is msgspec.UNSET else requires
        self.max_age_s: int | Decimal | None = None if max_age is msgspec.UNSET else max_age


_ENCODER = msgspec.json.Encoder()


class _Out(msgspec.Struct, gc=False):
    """An answer as written; fields in the order the loader's models write them."""


class _Applied(_Out):
    source: str
    policy: PolicyStruct | msgspec.UnsetType = msgspec.UNSET  # unset fields are not written


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
_NO_RULES = _DocumentPolicy(PolicyStruct())


class Batch:
    """Answers lines, one JSON line each, under one set of options."""

    def __init__(self, options: VerifyOptions) -> None:
        self.options = options
        self.invalid = 0
        self._callers_policy = _plain_applied(options.policy) if options.policy else None

    def answer(self, number: int, line: bytes) -> bytes:
        """The answer line for input line ``number`` (without its newline)."""
        claim = read(line)
        try:
            if claim is None:
                return self._answer_loaded(number, line)
            return self._answer_read(number, claim)
        except Exception as exc:  # one line never stops the batch; it is answered, never verified
            self.invalid += 1
            return _invalid(number, "", f"could not be decided: {type(exc).__name__}: {exc}")

    def _answer_read(self, number: int, claim: ClaimStruct) -> bytes:
        options = self.options
        if options.policy is not None:
            ruling = rule(claim, options.policy, options)
            return _record(number, claim.task.id, ruling, self._callers_policy)
        policy = claim.policy
        if not isinstance(policy, PolicyStruct):  # null, or no policy at all
            return _record(number, claim.task.id, rule(claim, _NO_RULES, options), _NO_POLICY)
        ruling = rule(claim, _DocumentPolicy(policy), options)
        return _record(number, claim.task.id, ruling, _Applied("document", _written(policy)))

    def _answer_loaded(self, number: int, line: bytes) -> bytes:
        from donegate.claim import validated
        from donegate.errors import InvalidInput
        from donegate.verdict import applied_policy

        try:
            loaded = validated(line)  # the reader did not take it: the models decide
        except InvalidInput as exc:
            self.invalid += 1
            return _invalid(number, exc.path, str(exc))
        applied = applied_policy(loaded, self.options)
        ruling = rule(loaded, applied, self.options)
        return _record(number, loaded.task.id, ruling, _plain_applied(applied))


def verify_lines(lines: Iterable[tuple[int, bytes]], out: IO[bytes], options: VerifyOptions) -> int:
    """Answer every numbered line on ``out``; the number of lines that were not valid claims.

    Answers are written in blocks of about 64 KiB (``out`` may be unbuffered: ``python -u``, or
    ``PYTHONUNBUFFERED``, makes standard output a bare file)."""
    batch = Batch(options)
    answer = batch.answer
    answers: list[bytes] = []
    held = 0
    try:
        for number, line in lines:
            text = answer(number, line)
            answers.append(text)
            held += len(text)
            if held >= _BLOCK:
                _write(out, answers)
                held = 0
    finally:  # the lines answered are written, even when reading the next one failed
        _write(out, answers)
    return batch.invalid


def _write(out: IO[bytes], answers: list[bytes]) -> None:
    if answers:
        answers.append(b"")  # the last answer's newline
        out.write(b"\n".join(answers))
        answers.clear()


_BLOCK = 64 * 1024  # of answers, written at once


def _written(policy: PolicyStruct) -> PolicyStruct:
    """``policy`` as the models write it back: a decimal bound as the float nearest it."""
    if type(policy.max_age_s) is not Decimal:
        return policy
    return msgspec.structs.replace(policy, max_age_s=float(policy.max_age_s))


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


__all__ = ["Batch", "verify_lines"]
