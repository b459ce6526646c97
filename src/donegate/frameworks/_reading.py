"""A run's recorded changes as a claim, and a checked claim as the gate's facts.

The framework path's own reading: the session's (:mod:`donegate.session.reading`) is about a
working tree's files; here every mutation is a change to a system of record, and each counts as
the gate's ``source``: something a verification must come after.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from donegate.gate.store import SessionHistory
from donegate.instant import Instant
from donegate.record import Record
from donegate.session import reading

if TYPE_CHECKING:
    from donegate.claim import Claim, Evidence

MAX_OUTCOME_CHARS = 4000


class Change(Record):
    """One call of a tool that changes the world, recorded when the call ended.

    ``error`` names the exception the tool raised: such a call is recorded as attempted, because
    a tool that failed half-way (a timeout after the commit, a crash after the first row) may
    still have changed the world, and only a check can say it did not.
    """

    kind: str
    target: str
    at: Instant
    tool: str | None = None
    error: str | None = None


def build_claim(
    session_id: str, agent: str, task: str | None, said: str, changes: Sequence[Change]
) -> Claim:
    """The run's claim: its changes as mutations, the agent's final answer as the outcome."""
    from donegate.claim import parse_claim

    return parse_claim(
        {
            "spec_version": "0.1",
            "task": {
                "id": session_id,
                "requested_by": agent,
                **({"description": task} if task else {}),
            },
            "claimed_outcome": (said or "(the agent said nothing)")[:MAX_OUTCOME_CHARS],
            "mutations": [_mutation(i, change) for i, change in enumerate(changes)],
        }
    )


def _mutation(index: int, change: Change) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": f"m{index + 1}",
        "kind": change.kind,
        "target": change.target,
        "at": str(change.at),
    }
    if change.tool is not None:
        found["tool"] = change.tool
    if change.error is not None:
        found["attempted"] = True
        found["error"] = change.error
    return found


def facts(
    changes: Sequence[Change],
    claim: Claim | None,
    history: SessionHistory,
    requires_write: bool | None,
) -> dict[str, Any]:
    """What the gate is told: the changes as writes, and the checked claim as the reading."""
    data: dict[str, Any] = {
        "writes": [{"path": c.target, "kind": "source"} for c in changes],
    }
    if requires_write is not None:
        data["requires_write"] = requires_write
    if claim is None or claim.verdict is None:
        return data
    ok = claim.verdict.state == "verified"
    data["verify"] = {
        "ok": ok,
        "findings": None if ok else findings(claim),
        "command": checks_text(claim),
    }
    if not ok and history.failed_in_a_row >= 1:
        # From the second red reading on, the gate reads a streak (and escalates at its threshold).
        data["consecutive_failed_after_write"] = history.failed_in_a_row + 1
    return data


def findings(claim: Claim) -> str:
    """What the agent is told went wrong, check by check: what was observed against what was
    expected, or why the check did not count."""
    return reading.findings(claim, _finding)


def _finding(item: Evidence) -> str:
    detail = getattr(item, "detail", None)
    why = detail.get("why_not_counted") if isinstance(detail, dict) else None
    name = checks_label(item)
    if isinstance(why, str):
        return f"{name} could not confirm it: {why}"
    observed = json.dumps(item.observed_value)
    return f"{name} observed {observed}, expected {json.dumps(item.expected)}"


def checks_text(claim: Claim) -> str:
    """The checks that read the world, as the gate's record names its verifier."""
    return ", ".join(dict.fromkeys(f"{e.check_type} {e.target}" for e in claim.evidence))


def requirement_facts(claim: Claim, satisfies: Sequence[tuple[str, ...]]) -> dict[str, Any]:
    """The ``[[requirements]]`` rows the configured checks meet: a check meets its rows when its
    evidence (the claim's last items, in configuration order) counted and matched."""
    from donegate.gate.requirements import CheckOutcome, from_checks

    assert claim.verdict is not None
    first = len(claim.evidence) - len(satisfies)
    matched = {f.index for f in claim.verdict.evidence if f.outcome == "match"}
    outcomes = [
        CheckOutcome(checks_label(claim.evidence[first + i]), first + i in matched, rows)
        for i, rows in enumerate(satisfies)
        if first + i >= 0
    ]
    assessments, evidence = from_checks(outcomes)
    return {
        "requirement_assessments": [a._asdict() for a in assessments],
        "requirement_evidence": [e._asdict() for e in evidence],
    }


def checks_label(item: Evidence) -> str:
    detail = getattr(item, "detail", None)
    label = detail.get("check") if isinstance(detail, dict) else None
    return label if isinstance(label, str) else f"{item.check_type} {item.target}"
