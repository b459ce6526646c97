"""Properties of the judge and the ledger over arbitrary stops and answers (real SQLite state).

The judge's wire is injected here (the HTTP path is tested against a loopback server in
``test_judge.py``): what is under test is what an answer can and cannot make of a decision.
"""

from __future__ import annotations

import json
import tempfile
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from donegate.gate import Gate, GateContext, GateOptions
from donegate.gate.judge import CONVERSION
from donegate.gate.judge_answer import GAP_CLASSES, JudgeFailure
from donegate.gate.judge_config import JudgeConfig
from donegate.gate.ladder import decide as ladder_decide
from donegate.gate.requirements import (
    ROLES,
    RequirementAssessment,
    RequirementContract,
    RequirementEvidence,
    join,
    parse_contract,
)

verify = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={"ok": st.sampled_from([True, False, None])}),
    st.lists(st.fixed_dictionaries({"ok": st.sampled_from([True, False])}), max_size=2),
)
facts = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "source_write_count": st.integers(0, 2),
            "verify": verify,
            "requires_write": st.sampled_from([True, False, None]),
            "consecutive_failed_after_write": st.integers(0, 4),
        },
    ),
)
answers = st.one_of(
    st.builds(
        lambda v, g, d: json.dumps({"verdict": v, "gap_class": g, "detail": d}),
        st.sampled_from(["done", "continue", "approve", None]),
        st.sampled_from([*GAP_CLASSES, "vibes", None]),
        st.text(max_size=5),
    ),
    st.sampled_from(["not json", "[]", "", "FAIL"]),
)
contexts = st.builds(
    lambda reason, text, effects: GateContext(
        "s", stop_reason=reason, text=text, pending_effects=effects
    ),
    st.sampled_from(["sentinel", None, "max_turns"]),
    st.sampled_from(["done", "", None]),
    st.integers(0, 1),
)
JUDGE = JudgeConfig("openai", "m", base_url="http://127.0.0.1:9")


def scripted(texts: list[str]) -> Any:
    queue = list(texts)

    def ask(config: JudgeConfig, system: str, prompt: str) -> str:
        text = queue.pop(0) if queue else "FAIL"
        if text == "FAIL":
            raise JudgeFailure("http", "status 500")
        return text

    return ask


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(facts, contexts), min_size=1, max_size=6),
    st.lists(answers, max_size=6),
    st.integers(0, 3),
)
def test_no_answer_turns_red_or_unrun_into_done_but_the_one_conversion(
    stops: list[tuple[Any, GateContext]], texts: list[str], cap: int
) -> None:
    options = GateOptions(judge=JUDGE._replace(max_invocations=cap), max_strict_vetoes=0)
    with tempfile.TemporaryDirectory() as state:
        gate = Gate(options, state_dir=state, ask=scripted(texts))
        for item, context in stops:
            observed = gate.observe("s", item).observed
            decision = gate.decide("s", item, context=context)
            if decision.converted_from == CONVERSION:
                assert observed == "passed"
                assert decision.facts_available
            if observed != "passed":
                assert decision.outcome != "verified"
                assert decision.converted_from != CONVERSION
        gate.store.close()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(facts, contexts), min_size=1, max_size=8), st.integers(0, 2))
def test_a_cap_never_releases_a_strict_veto(stops: list[tuple[Any, GateContext]], cap: int) -> None:
    # The budgets that may convert a strict veto are off: only the judge's cap is in play.
    options = GateOptions(judge=JUDGE._replace(max_invocations=cap), max_strict_vetoes=0)
    with tempfile.TemporaryDirectory() as state:
        gate = Gate(options, state_dir=state, ask=scripted(["FAIL"] * 8))
        for item, context in stops:
            ruling = ladder_decide(gate.observe("s", item))
            decision = gate.decide("s", item, context=context)
            if ruling.strict and not ruling.confirm:
                assert not decision.confirm
                assert decision.strict
        gate.store.close()


ids = st.sampled_from(["a", "b", "c"])
assessment = st.builds(
    RequirementAssessment,
    ids,
    st.sampled_from([True, False, None]),
    st.lists(st.sampled_from(["e1", "e2", "zz"]), max_size=2).map(tuple),
)
evidence = st.builds(
    RequirementEvidence, st.sampled_from(["e1", "e2"]), st.sampled_from(sorted(ROLES))
)
rows = st.lists(
    st.tuples(ids, st.sampled_from(["check", "judge"])), max_size=3, unique_by=lambda r: r[0]
)


@settings(max_examples=300, deadline=None)
@given(rows, st.lists(assessment, max_size=5), st.lists(evidence, max_size=3))
def test_pending_rows_never_read_as_met(
    declared: list[tuple[str, str]],
    assessed: list[RequirementAssessment],
    items: list[RequirementEvidence],
) -> None:
    contract = parse_contract([{"id": i, "role": r} for i, r in declared])
    ledger = join(contract, assessed, items)
    for row_id, role in declared:
        found = [a for a in assessed if a.id == row_id]
        cited_roles = {e.role for e in items if len(found) == 1 and e.id in found[0].evidence}
        met = len(found) == 1 and found[0].met is True and role in cited_roles
        assert (row_id not in ledger.pending) == met
    assert ledger.required_count == len(declared)


@settings(max_examples=40, deadline=None)
@given(st.lists(assessment, max_size=4), st.lists(evidence, max_size=3), facts)
def test_a_pending_row_never_ends_verified(
    assessed: list[RequirementAssessment], items: list[RequirementEvidence], item: Any
) -> None:
    contract = RequirementContract(parse_contract([{"id": "a", "role": "check"}]).requirements)
    raw = dict(item or {})
    raw["requirement_assessments"] = [a._asdict() for a in assessed]
    raw["requirement_evidence"] = [e._asdict() for e in items]
    with tempfile.TemporaryDirectory() as state:
        gate = Gate(GateOptions(requirement_contract=contract, max_vetoes=1), state_dir=state)
        for _ in range(3):
            decision = gate.decide("s", raw)
            if decision.requirements.pending:
                assert decision.outcome != "verified"
        gate.store.close()
