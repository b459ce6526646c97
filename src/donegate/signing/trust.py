"""``verify --trust-key``: evidence is independent only when a trusted key signed it.

A pre-pass before the verdict: every evidence item labelled ``independent`` whose envelope does
not verify against a trusted key (none, malformed, unknown key id, bad signature, a statement
about another claim's mutations or another item) is relabelled ``self_attested``, with the reason
in ``donegate_note``. The verdict's rules then do not count it. Nothing is ever upgraded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from donegate.claim import Claim, Verifier
from donegate.signing import dsse
from donegate.signing.statement import (
    ENVELOPE_FIELD,
    EVIDENCE_PREDICATE,
    PAYLOAD_TYPE,
    STATEMENT_TYPE,
    evidence_statement,
)


def trusted_only(claim: Claim, trusted: Mapping[str, dsse.Verifier]) -> Claim:
    """``claim`` with unsigned or badly signed independent evidence relabelled as not trusted."""
    document = claim.to_json_dict()
    mutations = document.get("mutations", [])
    evidence = list(claim.evidence)
    for i, (item, data) in enumerate(zip(evidence, document.get("evidence", []), strict=True)):
        if item.verifier.kind != "independent":
            continue
        why = why_untrusted(data, mutations, trusted)
        if why is not None:
            evidence[i] = item.model_copy(
                update={
                    "verifier": Verifier(id=item.verifier.id, kind="self_attested"),
                    "donegate_note": f"not counted as independent: {why}",
                }
            )
    return claim.model_copy(update={"evidence": evidence})


def why_untrusted(
    item: Mapping[str, Any], mutations: Sequence[Any], trusted: Mapping[str, dsse.Verifier]
) -> str | None:
    """Why ``item``'s signature does not vouch for it in this claim; None when it does."""
    envelope = item.get(ENVELOPE_FIELD)
    if envelope is None:
        return "the evidence is not signed"
    try:
        payload, keyid = dsse.open_envelope(envelope, PAYLOAD_TYPE, trusted)
        statement = json.loads(payload)
    except dsse.SignatureInvalid as exc:
        return str(exc)
    except ValueError:
        return "the signed payload is not JSON"
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        return "the signed payload is not an in-toto Statement v1"
    if statement.get("predicateType") != EVIDENCE_PREDICATE:
        return f"the signed statement's predicateType is {statement.get('predicateType')!r}"
    expected = evidence_statement(item, mutations)
    if statement.get("subject") != expected["subject"]:
        return f"key {keyid[:12]} signed this evidence for another claim's mutations"
    if statement.get("predicate") != expected["predicate"]:
        return f"key {keyid[:12]} signed different evidence than this item"
    return None
