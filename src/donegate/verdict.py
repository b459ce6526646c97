"""The six rules of Completion Claim v0.1, as one ladder over a claim, a policy and a clock.

Only this module computes a verdict. Nothing the agent wrote into the document (its own verdict,
its own "independent" label when the caller names the verifiers it trusts, its own policy when the
caller passes one) can make a claim pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

from donegate.claim import Claim, Evidence, EvidenceFinding, Verdict, VerdictState
from donegate.expectation import Comparison, compare
from donegate.instant import Instant, Seconds, is_finite
from donegate.policy import AppliedPolicy

DEFAULT_MAX_SKEW_S = 5.0
MAX_SKEW_LIMIT_S = 10**9
"""The largest clock skew accepted (about 31 years): past it, a bound says nothing."""


@dataclass(frozen=True, slots=True)
class VerifyOptions:
    """How the caller wants a claim verified.

    ``policy`` replaces the document's own when given; ``trust`` (when not None) is the set of
    verifier ids whose ``independent`` label is believed; ``now`` is the decision time.
    ``required`` names evidence items (by index) that must each count and match, whatever else
    does: a collector's configured checks, so that a partial pass is never a pass. Each one that
    does not is listed in ``unmet`` as ``check:<name>``.
    """

    policy: AppliedPolicy | None = None
    now: Instant | None = None
    trust: frozenset[str] | None = None
    max_skew_s: Seconds = DEFAULT_MAX_SKEW_S
    required: Mapping[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # NaN compares false with everything, so a NaN bound would let any date through.
        skew = self.max_skew_s
        if isinstance(skew, bool) or not isinstance(skew, int | float | Fraction | Decimal):
            raise ValueError(f"max_skew_s: expected a number of seconds, got {skew!r}")
        if not is_finite(skew):
            raise ValueError(f"max_skew_s: expected a finite number of seconds, got {skew}")
        if not 0 <= skew <= MAX_SKEW_LIMIT_S:
            raise ValueError(f"max_skew_s: expected 0 to {MAX_SKEW_LIMIT_S} seconds, got {skew}")


@dataclass(frozen=True, slots=True)
class _Reading:
    """One evidence item as the rules see it."""

    index: int
    item: Evidence
    counts: bool
    why_not: str | None
    comparison: Comparison | None


def verify_claim(claim: Claim, options: VerifyOptions | None = None) -> Claim:
    """The claim with its verdict computed (any verdict it carried is replaced)."""
    return claim.with_verdict(decide(claim, options or VerifyOptions()))


def decide(claim: Claim, options: VerifyOptions) -> Verdict:
    """Apply the spec's rules, in order.

    1. Choose the policy: the caller's if given, else the document's own (recorded either way).
    2. Rules 1, 2, 5 and the skew bound: an item counts only if it is independent (and trusted),
       strictly later than every mutation it covers, fresh, and not dated in the future.
    3. Compare every counting item: match, contradicts, or no observation.
    4. Rule 6: a counting item that contradicts its expectation refutes the claim.
    5. Rules 3 and 4, and the policy: verified only with at least one counting match, every
       mutation covered by one, every required check type matched by one, and every evidence
       item the caller requires (``options.required``) a counting match itself.
    6. Otherwise unverified: absence is never success.
    """
    applied = options.policy or _document_policy(claim)
    now = options.now or Instant.now()
    written_at = {m.id: m.at for m in claim.mutations}
    readings = [
        _read(written_at, i, item, applied, now, options) for i, item in enumerate(claim.evidence)
    ]
    matches = [r for r in readings if r.comparison and r.comparison.outcome == "match"]
    unmet = _unmet(claim, applied, matches, options.required)
    contradiction = next(
        (r for r in readings if r.comparison and r.comparison.outcome == "contradicts"), None
    )
    state: VerdictState
    if contradiction is not None:
        state, reason = "refuted", _refuted_reason(contradiction)
    elif matches and not unmet:
        state, reason = "verified", None
    else:
        state, reason = "unverified", _unverified_reason(claim, readings, unmet, options.required)
    # One validation call for the whole verdict: measurably cheaper than a model per finding.
    return Verdict.model_validate(
        {
            "state": state,
            "unmet": unmet,
            "reason": reason,
            "decided_at": now,
            "applied_policy": applied,
            "evidence": [_finding(r) for r in readings],
        }
    )


def _document_policy(claim: Claim) -> AppliedPolicy:
    if claim.policy is None:
        return AppliedPolicy(source="none")
    return AppliedPolicy(source="document", policy=claim.policy)


def _read(
    written_at: dict[str, Instant],
    index: int,
    item: Evidence,
    applied: AppliedPolicy,
    now: Instant,
    options: VerifyOptions,
) -> _Reading:
    why_not = _why_not_counted(written_at, item, applied, now, options)
    if why_not is not None:
        return _Reading(index, item, False, why_not, None)
    comparison = compare(item.check_type, item.expected, item.observed_value)
    return _Reading(index, item, True, None, comparison)


def _why_not_counted(
    written_at: dict[str, Instant],
    item: Evidence,
    applied: AppliedPolicy,
    now: Instant,
    options: VerifyOptions,
) -> str | None:
    """None when the item counts, else the first reason it does not."""
    kind, verifier_id = item.verifier.kind, item.verifier.id
    if kind == "self_attested":
        return "self-attested evidence never satisfies a requirement (rule 1)"
    if kind == "absent":
        return "the check did not happen (verifier kind absent)"
    if options.trust is not None and verifier_id not in options.trust:
        return f"verifier {verifier_id!r} is not one the caller trusts (--trust)"
    for mutation_id in item.covers:
        mutation_at = written_at[mutation_id]
        if not item.at > mutation_at:
            return (
                f"collected at {item.at}, not after mutation {mutation_id} at {mutation_at} "
                "(rule 2: a check before the write proves nothing about it)"
            )
    # Exact arithmetic: an instant 300.0000009 s old is older than 300 s, and a float bound
    # counts by its exact binary value, so no rounding ever makes evidence look fresh.
    age = now.seconds_since(item.at)
    max_age = applied.max_age_s
    if max_age is not None and age > Fraction(max_age):
        return (
            f"stale: {_g(age)} s old at decision time, policy max_age_s is {_g(max_age)} (rule 5)"
        )
    if -age > Fraction(options.max_skew_s):
        return (
            f"dated {_g(-age)} s after the decision time, "
            f"beyond the allowed clock skew of {_g(options.max_skew_s)} s"
        )
    return None


def _g(seconds: Seconds) -> str:
    """Seconds for a message, as ``%g`` writes them; a number too large for a float as is."""
    try:
        return f"{float(seconds):g}"
    except OverflowError:
        return str(seconds)  # only an integer can be too large for a float here


def _unmet(
    claim: Claim, applied: AppliedPolicy, matches: Sequence[_Reading], required: Mapping[int, str]
) -> list[str]:
    matched_types = {r.item.check_type for r in matches}
    covered = {mutation_id for r in matches for mutation_id in r.item.covers}
    matched = {r.index for r in matches}
    unmet = [t for t in _unique(applied.requires) if t not in matched_types]
    unmet += [f"mutation:{m.id}" for m in claim.mutations if m.id not in covered]
    unmet += [f"check:{name}" for index, name in sorted(required.items()) if index not in matched]
    return unmet


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _refuted_reason(reading: _Reading) -> str:
    item, comparison = reading.item, reading.comparison
    assert comparison is not None
    key = comparison.contradicted[0]
    observed = item.observed_value if isinstance(item.observed_value, dict) else {}
    return (
        f"evidence[{reading.index}] ({item.check_type} {item.target}) contradicts the claim: "
        f"{key} expected {_show(item.expected[key])}, observed {_show(observed.get(key))}."
    )


def _unverified_reason(
    claim: Claim, readings: Sequence[_Reading], unmet: Sequence[str], required: Mapping[int, str]
) -> str:
    if not readings:
        return "No evidence was submitted; a claim without evidence is unproven (rule 4)."
    if not any(r.counts for r in readings):
        first = readings[0]
        return (
            f"No evidence counts: evidence[0] ({first.item.check_type}) "
            f"does not count: {first.why_not}."
        )
    # A required check that failed says most about why: its own reason comes first.
    matched = {r.index for r in readings if r.comparison and r.comparison.outcome == "match"}
    for index, name in sorted(required.items()):
        if index not in matched and index < len(readings):
            return f"Configured check {name} did not confirm the claim ({_why(readings[index])})."
    for entry in unmet:
        if entry.startswith("mutation:"):
            mutation = claim.mutation(entry.removeprefix("mutation:"))
            return (
                f"Mutation {mutation.id} ({mutation.kind} {mutation.target}) is not covered by "
                "fresh, independent, matching evidence (rule 3)."
            )
        return f"The policy requires {entry}, and no fresh, independent evidence of it matches."
    return (
        "No counting evidence matched its expectation; nothing was observed to confirm the claim."
    )


_FINDING_FIELDS = {"index", "check_type", "counts", "outcome", "why"}  # one set, shared


def _finding(reading: _Reading) -> EvidenceFinding:
    # Built without validation: every value is computed here, of the declared type, and a claim
    # with a million items would otherwise hold a dict and a model per item at once.
    comparison = reading.comparison
    return EvidenceFinding.model_construct(
        _FINDING_FIELDS,
        index=reading.index,
        check_type=reading.item.check_type,
        counts=reading.counts,
        outcome=comparison.outcome if comparison else None,
        why=_why(reading),
    )


def _why(reading: _Reading) -> str:
    comparison = reading.comparison
    if comparison is None:
        why = reading.why_not or "does not count"
    elif comparison.outcome == "match":
        why = "counts and matches its expectation"
    elif comparison.outcome == "contradicts":
        why = f"counts and contradicts its expectation on {', '.join(comparison.contradicted)}"
    else:
        why = _no_observation_why(reading)
    return why


def _no_observation_why(reading: _Reading) -> str:
    item = reading.item
    if not item.expected:
        return "counts, but expects nothing, so it observes nothing"
    if not isinstance(item.observed_value, dict):
        return "counts, but holds no observed_value object: no observation"
    missing = ", ".join(reading.comparison.missing) if reading.comparison else ""
    return f"counts, but observed_value lacks {missing}: no observation"


def _show(value: object) -> str:
    return json.dumps(value)
