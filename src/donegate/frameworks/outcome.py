"""What a framework gate says at an agent's end: the outcome of one check, and strict mode's error.

A run that is not verified is data (:class:`Outcome`), as every negative verdict in donegate is.
Only a gate built with ``strict=True`` turns a run let go unverified into :class:`NotVerified`,
for an application that would rather stop than carry on past it.
"""

from __future__ import annotations

from donegate.errors import DonegateError
from donegate.record import Record


class Outcome(Record):
    """One check of a run's end.

    ``allowed``: the run may end now. False means the agent is sent back, and ``message`` is what
    it is told (what is missing, what contradicted the claim). ``verified`` holds only when the
    configured checks confirmed every change the run made; a run may be allowed and not verified
    (the budget is spent, the team records only, donegate could not decide), and ``notice`` then
    says so, for the person. ``verdict`` is the claim's (``verified``, ``unverified``,
    ``refuted``), or ``none`` when the run changed nothing and no claim was checked. ``reason``
    is the gate's (``verified_after_write``, ``verification_after_write_red``,
    ``strict_veto_cap_reached``, ...), ``converted_from`` the veto a budget turned into this
    allow. ``receipt_id`` names the receipt in the ledger (``donegate report`` shows it).
    """

    allowed: bool
    verified: bool
    verdict: str
    reason: str
    message: str | None
    notice: str | None
    receipt_id: int | None
    session_id: str
    attempt: int
    converted_from: str | None = None

    @property
    def sent_back(self) -> bool:
        """The agent must try again."""
        return not self.allowed


class NotVerified(DonegateError):
    """A strict gate let a run end without verifying it; ``outcome`` says why."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome
        said = outcome.notice or outcome.reason
        super().__init__(f"run {outcome.session_id} is not verified: {said}")
