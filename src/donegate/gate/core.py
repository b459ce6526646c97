"""The gate: facts -> observation -> stages (the ladder first) -> budget -> recorded decision."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.gate import _check, budget, feedback, ladder
from donegate.gate.budget import Resolution
from donegate.gate.decision import Decision, GateContext, Verification
from donegate.gate.facts import (
    CompletionFacts,
    WriteCounts,
    combine,
    count_writes,
    parse_facts,
    parse_verify,
)
from donegate.gate.ladder import Observation, Ruling, Step
from donegate.gate.options import GateOptions
from donegate.gate.requirements import (
    Ledger,
    join,
    observe_output,
)
from donegate.gate.store import GateStore, SessionHistory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from donegate.gate.judge import Ask
    from donegate.gate.judge_answer import JudgeReport

Stage = Callable[[Observation, Ruling], Ruling]
"""A decision stage after the ladder (a judge, later): it sees the observation and the ruling so
far, and returns the ruling to go on with. The budget applies to the last stage's ruling."""

if TYPE_CHECKING:
    FactsInput = CompletionFacts | Mapping[str, Any] | None


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Gate:
    """A completion gate: decide, for a session, whether an agent may stop.

    ``Gate(options, state_dir=...)`` keeps per-session state in ``state_dir`` (else
    ``$DONEGATE_STATE_DIR``, else the user's state directory); pass ``store`` to share one.
    ``ask`` replaces the judge's HTTP client (``ask(config, system, prompt) -> text``).
    """

    def __init__(
        self,
        options: GateOptions | None = None,
        *,
        state_dir: str | Path | None = None,
        store: GateStore | None = None,
        clock: Callable[[], datetime] = _utc_now,
        ask: Ask | None = None,
    ) -> None:
        self.options = options or GateOptions()
        self.store = store or GateStore.in_state_dir(state_dir)
        self._clock = clock
        # The judge's wire, injectable for unit tests; None: the real HTTP client.
        self._ask = ask
        # The ladder always runs first; stages added here run after it, in order.
        self._stages: tuple[Stage, ...] = ()

    def decide(
        self,
        session_id: str,
        facts: FactsInput = None,
        *,
        context: GateContext | None = None,
        failing_count: int | None = None,
    ) -> Decision:
        """Decide one stop of ``session_id`` and record it.

        ``facts`` (a :class:`CompletionFacts` or plain data) are used when given; otherwise the
        ``facts`` callback is asked with ``context``. With no facts and no ``verify_command`` the
        gate abstains: allow, ``facts_unavailable``, verification ``not_run``. ``failing_count``
        (how many checks or tests failed, when known) is kept in the session's history, so that
        the next red reading can tell whether failures are shrinking (:meth:`history`).
        """
        _check_session(session_id)
        observation, parsed = self._observe(session_id, facts, context)
        ruling = ladder.decide(observation)
        for stage in self._stages:
            ruling = stage(observation, ruling)
        ruling, ledger, judged = self._after_ladder(
            session_id, observation, ruling, parsed, context
        )
        with self.store.session(session_id) as tx:
            resolution = budget.resolve(
                ruling,
                tx.counts(),
                max_vetoes=self.options.max_vetoes,
                max_strict=self.options.max_strict_vetoes,
                max_blocks_in_a_row=self.options.max_blocks_in_a_row,
            )
            tx.save(resolution.counts, resolution.outcome)
            tx.record_reading(observation.observed, failing_count)
            decision = self._decision(session_id, observation, ruling, resolution)
            decision = decision._replace(
                requirements=ledger,
                judge=judged,
                converted_from=decision.converted_from
                or (judged.converted_from if judged else None),
            )
            tx.append(decision.event(self._clock()))
        return decision if decision.confirm else self._deliver(decision, ruling, observation)

    def history(self, session_id: str) -> SessionHistory:
        """The session's failure streak and blocks in a row, as of its last decision."""
        _check_session(session_id)
        return self.store.history(session_id)

    def observe(
        self, session_id: str, facts: FactsInput = None, context: GateContext | None = None
    ) -> Observation:
        """Normalise the facts (asking the callbacks as needed) into what the ladder reads."""
        return self._observe(session_id, facts, context)[0]

    def _after_ladder(
        self,
        session_id: str,
        obs: Observation,
        ruling: Ruling,
        facts: CompletionFacts | None,
        context: GateContext | None,
    ) -> tuple[Ruling, Ledger, JudgeReport | None]:
        """The acceptance ledger, then the judge when one is configured.

        Without a judge a stop the ladder allowed with rows pending is vetoed
        (``requirements_pending``, soft). With one, the ledger rides into the judge's call: the
        skip rule reads it, and a judge's ``done`` cannot clear it.
        """
        contract = self.options.requirement_contract
        said, said_by = observe_output(contract, context.text if context else None)
        assessments = [*(facts.requirement_assessments or ()), *said] if facts else said
        evidence = [*(facts.requirement_evidence or ()), *said_by] if facts else said_by
        # The judge's module is imported only when a judge is configured or a row is pending.
        if self.options.judge is None:
            ledger = join(contract, assessments, evidence)
            if ruling.confirm and not ledger.clear:
                from donegate.gate.judge import pending_veto

                return pending_veto(ledger, source="requirements"), ledger, None
            return ruling, ledger, None
        from donegate.gate.judge import JudgeStage

        stage = JudgeStage(
            self.options.judge,
            self.store,
            session_id,
            context,
            (contract, list(assessments), list(evidence)),
            self._clock,
            ask=self._ask,
        )
        ruling = stage(obs, ruling)
        return ruling, stage.ledger, stage.report

    def _observe(
        self, session_id: str, facts: FactsInput, context: GateContext | None
    ) -> tuple[Observation, CompletionFacts | None]:
        options = self.options
        if facts is None and options.facts is not None:
            facts = options.facts(context or GateContext(session_id))
        if facts is None and options.verify_command is None:
            return Observation(False, WriteCounts(False), False, False, None), None
        parsed = CompletionFacts() if facts is None else parse_facts(facts)
        results = parsed.verify
        if results is None and options.verify_command is not None:
            results = parse_verify(options.verify_command(), "verify_command()")
        observation = Observation(
            facts_available=True,
            writes=count_writes(parsed, options.classify_write),
            requires_write=_requires_write(options, parsed),
            oracle_expected=options.verify_command is not None or parsed.verify is not None,
            reading=combine(results),
            streak=parsed.consecutive_failed_after_write,
            converging=parsed.verification_failures_converging,
            escalation_threshold=options.escalation_threshold,
        )
        return observation, parsed

    def _decision(
        self, session_id: str, obs: Observation, ruling: Ruling, res: Resolution
    ) -> Decision:
        trace = ruling.trace
        if res.converted_from is not None:
            trace += (Step("budget", res.reason, True),)
        target = self.options.escalation_target if ruling.escalate else None
        reading = obs.reading
        return Decision(
            session_id=session_id,
            confirm=res.confirm,
            reason=res.reason,
            # An allow's words are for the person; a veto's feedback is rendered on delivery.
            message=ruling.detail if ruling.confirm else None,
            strict=ruling.strict and not res.confirm,
            converted_from=res.converted_from,
            escalation_recommended=ruling.escalate,
            escalation_target=target,
            verification=Verification(
                obs.oracle_expected, reading.command if reading else None, obs.observed
            ),
            facts_available=obs.facts_available,
            outcome=res.outcome,
            counts=res.counts,
            source=ruling.source,
            trace=trace,
        )

    def _deliver(self, decision: Decision, ruling: Ruling, obs: Observation) -> Decision:
        """Render the veto's feedback, then let the host's decorator adjust it."""
        assert ruling.feedback_key is not None
        attempts = (
            obs.streak if obs.streak is not None else decision.counts.by_reason[ruling.reason]
        )
        template = feedback.template_for(ruling.feedback_key, self.options.feedback_templates)
        findings = ruling.detail or (obs.reading.findings if obs.reading else None)
        message = feedback.render(template, findings=findings, attempts=attempts)
        decision = decision._replace(message=message)
        decorate = self.options.feedback_decorator
        if decorate is None:
            return decision
        decorated = decorate(decision.reason, message, decision)
        if not isinstance(decorated, str):
            raise InvalidInput(
                f"returned {_check.type_name(decorated)}, expected a string", "feedback_decorator"
            )
        return decision._replace(message=decorated)


def _requires_write(options: GateOptions, facts: CompletionFacts) -> bool:
    """The option wins over the per-task fact, which wins over ``require_source_write``."""
    if options.requires_write is not None:
        return options.requires_write
    if facts.requires_write is not None:
        return facts.requires_write
    return options.require_source_write


def _check_session(session_id: object) -> None:
    if not isinstance(session_id, str) or not session_id.strip():
        raise InvalidInput(
            f"got {_check.type_name(session_id)} {session_id!r}, expected a non-blank session id",
            "session_id",
        )
