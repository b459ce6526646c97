"""How ``verify`` and ``collect`` show a decided claim: JSON on stdout, or a summary on stderr."""

from __future__ import annotations

import sys

import click

from donegate.claim import Claim


def show(claim: Claim, *, as_json: bool) -> None:
    """The claim with its verdict as JSON on stdout, or a person's summary on stderr."""
    if as_json:
        # Straight from the models: a dict copy of a large claim first would double the peak.
        serializer = claim.__pydantic_serializer__
        sys.stdout.buffer.write(serializer.to_json(claim, indent=2, exclude_unset=True) + b"\n")
    else:
        summarise(claim)


def summarise(claim: Claim) -> None:
    """State, reason, unmet, the applied policy, and why each evidence item did or didn't count."""
    verdict = claim.verdict
    assert verdict is not None
    applied = verdict.applied_policy
    policy_id = applied.policy.id if applied and applied.policy else None
    source = applied.source if applied else "none"
    _say(f"{verdict.state}: {claim.task.id}  (policy {policy_id or '-'}, from {source})")
    if verdict.reason:
        _say(f"  reason: {verdict.reason}")
    if verdict.unmet:
        _say(f"  unmet: {', '.join(verdict.unmet)}")
    for finding in verdict.evidence:
        item = claim.evidence[finding.index]
        mark = "counts" if finding.counts else "ignored"
        _say(f"  evidence[{finding.index}] {item.check_type} {item.target} [{mark}]: {finding.why}")
        detail = (item.model_extra or {}).get("detail")
        if isinstance(detail, dict) and detail.get("why_not_counted"):
            _say(f"    why: {detail['why_not_counted']}")


def _say(text: str) -> None:
    click.echo(text, err=True)
