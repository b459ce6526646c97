"""What the gate decides, and what it is told about the stop it decides: records every stage
reads, apart from the gate that makes them (:mod:`.core`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from donegate.gate.budget import Outcome, VetoCounts
from donegate.gate.ladder import Observed, Step
from donegate.gate.requirements import EMPTY_LEDGER, Ledger
from donegate.record import Record
from donegate.timefmt import rfc3339

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from donegate.gate.judge_answer import JudgeReport


class GateContext(Record):
    """What the ``facts`` callback (and the judge) is given about the stop it is asked about.

    ``task`` is the user's prompt; ``text`` the agent's final message (the gate observes the
    ``assistant_output`` requirements in it); ``diff`` the diff of the session's writes, as text;
    ``stop_reason`` is ``"sentinel"`` when the stop is the agent's sealed final answer;
    ``pending_effects`` counts tool effects deferred past the turn (background tasks).
    """

    session_id: str
    task: str | None = None
    stop_reason: str | None = None
    text: str | None = None
    messages: Sequence[Any] = ()
    diff: str | None = None
    pending_effects: int = 0


class Verification(Record):
    """The verifier reading behind a decision; ``not_run`` never reads as a pass."""

    oracle_expected: bool
    command: str | None
    observed: Observed

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "oracle_expected": self.oracle_expected,
            "command": self.command,
            "observed": self.observed,
        }


class Decision(Record):
    """One gate decision: allow (``confirm``) or veto, why, and what the agent is told.

    ``message`` is the feedback on a veto; on an allow, what the person is told, if anything
    (what the environment lacks, for ``verifier_unavailable``). ``converted_from`` names the veto a
    budget turned into this allow. ``counts`` are the session's veto counts after this decision;
    ``outcome`` is set on an allow (``verified`` only for a green verifier). ``trace`` lists the
    rules tried, in order, and which one fired.
    """

    session_id: str
    confirm: bool
    reason: str
    message: str | None
    strict: bool
    converted_from: str | None
    escalation_recommended: bool
    escalation_target: str | None
    verification: Verification
    facts_available: bool
    outcome: Outcome | None
    counts: VetoCounts
    source: str
    trace: tuple[Step, ...]
    requirements: Ledger = EMPTY_LEDGER
    judge: JudgeReport | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The decision object of ``donegate gate decide --json``."""
        data = self._core()
        data["message"] = self.message
        data["counts"] = self.counts.to_json_dict()
        data["trace"] = [{"rule": s.rule, "reason": s.reason, "fired": s.fired} for s in self.trace]
        return data

    def event(self, at: datetime) -> dict[str, Any]:
        """The ``judge_decision`` event recorded for this decision."""
        # The trigger names whichever adjudicator answered, not the boundary that asked.
        trigger = self.judge.seam if self.source == "judge" and self.judge else "verify_completion"
        head = {"type": "judge_decision", "trigger": trigger, "source": self.source}
        return {**head, "at": rfc3339(at), **self._core()}

    def _core(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "session_id": self.session_id,
            "confirm": self.confirm,
            "reason": self.reason,
            "strict": self.strict,
            "converted_from": self.converted_from,
            "escalation_recommended": self.escalation_recommended,
        }
        if self.escalation_target is not None:
            data["escalation_target"] = self.escalation_target
        data["verification"] = self.verification.to_json_dict()
        data["facts_available"] = self.facts_available
        data["outcome"] = self.outcome
        data["requirements"] = self.requirements.to_json_dict()
        data["judge"] = self.judge.to_json_dict() if self.judge else None
        return data
