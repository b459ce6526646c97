"""What is signed: in-toto Statements (v1) about a claim or one evidence item.

A claim's statement has the claim's digest (or the workspace snapshot's, when given) as subject
and the claim document as predicate. An evidence item's statement has the digest of the claim's
mutations as subject, so a signature made for one claim never vouches for evidence in another,
and the item itself (without its envelope) as predicate.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
CLAIM_PREDICATE = "https://donegate.dev/predicate/completion-claim/v0.1"
EVIDENCE_PREDICATE = "https://donegate.dev/predicate/evidence/v0.1"
ENVELOPE_FIELD = "dsse"


def canonical(value: Any) -> bytes:
    """JSON with sorted keys and no spaces: the same bytes for the same data."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(value: Any) -> str:
    """SHA-256 of ``value``'s canonical JSON, hex."""
    return hashlib.sha256(canonical(value)).hexdigest()


def claim_statement(claim: Mapping[str, Any], snapshot: str | None = None) -> dict[str, Any]:
    """The statement of a receipt: about the workspace snapshot (or the claim), the claim."""
    subject = (
        {"name": "workspace-snapshot", "digest": {"sha256": snapshot}}
        if snapshot
        else {"name": "completion-claim", "digest": {"sha256": digest(dict(claim))}}
    )
    return _statement(subject, CLAIM_PREDICATE, dict(claim))


def evidence_statement(item: Mapping[str, Any], mutations: Any) -> dict[str, Any]:
    """The statement of one evidence item, bound to the mutations of its claim."""
    bare = {k: v for k, v in item.items() if k != ENVELOPE_FIELD}
    subject = {"name": "claim-mutations", "digest": {"sha256": digest(mutations)}}
    return _statement(subject, EVIDENCE_PREDICATE, bare)


def _statement(subject: dict[str, Any], predicate_type: str, predicate: Any) -> dict[str, Any]:
    return {
        "_type": STATEMENT_TYPE,
        "subject": [subject],
        "predicateType": predicate_type,
        "predicate": predicate,
    }
