"""Signing what donegate collects: a receipt's claim, and each evidence item within a claim."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from donegate.claim import Claim, parse_claim
from donegate.signing import dsse
from donegate.signing.statement import (
    ENVELOPE_FIELD,
    PAYLOAD_TYPE,
    canonical,
    claim_statement,
    evidence_statement,
)


def sign_claim(
    claim: Mapping[str, Any], signer: dsse.Signer, snapshot: str | None = None
) -> dict[str, Any]:
    """A DSSE envelope over the claim's in-toto statement (a signed receipt)."""
    return dsse.sign(canonical(claim_statement(claim, snapshot)), PAYLOAD_TYPE, signer)


def sign_evidence(claim: Mapping[str, Any], signer: dsse.Signer) -> dict[str, Any]:
    """``claim`` (JSON data) with each evidence item carrying its envelope under ``dsse``."""
    mutations = claim.get("mutations", [])
    signed = []
    for item in claim.get("evidence", []):
        statement = evidence_statement(item, mutations)
        envelope = dsse.sign(canonical(statement), PAYLOAD_TYPE, signer)
        signed.append({**statement["predicate"], ENVELOPE_FIELD: envelope})
    return {**claim, "evidence": signed}


def sign_collected(claim: Claim, signer: dsse.Signer, verifier_id: str) -> Claim:
    """``claim`` with the evidence this donegate collected (``verifier_id``, independent) signed.

    Nothing else is signed: an item the agent supplied stays as it came, so a signature never
    launders what donegate did not observe.
    """
    document = claim.to_json_dict()
    mutations = document.get("mutations", [])
    items = []
    for item, data in zip(claim.evidence, document.get("evidence", []), strict=True):
        if item.verifier.kind == "independent" and item.verifier.id == verifier_id:
            statement = evidence_statement(data, mutations)
            envelope = dsse.sign(canonical(statement), PAYLOAD_TYPE, signer)
            items.append({**statement["predicate"], ENVELOPE_FIELD: envelope})
        else:
            items.append(data)
    signed = parse_claim({**document, "evidence": items})
    return signed.with_verdict(claim.verdict) if claim.verdict is not None else signed
