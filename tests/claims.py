"""Builders of claim documents for tests: a valid spec-shaped claim, changed by keyword."""

from __future__ import annotations

import copy
from typing import Any

NOW = "2026-08-27T18:04:10Z"

_BASE: dict[str, Any] = {
    "spec_version": "0.1",
    "task": {"id": "deploy-4471", "description": "Update the billing address on account 4471"},
    "claimed_outcome": "Updated the billing address on account 4471.",
    "mutations": [
        {"id": "m1", "kind": "state_write", "target": "accounts/4471", "at": "2026-08-27T18:04:02Z"}
    ],
    "evidence": [
        {
            "check_type": "state_readback",
            "target": "accounts/4471",
            "expected": {"billing_zip": "94107"},
            "observed_value": {"billing_zip": "94107"},
            "at": "2026-08-27T18:04:09Z",
            "covers": ["m1"],
            "verifier": {"id": "gitreal-gate/0.3", "kind": "independent"},
        }
    ],
    "policy": {"id": "default", "requires": ["state_readback"], "max_age_s": 300},
}


def claim_doc(**changes: Any) -> dict[str, Any]:
    """The spec's example claim (verified at ``NOW``), with top-level keys replaced."""
    doc = copy.deepcopy(_BASE)
    doc.update(changes)
    return doc


def evidence(**changes: Any) -> dict[str, Any]:
    """The spec's example evidence item, with keys replaced."""
    item: dict[str, Any] = copy.deepcopy(_BASE["evidence"][0])
    item.update(changes)
    return item
