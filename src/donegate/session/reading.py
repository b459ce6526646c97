"""A verified claim as the gate reads it: the facts of a stop, and the findings for the agent.

The findings come from each evidence item's details, typed by what collectors write there
(:class:`EvidenceDetail`): the failing tests by name where known, else why the check did not
count, else what it observed against what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from donegate.gate.store import SessionHistory
from donegate.record import Record
from donegate.workspace import ClassifiedWrite

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from donegate.claim import Claim, Evidence

MAX_FINDINGS_CHARS = 1500
# Writes the gate counts as "source": anything a green run must come after. Build configuration
# can break a build as much as code, and a test written after a green run (weakened, deleted,
# renamed away) changes what that run showed: protection is checked at every stop.
_GATE_KINDS = {"source": "source", "config": "source", "test": "source", "cosmetic": "cosmetic"}


class EvidenceDetail(Record):
    """The keys of an evidence item's ``detail`` that the stop path reads, typed."""

    label: str
    failing: tuple[str, ...] = ()
    why_not_counted: str | None = None
    output_tail: str | None = None
    environment: str | None = None

    @classmethod
    def of(cls, item: Evidence) -> EvidenceDetail:
        raw = getattr(item, "detail", None)
        detail: dict[str, Any] = raw if isinstance(raw, dict) else {}
        label = detail.get("check")
        failing = detail.get("failing")
        why = detail.get("why_not_counted")
        tail = detail.get("output_tail")
        lack = detail.get("environment")
        return cls(
            label if isinstance(label, str) else f"{item.check_type} {item.target}",
            tuple(map(str, failing)) if isinstance(failing, list) else (),
            why if isinstance(why, str) else None,
            tail if isinstance(tail, str) else None,
            lack if isinstance(lack, str) and item.verifier.kind == "absent" else None,
        )


def gate_kind(write: ClassifiedWrite) -> str:
    """The kind of a write as the gate counts it."""
    return _GATE_KINDS.get(write.kind, write.kind)


class FactsFor(Record):
    """A stop's facts before the session's history is known (the gate keeps that).

    ``satisfies`` lists, per configured check in order, the requirement rows it meets.
    """

    writes: Sequence[ClassifiedWrite]
    claim: Claim | None
    still_verified: bool = False
    satisfies: tuple[tuple[str, ...], ...] = ()

    def data(self, history: SessionHistory) -> dict[str, Any]:
        """The facts as the gate reads them."""
        facts = (
            still_verified(self.writes)
            if self.still_verified
            else stop_facts(self.writes, self.claim, history)
        )
        if self.claim is not None and any(self.satisfies):
            facts.update(requirement_facts(self.claim, self.satisfies))
        return facts


def requirement_facts(claim: Claim, satisfies: Sequence[tuple[str, ...]]) -> dict[str, Any]:
    """The requirement rows the configured checks meet, from their evidence in ``claim``.

    The configured checks' evidence items are the claim's last ones, in configuration order; a
    check passed when its item counted and matched its expectation.
    """
    from donegate.gate.requirements import CheckOutcome, from_checks

    assert claim.verdict is not None
    first = len(claim.evidence) - len(satisfies)
    matched = {f.index for f in claim.verdict.evidence if f.outcome == "match"}
    outcomes = [
        CheckOutcome(EvidenceDetail.of(claim.evidence[first + i]).label, first + i in matched, rows)
        for i, rows in enumerate(satisfies)
        if first + i >= 0
    ]
    assessments, evidence = from_checks(outcomes)
    return {
        "requirement_assessments": [a._asdict() for a in assessments],
        "requirement_evidence": [e._asdict() for e in evidence],
    }


def stop_facts(
    writes: Sequence[ClassifiedWrite], claim: Claim | None, history: SessionHistory
) -> dict[str, Any]:
    """The gate's facts for a stop that verified ``claim`` (None: nothing was verified)."""
    facts: dict[str, Any] = {
        "writes": [{"path": w.write.path, "kind": gate_kind(w)} for w in writes]
    }
    if claim is None or claim.verdict is None:
        return facts
    ok = claim.verdict.state == "verified"
    facts["verify"] = {
        "ok": ok,
        "findings": None if ok else findings(claim),
        "command": _checks(claim),
        "unavailable": None if ok else unavailable(claim),
    }
    if not ok and history.failed_in_a_row >= 1:
        # A first failure reads as "fails after your change"; from the second, as a streak.
        now = failing_count(claim)
        previous = history.last_failing
        facts["consecutive_failed_after_write"] = history.failed_in_a_row + 1
        facts["verification_failures_converging"] = (
            previous is not None and now is not None and now < previous
        )
    return facts


def still_verified(writes: Sequence[ClassifiedWrite]) -> dict[str, Any]:
    """Nothing but cosmetics or docs since a verified stop: that verification still holds.

    A verified snapshot is only ever marked after its writes verified, so the session has made
    its change; a comment edited since cannot flip a green run back to unverified.
    """
    cosmetic = sum(1 for w in writes if w.kind == "cosmetic")
    return {
        "source_write_count": 1,
        "cosmetic_write_count": cosmetic,
        "verify": {"ok": True, "command": "no source change since the last verified stop"},
    }


def findings(claim: Claim, describe: Callable[[Evidence], str] | None = None) -> str:
    """What the agent is told went wrong, check by check (``describe`` says one check; by
    default failing tests by name where known), cut at :data:`MAX_FINDINGS_CHARS`."""
    assert claim.verdict is not None
    describe = describe or _finding
    parts = [
        describe(claim.evidence[f.index]) for f in claim.verdict.evidence if f.outcome != "match"
    ]
    text = "; ".join(p for p in parts if p) or (claim.verdict.reason or "the claim is not verified")
    return text if len(text) <= MAX_FINDINGS_CHARS else text[: MAX_FINDINGS_CHARS - 3] + "..."


def unavailable(claim: Claim) -> str | None:
    """What the environment lacks, when that alone kept the claim from verifying: every check
    that did not match is one that could not run for it (None otherwise)."""
    assert claim.verdict is not None
    unmatched = [claim.evidence[f.index] for f in claim.verdict.evidence if f.outcome != "match"]
    lacks = [EvidenceDetail.of(item).environment for item in unmatched]
    if not lacks or None in lacks:
        return None
    return "; ".join(dict.fromkeys(lack for lack in lacks if lack))


def _finding(item: Evidence) -> str:
    detail = EvidenceDetail.of(item)
    if detail.failing:
        return f"{detail.label}: {', '.join(detail.failing)} failed after your last edit"
    if detail.why_not_counted is not None:
        return f"{detail.label} does not count: {detail.why_not_counted}"
    last = _last_lines(detail.output_tail) if detail.output_tail else ""
    observed = json.dumps(item.observed_value)
    return f"{detail.label} observed {observed}, expected {json.dumps(item.expected)}{last}"


def _last_lines(text: str, count: int = 6) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()][-count:]
    return ("; output ends: " + " | ".join(lines)) if lines else ""


def _checks(claim: Claim) -> str:
    return ", ".join(dict.fromkeys(f"{e.check_type} {e.target}" for e in claim.evidence))


def failing_count(claim: Claim) -> int | None:
    """Failed plus erroring tests over the claim's test runs, when every run reported counts."""
    total = None
    for item in claim.evidence:
        observed = item.observed_value
        if item.check_type == "test_run" and isinstance(observed, dict):
            counts = [observed.get(k) for k in ("failed", "errors")]
            if all(isinstance(c, int) for c in counts):
                total = (total or 0) + sum(c for c in counts if isinstance(c, int))
    return total
