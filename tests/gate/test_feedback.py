"""Feedback texts, one-pass rendering, and the decorator on delivered vetoes only."""

from __future__ import annotations

from typing import Any

import pytest

from donegate.errors import InvalidInput
from donegate.gate import DEFAULT_TEMPLATES, Decision
from donegate.gate.feedback import render

from .conftest import MakeGate

RED_AFTER_WRITE = {"source_write_count": 1, "verify": {"ok": False, "findings": "E0308"}}


def test_findings_render_as_a_sentence_and_vanish_when_absent() -> None:
    assert render("Red.{findings} Fix.", findings="E0308", attempts=1) == (
        "Red. Findings: E0308. Fix."
    )
    assert render("Red.{findings} Fix.", findings=None, attempts=1) == "Red. Fix."


def test_placeholders_inside_the_findings_stay_literal() -> None:
    text = render("{attempts}:{findings}", findings="{attempts} {findings} {x}", attempts=4)
    assert text == "4: Findings: {attempts} {findings} {x}."


def test_the_default_feedback_for_a_red_verifier_carries_the_findings(make_gate: MakeGate) -> None:
    decision = make_gate().decide("s", RED_AFTER_WRITE)
    assert decision.message is not None
    assert " Findings: E0308." in decision.message


@pytest.mark.parametrize(
    ("writes", "key"),
    [
        ([], "no_source_write_absent"),
        ([{"kind": "cosmetic"}], "no_source_write_cosmetic"),
        ([{"kind": "test"}, {"kind": "doc"}], "no_source_write_other"),
    ],
)
def test_no_source_write_feedback_says_what_was_written(
    make_gate: MakeGate, writes: list[dict[str, str]], key: str
) -> None:
    decision = make_gate().decide("s", {"writes": writes})
    assert decision.reason == "no_source_write"
    assert decision.message == DEFAULT_TEMPLATES[key]


def test_host_templates_merge_over_the_defaults_and_attempts_is_the_streak(
    make_gate: MakeGate,
) -> None:
    gate = make_gate(feedback_templates={"failed_verification": "try {attempts}{findings}"})
    facts = {**RED_AFTER_WRITE, "consecutive_failed_after_write": 2}
    assert gate.decide("s", facts).message == "try 2 Findings: E0308."
    assert (
        gate.decide("s", {"source_write_count": 0}).message
        == (DEFAULT_TEMPLATES["no_source_write_absent"])
    )


def test_attempts_without_a_streak_counts_this_sessions_vetoes_of_that_reason(
    make_gate: MakeGate,
) -> None:
    gate = make_gate(feedback_templates={"verification_after_write_red": "{attempts}"})
    assert [gate.decide("s", RED_AFTER_WRITE).message for _ in range(3)] == ["1", "2", "3"]


def test_the_decorator_runs_on_a_delivered_veto_with_the_verdict(make_gate: MakeGate) -> None:
    calls: list[tuple[str, str, Decision]] = []

    def decorate(reason: str, feedback: str, decision: Decision) -> str:
        calls.append((reason, feedback, decision))
        return feedback + " [rust: check the types]"

    gate = make_gate(feedback_decorator=decorate, escalation_target="oncall")
    facts = {**RED_AFTER_WRITE, "consecutive_failed_after_write": 5}
    decision = gate.decide("s", facts)
    assert decision.message is not None
    assert decision.message.endswith(" [rust: check the types]")
    reason, feedback, verdict = calls[0]
    assert reason == "repeated_verification_failures"
    assert "E0308" in feedback
    assert (verdict.escalation_recommended, verdict.escalation_target) == (True, "oncall")


def test_the_decorator_never_runs_on_an_allow_or_a_converted_veto(make_gate: MakeGate) -> None:
    calls: list[str] = []

    def decorate(reason: str, feedback: str, decision: Decision) -> str:
        calls.append(reason)
        return feedback

    gate = make_gate(feedback_decorator=decorate, max_vetoes=1)
    gate.decide("s", {"source_write_count": 1, "verify": {"ok": True}})
    gate.decide("s", {"source_write_count": 0})
    converted = gate.decide("s", {"source_write_count": 0})
    assert converted.reason == "veto_budget_exhausted"
    assert calls == ["no_source_write"]


def test_a_decorator_that_returns_no_string_is_an_error_not_an_allow(make_gate: MakeGate) -> None:
    def decorate(reason: str, feedback: str, decision: Decision) -> Any:
        return None

    gate = make_gate(feedback_decorator=decorate)
    with pytest.raises(InvalidInput, match="expected a string"):
        gate.decide("s", RED_AFTER_WRITE)
