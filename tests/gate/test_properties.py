"""Properties over arbitrary sequences of decisions on one session (real SQLite state)."""

from __future__ import annotations

import tempfile
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from donegate.gate import Gate, GateOptions, parse_facts
from donegate.gate.facts import combine
from donegate.gate.feedback import render
from donegate.gate.ladder import STRICT_REASONS

results = st.fixed_dictionaries(
    {},
    optional={
        "ok": st.sampled_from([True, False, None]),
        "findings": st.text(max_size=12),
        "command": st.sampled_from(["pytest", " ", "cargo test"]),
    },
)
verify = st.one_of(results, st.lists(results, max_size=3))
write = st.fixed_dictionaries(
    {},
    optional={"kind": st.sampled_from(["source", "cosmetic", "test", "doc"]), "path": st.just("a")},
)
facts = st.fixed_dictionaries(
    {},
    optional={
        "source_write_count": st.integers(0, 3),
        "cosmetic_write_count": st.integers(0, 2),
        "writes": st.lists(write, max_size=3),
        "verify": verify,
        "consecutive_failed_after_write": st.integers(0, 6),
        "verification_failures_converging": st.booleans(),
        "requires_write": st.sampled_from([True, False, None]),
    },
)
options = st.builds(
    GateOptions,
    max_vetoes=st.integers(0, 3),
    max_strict_vetoes=st.integers(0, 3),
    escalation_threshold=st.integers(1, 4),
    require_source_write=st.booleans(),
)
stops = st.lists(st.one_of(st.none(), facts), min_size=1, max_size=10)


def run(gate_options: GateOptions, sequence: list[dict[str, Any] | None]) -> list[Any]:
    with tempfile.TemporaryDirectory() as state:
        gate = Gate(gate_options, state_dir=state)
        decisions = [gate.decide("s", item) for item in sequence]
        assert len(gate.store.events("s")) == len(sequence)
        gate.store.close()
    return decisions


@settings(max_examples=100, deadline=None)
@given(options, stops)
def test_never_verified_while_the_latest_reading_is_red(
    gate_options: GateOptions, sequence: list[dict[str, Any] | None]
) -> None:
    for item, decision in zip(sequence, run(gate_options, sequence), strict=True):
        reading = None if item is None else combine(parse_facts(item).verify)
        if decision.reason.startswith("verified"):
            assert reading is not None
            assert reading.ok
            assert decision.verification.observed == "passed"
        if reading is not None and not reading.ok:
            assert decision.verification.observed == "failed"
            assert not decision.reason.startswith("verified")
        if decision.reason == "facts_unavailable":
            assert decision.verification.observed == "not_run"


@settings(max_examples=100, deadline=None)
@given(options, stops)
def test_a_strict_veto_is_never_converted_by_the_soft_budget(
    gate_options: GateOptions, sequence: list[dict[str, Any] | None]
) -> None:
    soft_delivered = strict_delivered = 0
    for decision in run(gate_options, sequence):
        if decision.reason == "veto_budget_exhausted":
            assert decision.converted_from == "no_source_write"
        if decision.converted_from in STRICT_REASONS:
            assert decision.reason == "strict_veto_cap_reached"
        if not decision.confirm:
            soft_delivered += not decision.strict
            strict_delivered += decision.strict
        assert (decision.counts.soft, decision.counts.strict) == (soft_delivered, strict_delivered)
    if gate_options.max_vetoes:
        assert soft_delivered <= gate_options.max_vetoes


@given(st.text(min_size=1), st.integers(0, 99))
def test_rendering_never_expands_placeholders_inside_the_findings(
    findings: str, attempts: int
) -> None:
    text = render("{attempts}|{findings}", findings=findings, attempts=attempts)
    assert text == f"{attempts}| Findings: {findings}."
