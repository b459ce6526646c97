"""The ladder's rules, one test per row and per consequence in the behaviour notes."""

from __future__ import annotations

from typing import Any

import pytest

from donegate.gate import Decision, GateContext

from .conftest import MakeGate

RED = {"ok": False, "findings": "E0308"}
GREEN = {"ok": True, "command": "cargo test"}
LACKING = {"ok": False, "unavailable": "the test command's program 'cargo' is not installed"}


def decide(make_gate: MakeGate, facts: dict[str, Any] | None, **options: Any) -> Decision:
    return make_gate(**options).decide("s", facts)


@pytest.mark.parametrize(
    ("facts", "reason", "confirm", "strict"),
    [
        ({"source_write_count": 0}, "no_source_write", False, False),
        ({"source_write_count": 1, "verify": RED}, "verification_after_write_red", False, True),
        ({"source_write_count": 1, "verify": LACKING}, "verifier_unavailable", True, False),
        (
            {"source_write_count": 1, "verify": [LACKING, RED]},
            "verification_after_write_red",
            False,
            True,
        ),
        ({"source_write_count": 1, "verify": GREEN}, "verified_after_write", True, False),
        ({"source_write_count": 1, "verify": []}, "missing_verification", False, True),
        ({"source_write_count": 0, "requires_write": False}, "no_workspace_write", True, False),
        ({"source_write_count": 2}, "wrote_source_no_oracle", True, False),
        ({}, "gate_abstain", True, False),
        ({"verify": GREEN}, "verified", True, False),
    ],
)
def test_each_rule_of_the_ladder(
    make_gate: MakeGate, facts: dict[str, Any], reason: str, confirm: bool, strict: bool
) -> None:
    decision = decide(make_gate, facts)
    assert (decision.reason, decision.confirm, decision.strict) == (reason, confirm, strict)


def test_the_trace_names_every_rule_tried_and_the_one_that_fired(make_gate: MakeGate) -> None:
    decision = decide(make_gate, {"source_write_count": 1, "verify": []})
    assert [(s.rule, s.fired) for s in decision.trace] == [
        ("0", False),
        ("1", False),
        ("2u", False),
        ("2", False),
        ("3", False),
        ("4", True),
    ]


def test_degraded_mode_allows_as_not_run_and_charges_nothing(make_gate: MakeGate) -> None:
    decision = decide(make_gate, None)
    assert (decision.confirm, decision.reason, decision.facts_available) == (
        True,
        "facts_unavailable",
        False,
    )
    assert decision.verification.observed == "not_run"
    assert decision.verification.oracle_expected is False
    assert decision.counts.soft == decision.counts.strict == 0
    assert decision.outcome == "not_verified"


def test_a_verify_command_alone_leaves_degraded_mode(make_gate: MakeGate) -> None:
    decision = make_gate(verify_command=lambda: RED).decide("s")
    assert decision.reason == "verification_after_write_red"  # writes unknown: red blocks
    assert decision.verification.oracle_expected is True


def test_a_green_verifier_does_not_rescue_a_task_without_a_source_write(
    make_gate: MakeGate,
) -> None:
    assert decide(make_gate, {"source_write_count": 0, "verify": GREEN}).reason == "no_source_write"


def test_a_red_verifier_is_ignored_when_no_write_was_needed_or_made(make_gate: MakeGate) -> None:
    facts = {"writes": [], "verify": RED, "requires_write": False}
    assert decide(make_gate, facts).reason == "no_workspace_write"


def test_a_red_verifier_blocks_when_writes_are_unknown(make_gate: MakeGate) -> None:
    decision = decide(make_gate, {"verify": RED})
    assert (decision.confirm, decision.reason) == (False, "verification_after_write_red")


def test_a_configured_verifier_returning_nothing_after_a_write_is_missing_verification(
    make_gate: MakeGate,
) -> None:
    decision = make_gate(verify_command=lambda: None).decide("s", {"source_write_count": 1})
    assert (decision.reason, decision.strict) == ("missing_verification", True)
    assert decision.verification.observed == "not_run"


def test_facts_verify_wins_and_the_command_runs_at_every_decision_otherwise(
    make_gate: MakeGate,
) -> None:
    calls: list[int] = []

    def verify() -> dict[str, Any]:
        calls.append(1)
        return GREEN

    gate = make_gate(verify_command=verify)
    assert gate.decide("s", {"source_write_count": 1, "verify": RED}).verification.observed == (
        "failed"
    )
    assert calls == []
    gate.decide("s", {"source_write_count": 1})
    gate.decide("s", {"source_write_count": 1})
    assert len(calls) == 2


def test_the_facts_callback_receives_the_context(make_gate: MakeGate) -> None:
    seen: list[GateContext] = []

    def facts(ctx: GateContext) -> dict[str, Any]:
        seen.append(ctx)
        return {"source_write_count": 1, "verify": GREEN}

    gate = make_gate(facts=facts)
    context = GateContext("s", task="fix it", stop_reason="sentinel")
    assert gate.decide("s", context=context).reason == "verified_after_write"
    assert gate.decide("s").reason == "verified_after_write"
    assert seen[0] is context
    assert seen[1].session_id == "s"


def test_a_facts_callback_returning_none_without_a_verifier_abstains(make_gate: MakeGate) -> None:
    decision = make_gate(facts=lambda ctx: None).decide("s")
    assert (decision.reason, decision.verification.observed) == ("facts_unavailable", "not_run")


@pytest.mark.parametrize(
    ("streak", "converging", "reason", "escalate"),
    [
        (0, False, "failed_verification", False),
        (2, False, "failed_verification", False),
        (3, False, "repeated_verification_failures", True),
        (7, False, "repeated_verification_failures", True),
        (3, True, "failed_verification", False),
    ],
)
def test_streak_aware_reasons_and_escalation(
    make_gate: MakeGate, streak: int, converging: bool, reason: str, escalate: bool
) -> None:
    facts = {
        "source_write_count": 1,
        "verify": RED,
        "consecutive_failed_after_write": streak,
        "verification_failures_converging": converging,
    }
    decision = decide(make_gate, facts, escalation_target="oncall")
    assert (decision.reason, decision.strict) == (reason, True)
    assert decision.escalation_recommended is escalate
    assert decision.escalation_target == ("oncall" if escalate else None)


def test_escalation_threshold_is_configurable_and_the_target_is_only_copied_when_set(
    make_gate: MakeGate,
) -> None:
    facts = {"source_write_count": 1, "verify": RED, "consecutive_failed_after_write": 1}
    decision = decide(make_gate, facts, escalation_threshold=1)
    assert (decision.reason, decision.escalation_recommended) == (
        "repeated_verification_failures",
        True,
    )
    assert decision.escalation_target is None
    assert "escalation_target" not in decision.to_json_dict()


@pytest.mark.parametrize(
    ("option", "fact", "require_source_write", "reason"),
    [
        (False, True, True, "no_workspace_write"),
        (True, False, False, "no_source_write"),
        (None, False, True, "no_workspace_write"),
        (None, True, False, "no_source_write"),
        (None, None, False, "no_workspace_write"),
        (None, None, True, "no_source_write"),
    ],
)
def test_requires_write_precedence(
    make_gate: MakeGate,
    option: bool | None,
    fact: bool | None,
    require_source_write: bool,
    reason: str,
) -> None:
    facts: dict[str, Any] = {"source_write_count": 0, "requires_write": fact}
    decision = decide(
        make_gate, facts, requires_write=option, require_source_write=require_source_write
    )
    assert decision.reason == reason


def test_a_cosmetic_final_write_does_not_flip_a_green_run(make_gate: MakeGate) -> None:
    facts = {"source_write_count": 1, "cosmetic_write_count": 3, "verify": GREEN}
    assert decide(make_gate, facts).reason == "verified_after_write"


def test_cosmetic_only_writes_cannot_claim_done(make_gate: MakeGate) -> None:
    decision = decide(make_gate, {"writes": [{"path": "a.md", "kind": "cosmetic"}]})
    assert decision.reason == "no_source_write"
    assert decision.message is not None
    assert "cosmetic" in decision.message


def test_the_public_api_lists_only_names_that_exist() -> None:
    import donegate.gate

    assert all(hasattr(donegate.gate, name) for name in donegate.gate.__all__)
    assert {"Gate", "GateOptions", "CompletionFacts", "Decision"} <= set(donegate.gate.__all__)
