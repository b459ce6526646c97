"""A claim's verdict as the wire model: the rules of :mod:`donegate.rules` over a parsed claim.

Only the rules compute a verdict. Nothing the agent wrote into the document (its own verdict,
its own "independent" label when the caller names the verifiers it trusts, its own policy when the
caller passes one) can make a claim pass.
"""

from __future__ import annotations

from donegate.claim import Claim, EvidenceFinding, Verdict
from donegate.construct import built
from donegate.policy import AppliedPolicy
from donegate.rules import DEFAULT_MAX_SKEW_S, MAX_SKEW_LIMIT_S, Ruling, VerifyOptions, rule

__all__ = [
    "DEFAULT_MAX_SKEW_S",
    "MAX_SKEW_LIMIT_S",
    "VerifyOptions",
    "applied_policy",
    "decide",
    "verify_claim",
]


def verify_claim(claim: Claim, options: VerifyOptions | None = None) -> Claim:
    """The claim with its verdict computed (any verdict it carried is replaced)."""
    return claim.with_verdict(decide(claim, options or VerifyOptions()))


def decide(claim: Claim, options: VerifyOptions) -> Verdict:
    """The verdict of ``claim``: the caller's policy if given, else the document's own (recorded
    either way), and the spec's rules in order (see :func:`donegate.rules.rule`)."""
    applied = applied_policy(claim, options)
    return as_verdict(rule(claim, applied, options), applied)


def applied_policy(claim: Claim, options: VerifyOptions) -> AppliedPolicy:
    """The policy that decides: the caller's when given, else the document's own."""
    if options.policy is not None:
        return options.policy
    if claim.policy is None:
        return _NO_POLICY
    return built(AppliedPolicy, _APPLIED_FIELDS, {"source": "document", "policy": claim.policy})


_NO_POLICY = AppliedPolicy(source="none")
_APPLIED_FIELDS = {"source", "policy"}
_VERDICT_FIELDS = set(Verdict.model_fields)  # shared: frozen models never change theirs
_FINDING_FIELDS = set(EvidenceFinding.model_fields)


def as_verdict(ruling: Ruling, applied: AppliedPolicy) -> Verdict:
    """The wire model of a ruling. Built without validation: every value is the rules' own, of
    the declared type, and a claim with a million items would otherwise hold a dict and a model
    per item at once."""
    findings = [
        built(
            EvidenceFinding,
            _FINDING_FIELDS,
            {
                "index": f.index,
                "check_type": f.check_type,
                "counts": f.counts,
                "outcome": f.outcome,
                "why": f.why,
            },
        )
        for f in ruling.findings
    ]
    values = {
        "state": ruling.state,
        "unmet": ruling.unmet,
        "reason": ruling.reason,
        "decided_at": ruling.decided_at,
        "applied_policy": applied,
        "evidence": findings,
    }
    return built(Verdict, _VERDICT_FIELDS, values)
