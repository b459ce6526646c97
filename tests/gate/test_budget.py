"""The soft budget, the strict cap, the session's counts and its events (real SQLite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from donegate.errors import InvalidInput
from donegate.gate import Gate, GateOptions

from .conftest import MakeGate

SOFT = {"source_write_count": 0}
STRICT = {"source_write_count": 1, "verify": {"ok": False}}
GREEN = {"source_write_count": 1, "verify": {"ok": True}}


def test_the_soft_budget_converts_the_veto_after_max_vetoes(make_gate: MakeGate) -> None:
    gate = make_gate(max_vetoes=2)
    decisions = [gate.decide("s", SOFT) for _ in range(4)]
    assert [d.confirm for d in decisions] == [False, False, True, True]
    converted = decisions[2]
    assert (converted.reason, converted.converted_from) == (
        "veto_budget_exhausted",
        "no_source_write",
    )
    assert converted.outcome == "not_verified"
    assert converted.message is None
    assert converted.trace[-1].rule == "budget"
    assert gate.store.counts("s").by_reason["no_source_write"] == 2  # conversions are not charged


def test_max_vetoes_zero_disables_conversion(make_gate: MakeGate) -> None:
    gate = make_gate(max_vetoes=0)
    assert not any(gate.decide("s", SOFT).confirm for _ in range(10))


def test_strict_vetoes_do_not_spend_the_soft_budget(make_gate: MakeGate) -> None:
    # Harn: three red runs, then the first soft veto converts at once. Here it is delivered.
    gate = make_gate(max_vetoes=3)
    for _ in range(3):
        gate.decide("s", STRICT)
    decision = gate.decide("s", SOFT)
    assert (decision.confirm, decision.reason) == (False, "no_source_write")
    counts = gate.store.counts("s")
    assert (counts.soft, counts.strict) == (1, 3)


def test_the_soft_budget_never_releases_a_strict_veto(make_gate: MakeGate) -> None:
    gate = make_gate(max_vetoes=1, max_strict_vetoes=0)
    gate.decide("s", SOFT)
    assert gate.decide("s", SOFT).reason == "veto_budget_exhausted"
    for _ in range(10):
        decision = gate.decide("s", STRICT)
        assert (decision.confirm, decision.strict) == (False, True)


def test_the_strict_cap_converts_after_max_strict_vetoes_since_the_last_allow(
    make_gate: MakeGate,
) -> None:
    gate = make_gate(max_strict_vetoes=2)
    gate.decide("s", STRICT)
    gate.decide("s", GREEN)  # an allow: the run of strict vetoes starts again
    first = [gate.decide("s", STRICT) for _ in range(3)]
    assert [d.confirm for d in first] == [False, False, True]
    capped = first[2]
    assert (capped.reason, capped.converted_from) == (
        "strict_veto_cap_reached",
        "verification_after_write_red",
    )
    assert (capped.strict, capped.outcome) == (False, "not_verified")
    assert gate.store.outcome("s") == "not_verified"
    assert gate.decide("s", STRICT).confirm is False  # the cap counts again from that allow


def test_the_strict_cap_keeps_the_escalation_fields(make_gate: MakeGate) -> None:
    gate = make_gate(max_strict_vetoes=1, escalation_target="oncall")
    facts = {**STRICT, "consecutive_failed_after_write": 4}
    gate.decide("s", facts)
    capped = gate.decide("s", facts)
    assert capped.converted_from == "repeated_verification_failures"
    assert (capped.escalation_recommended, capped.escalation_target) == (True, "oncall")


def test_missing_verification_is_strict_and_never_released_by_the_budget(
    make_gate: MakeGate,
) -> None:
    gate = make_gate(max_vetoes=1, max_strict_vetoes=0, verify_command=lambda: None)
    reasons = {gate.decide("s", {"source_write_count": 1}).reason for _ in range(5)}
    assert reasons == {"missing_verification"}


def test_an_allow_is_never_charged_and_counts_are_zero_filled(make_gate: MakeGate) -> None:
    gate = make_gate()
    gate.decide("s", GREEN)
    counts = gate.store.counts("s")
    assert set(counts.by_reason) == {
        "no_source_write",
        "verification_after_write_red",
        "failed_verification",
        "repeated_verification_failures",
        "missing_verification",
    }
    assert sum(counts.by_reason.values()) == counts.soft == counts.strict == 0
    assert gate.store.counts("never-seen") == counts


def test_sessions_are_counted_apart(make_gate: MakeGate) -> None:
    gate = make_gate(max_vetoes=1)
    gate.decide("a", SOFT)
    assert gate.decide("b", SOFT).confirm is False
    assert gate.decide("a", SOFT).confirm is True


def test_state_persists_across_gates_on_the_same_directory(tmp_path: Path) -> None:
    options = GateOptions(max_vetoes=1)
    Gate(options, state_dir=tmp_path).decide("s", SOFT)
    assert Gate(options, state_dir=tmp_path).decide("s", SOFT).reason == "veto_budget_exhausted"


def test_every_decision_emits_one_judge_decision_event(make_gate: MakeGate) -> None:
    gate = make_gate(max_vetoes=1, escalation_target="oncall")
    gate.decide("s", SOFT)
    gate.decide("s", SOFT)
    gate.decide("s", {**STRICT, "consecutive_failed_after_write": 3})
    gate.decide("s")
    events = gate.store.events("s")
    assert len(events) == 4
    for event in events:
        assert (event["type"], event["trigger"], event["source"]) == (
            "judge_decision",
            "verify_completion",
            "deterministic",
        )
    assert [(e["confirm"], e["reason"], e["converted_from"]) for e in events] == [
        (False, "no_source_write", None),
        (True, "veto_budget_exhausted", "no_source_write"),
        (False, "repeated_verification_failures", None),
        (True, "facts_unavailable", None),
    ]
    assert (events[2]["escalation_recommended"], events[2]["escalation_target"]) == (True, "oncall")
    assert "escalation_target" not in events[0]
    assert events[3]["verification"]["observed"] == "not_run"
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)


@pytest.mark.parametrize("session_id", ["", "   ", None])
def test_a_session_id_is_required(make_gate: MakeGate, session_id: object) -> None:
    with pytest.raises(InvalidInput) as caught:
        make_gate().decide(session_id, SOFT)  # type: ignore[arg-type]
    assert caught.value.path == "session_id"


def test_state_lives_in_the_state_dir_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DONEGATE_STATE_DIR", str(tmp_path / "env-state"))
    gate = Gate()
    gate.decide("s", SOFT)
    assert gate.store.path == tmp_path / "env-state" / "gate.sqlite3"
    assert gate.store.path.is_file()


def test_blocks_in_a_row_of_any_class_convert_below_the_hosts_cap(make_gate: MakeGate) -> None:
    # Soft and strict budgets are separate: 2 + 2 could block four stops in a row.
    gate = make_gate(max_vetoes=2, max_strict_vetoes=2, max_blocks_in_a_row=3)
    decisions = [gate.decide("s", facts) for facts in (SOFT, SOFT, STRICT, STRICT)]
    assert [d.confirm for d in decisions] == [False, False, True, False]
    let_go = decisions[2]
    assert (let_go.reason, let_go.converted_from) == (
        "blocks_in_a_row_cap_reached",
        "verification_after_write_red",
    )
    assert let_go.outcome == "not_verified"
    # The allow ends both runs: the gate's own counters agree with what the host was told.
    assert decisions[3].counts.blocks_in_a_row == 1
    assert decisions[3].counts.strict_since_allow == 1
    events = gate.store.events("s")
    assert [e["confirm"] for e in events] == [False, False, True, False]


def test_the_failure_streak_is_the_gates_history(make_gate: MakeGate) -> None:
    gate = make_gate(max_strict_vetoes=0)
    gate.decide("s", STRICT, failing_count=3)
    gate.decide("s", STRICT, failing_count=2)
    assert tuple(gate.history("s"))[:2] == (2, 2)
    gate.decide("s", GREEN)
    assert gate.history("s").failed_in_a_row == 0
