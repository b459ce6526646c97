"""The deterministic ladder: from write and verifier facts to allow or veto, first match wins.

It never keys on anything the agent said. It is a pure function of an :class:`Observation`; the
budget (which may convert a veto into an allow) is applied after it, in :mod:`.budget`.
"""

from __future__ import annotations

from donegate.gate.facts import Reading, WriteCounts
from donegate.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    Observed = Literal["passed", "failed", "not_run"]
else:
    Observed = str  # a Literal for the type checker; its values are str at run time

SOFT_REASONS = frozenset({"no_source_write"})
STRICT_REASONS = frozenset(
    {
        "verification_after_write_red",
        "failed_verification",
        "repeated_verification_failures",
        "missing_verification",
    }
)
VETO_REASONS = SOFT_REASONS | STRICT_REASONS


class Observation(Record):
    """Everything the ladder reads, already normalised from the facts and options."""

    facts_available: bool
    writes: WriteCounts
    requires_write: bool
    oracle_expected: bool
    reading: Reading | None
    streak: int | None = None
    converging: bool = False
    escalation_threshold: int = 3

    @property
    def saw_source(self) -> bool:
        return self.writes.known and self.writes.source > 0

    @property
    def observed(self) -> Observed:
        """``not_run`` covers "no oracle" and "no facts": it never reads as a pass."""
        if self.reading is None:
            return "not_run"
        return "passed" if self.reading.ok else "failed"


class Step(Record):
    """One rung of the ladder as evaluated: its number, its reason, whether it fired."""

    rule: str
    reason: str
    fired: bool


class Ruling(Record):
    """A stage's decision before the budget: allow or veto, and why."""

    confirm: bool
    reason: str
    strict: bool = False
    feedback_key: str | None = None
    escalate: bool = False
    source: str = "deterministic"
    trace: tuple[Step, ...] = ()
    # Text for the feedback's {findings} when the stage has its own (a judge's detail); on an
    # allow, what the person is told (what the environment lacks).
    detail: str | None = None


class _Trace:
    """Records each rung as it is tried, so the ruling says which rule fired and which did not."""

    def __init__(self) -> None:
        self.steps: list[Step] = []

    def tried(self, rule: str, reason: str, condition: bool) -> bool:
        self.steps.append(Step(rule, reason, condition))
        return condition

    def allow(self, reason: str, detail: str | None = None) -> Ruling:
        return Ruling(confirm=True, reason=reason, trace=tuple(self.steps), detail=detail)

    def veto(
        self, reason: str, key: str | None = None, *, strict: bool, escalate: bool = False
    ) -> Ruling:
        """A veto; its feedback key is the reason unless given."""
        return Ruling(False, reason, strict, key or reason, escalate, trace=tuple(self.steps))


def decide(obs: Observation) -> Ruling:
    """Apply the ladder, first match wins.

    0. no facts and no verifier                           -> allow  facts_unavailable
    1. writes known, a source write required, none made   -> veto   no_source_write (soft)
    2u. red reading after a source write (or writes unknown), every red result for want of
       something in the environment                       -> allow  verifier_unavailable
    2. red reading after a source write (or writes unknown) -> veto (strict)
       verification_after_write_red; with a streak fact: failed_verification, or
       repeated_verification_failures (+ escalation) at/over the threshold unless converging
    3. green reading                                      -> allow  verified_after_write / verified
    4. source written, oracle expected, no reading        -> veto   missing_verification (strict)
    5a. writes known, no source write, none required      -> allow  no_workspace_write
    5b. source written, no oracle                         -> allow  wrote_source_no_oracle
    6. otherwise                                          -> allow  gate_abstain
    """
    t = _Trace()
    red = obs.reading is not None and not obs.reading.ok
    if t.tried("0", "facts_unavailable", not obs.facts_available):
        return t.allow("facts_unavailable")
    if t.tried(
        "1", "no_source_write", obs.writes.known and obs.requires_write and not obs.saw_source
    ):
        return t.veto("no_source_write", _no_write_key(obs.writes), strict=False)
    after_write = obs.saw_source or not obs.writes.known
    unavailable = obs.reading.unavailable if red and obs.reading else None
    # The agent cannot install what the environment lacks: sending it back changes nothing.
    if t.tried("2u", "verifier_unavailable", after_write and unavailable is not None):
        return t.allow("verifier_unavailable", detail=unavailable)
    if t.tried("2", "verification_red", red and after_write):
        return _red(t, obs)
    if t.tried("3", "verified", obs.reading is not None and obs.reading.ok):
        return t.allow("verified_after_write" if obs.saw_source else "verified")
    if t.tried("4", "missing_verification", obs.saw_source and obs.oracle_expected):
        return t.veto("missing_verification", strict=True)
    if t.tried("5a", "no_workspace_write", obs.writes.known and not obs.saw_source):
        return t.allow("no_workspace_write")
    if t.tried("5b", "wrote_source_no_oracle", obs.saw_source):
        return t.allow("wrote_source_no_oracle")
    t.tried("6", "gate_abstain", True)
    return t.allow("gate_abstain")


def _red(t: _Trace, obs: Observation) -> Ruling:
    """Rule 2's reason: streak-aware when the host reports a failed-after-write streak."""
    if obs.streak is None:
        return t.veto("verification_after_write_red", strict=True)
    if obs.streak >= obs.escalation_threshold and not obs.converging:
        return t.veto("repeated_verification_failures", strict=True, escalate=True)
    return t.veto("failed_verification", strict=True)


def _no_write_key(writes: WriteCounts) -> str:
    """Which "no source write" feedback fits: tests/docs only, cosmetics only, or nothing."""
    if writes.other:
        return "no_source_write_other"
    if writes.cosmetic:
        return "no_source_write_cosmetic"
    return "no_source_write_absent"
