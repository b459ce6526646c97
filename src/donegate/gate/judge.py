"""The bounded judge: an LLM asked, after the ladder allowed, what a verifier cannot see.

It runs only after the deterministic ladder allowed (a deterministic veto never spends a call),
and only when the runtime does not already hold the answer (:func:`skip_clauses`). What it may
decide, and what it may not:

* it keeps sole authority over artifacts, manner and negative clauses, and authorization: its
  ``continue`` sends the agent back with its ``detail`` and ``gap_class``;
* it loses authority over the one question an oracle answered: a ``continue`` naming
  ``failed_verification`` over a gate that ran and read ``passed`` becomes ``done``
  (:data:`CONVERSION`);
* its ``done`` cannot clear a pending acceptance row: the ledger turns it into a ``continue``;
* a provider that fails, times out, refuses or answers out of format leaves the stop unverified
  (``completion_judge_error``), never verified;
* past ``max_invocations`` calls the stop ends ``completion_unverified``, or ``stop_verified``
  (``judge_cap_reached_over_verified_pass``) when the verifier passed and the ledger is clear.

The HTTP client (:mod:`.judge_client`, httpx) is imported only when a call is actually made.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from donegate.gate.judge_answer import JudgeAnswer, JudgeFailure, JudgeReport, parse_answer
from donegate.gate.judge_config import JudgeConfig
from donegate.gate.ladder import Observation, Ruling
from donegate.gate.requirements import (
    JUDGE_EVIDENCE,
    Ledger,
    RequirementAssessment,
    RequirementContract,
    RequirementEvidence,
    join,
)
from donegate.timefmt import rfc3339

if TYPE_CHECKING:
    from donegate.gate.decision import GateContext
    from donegate.gate.store import GateStore

CONVERSION = "failed_verification_contradicted_by_gate"
SKIPPED_BY_GATE = "skipped_verified_after_write"
SKIPPED_BY_CATALOG = "skipped_light_scrutiny"
JUDGE_VETO = "judge_continue"
PENDING_VETO = "requirements_pending"
JUDGE_ERROR = "completion_judge_error"
CAP_UNVERIFIED = "completion_unverified"
CAP_OVER_PASS = "judge_cap_reached_over_verified_pass"
SENTINEL = "sentinel"

Ask = Callable[[JudgeConfig, str, str], str]
"""``ask(config, system, prompt) -> answer text``; raises :class:`JudgeFailure`."""


# --- the rules ---------------------------------------------------------------------------------


def skip_clauses(
    obs: Observation, ruling: Ruling, context: GateContext | None, ledger: Ledger
) -> dict[str, bool]:
    """The seven clauses under which no judge is called; the judge is skipped only if all hold."""
    text = context.text if context is not None else None
    return {
        "gate_ran": obs.facts_available,
        "verified_after_write": ruling.confirm and ruling.reason == "verified_after_write",
        "observed_passed": obs.observed == "passed",
        "sealed_final_answer": context is not None and context.stop_reason == SENTINEL,
        "answer_non_empty": bool(text and text.strip()),
        "nothing_deferred": context is not None and context.pending_effects == 0,
        "ledger_clear": ledger.pending_count == 0,
    }


def converts(obs: Observation, ladder_reason: str, answer: JudgeAnswer) -> bool:
    """The one conversion: all four of the page's conditions, on a ``continue``."""
    return (
        answer.verdict == "continue"
        and obs.facts_available
        and obs.observed == "passed"
        and ladder_reason != "facts_unavailable"
        and answer.gap_class == "failed_verification"
    )


class JudgeStage:
    """The judge as a gate :data:`~donegate.gate.core.Stage`, bound to one stop.

    After the call, :attr:`report` says what happened and :attr:`ledger` is the acceptance ledger
    with the judge's own assessments joined in.
    """

    def __init__(
        self,
        config: JudgeConfig,
        store: GateStore,
        session_id: str,
        context: GateContext | None,
        requirements: tuple[
            RequirementContract | None,
            list[RequirementAssessment],
            list[RequirementEvidence],
        ],
        clock: Callable[[], datetime],
        ask: Ask | None = None,
    ) -> None:
        self.config = config
        self._store = store
        self._session_id = session_id
        self._context = context
        self._contract, self._assessments, self._evidence = requirements
        self._clock = clock
        self._ask = ask
        self.ledger = join(self._contract, self._assessments, self._evidence)
        self.report: JudgeReport | None = None

    def __call__(self, obs: Observation, ruling: Ruling) -> Ruling:
        """Skip, cap, ask; then the conversion and the ledger decide what the answer means."""
        if not ruling.confirm:
            return ruling  # a deterministic veto never spends a judge call
        clauses = skip_clauses(obs, ruling, self._context, self.ledger)
        if all(clauses.values()):
            self.report = self._report(False, SKIPPED_BY_GATE, "gate", clauses)
            return ruling._replace(source="gate")
        if self.config.scrutiny == "light" and self.ledger.clear:
            self.report = self._report(False, SKIPPED_BY_CATALOG, "catalog", clauses)
            return ruling._replace(source="catalog")
        invocation = self._reserve()
        if invocation is None:
            return self._capped(obs, clauses)
        shown = self._packet(obs)
        try:
            answer = parse_answer(self._call(shown), self._judge_rows())
        except JudgeFailure as exc:
            self.report = self._report(
                True, "failed", "judge", clauses, error=str(exc), invocation=invocation, shown=shown
            )
            return Ruling(True, JUDGE_ERROR, source="judge")
        return self._answered(obs, ruling, clauses, answer, invocation, shown)

    def _answered(
        self,
        obs: Observation,
        ruling: Ruling,
        clauses: dict[str, bool],
        answer: JudgeAnswer,
        invocation: int,
        shown: dict[str, Any],
    ) -> Ruling:
        self.ledger = join(
            self._contract,
            [*self._assessments, *answer.requirements],
            [*self._evidence, RequirementEvidence(JUDGE_EVIDENCE, "judge", "the judge's answer")],
        )
        converted = CONVERSION if converts(obs, ruling.reason, answer) else None
        self.report = self._report(
            True,
            "answered",
            "judge",
            clauses,
            answer=answer,
            converted_from=converted,
            invocation=invocation,
            shown=shown,
        )
        if answer.verdict == "continue" and converted is None:
            # The feedback template ends the findings with its own full stop.
            detail = f"[{answer.gap_class}] {answer.detail}".strip().rstrip(".")
            return Ruling(False, JUDGE_VETO, feedback_key=JUDGE_VETO, source="judge", detail=detail)
        if not self.ledger.clear:
            return pending_veto(self.ledger, source="judge")
        return ruling._replace(source="judge")

    def _capped(self, obs: Observation, clauses: dict[str, bool]) -> Ruling:
        over_pass = obs.facts_available and obs.observed == "passed" and self.ledger.clear
        status = "stop_verified" if over_pass else CAP_UNVERIFIED
        self.report = self._report(False, "cap_reached", "judge", clauses, status=status)
        return Ruling(True, CAP_OVER_PASS if over_pass else CAP_UNVERIFIED, source="judge")

    def _reserve(self) -> int | None:
        """Spend one call of the session's budget and record ``judge_started`` (None: capped).

        Its own short transaction, before the network: the write lock is not held while the
        provider thinks, and two concurrent stops cannot both take the last call.
        """
        with self._store.session(self._session_id) as tx:
            used = tx.judge_invocations()
            cap = self.config.cap
            if cap is not None and used >= cap:
                return None
            tx.spend_judge_call()
            event = {
                "type": "judge_started",
                "trigger": self.config.seam,
                "at": rfc3339(self._clock()),
                "session_id": self._session_id,
                "invocation": used + 1,
                "cap": cap,
                "provider": self.config.provider,
                "model": self.config.model,
            }
            tx.append(event)
        return used + 1

    def _call(self, shown: dict[str, Any]) -> str:
        if self._ask is not None:
            return self._ask(self.config, self.config.system_prompt, render(shown))
        from donegate.gate import judge_client  # httpx: only when a call is made

        return judge_client.ask(self.config, self.config.system_prompt, render(shown))

    def _judge_rows(self) -> frozenset[str]:
        rows = self._contract.requirements if self._contract else ()
        return frozenset(r.id for r in rows if r.role == "judge")

    def _packet(self, obs: Observation) -> dict[str, Any]:
        ctx = self._context
        reading = obs.reading
        rows = self._contract.requirements if self._contract else ()
        return {
            "task": ctx.task if ctx else None,
            "diff": ctx.diff if ctx else None,
            "final_message": ctx.text if ctx else None,
            "evidence": [] if reading is None else [_reading_item(obs)],
            "verification": {
                "oracle_expected": obs.oracle_expected,
                "command": reading.command if reading else None,
                "observed": obs.observed,
                "observed_at_evidence_index": None if reading is None else 0,
            },
            "assess": [r.id for r in rows if r.role == "judge"],
            "requirements": {r.id: r.description or r.id for r in rows if r.role == "judge"},
            "pending": dict(self.ledger.pending),
        }

    def _report(
        self, invoked: bool, outcome: str, source: str, clauses: dict[str, bool], **more: Any
    ) -> JudgeReport:
        return JudgeReport(
            self.config.seam, invoked, outcome, source, clauses, cap=self.config.cap, **more
        )


def _reading_item(obs: Observation) -> dict[str, Any]:
    assert obs.reading is not None
    return {
        "role": "verifier",
        "ok": obs.reading.ok,
        "command": obs.reading.command,
        "findings": obs.reading.findings,
    }


def pending_veto(ledger: Ledger, *, source: str) -> Ruling:
    """A soft veto naming the pending rows: a ``done`` never clears an outstanding row."""
    names = ", ".join(f"{name} ({why})" for name, why in ledger.pending.items())
    return Ruling(False, PENDING_VETO, feedback_key=PENDING_VETO, source=source, detail=names)


def render(shown: Mapping[str, Any]) -> str:
    """The judge's prompt: the task, the diff, the final message, the verification block."""
    requirements = "\n".join(f"- {k}: {v}" for k, v in shown["requirements"].items())
    return "\n\n".join(
        [
            f"## Task\n{shown['task'] or '(not recorded)'}",
            f"## Diff of the agent's writes\n{shown['diff'] or '(none given)'}",
            f"## The agent's final message\n{shown['final_message'] or '(empty)'}",
            "## Deterministic verification (from the team's verifier; not yours to re-judge "
            "when observed is passed)\nverification: " + json.dumps(shown["verification"]),
            f"## Requirements for you to assess\n{requirements or '(none)'}",
        ]
    )
