"""The veto budget: how many vetoes a session may receive before a veto becomes an allow.

Two separate budgets, so a looping agent always ends, and ends attributably:

* soft vetoes (``no_source_write``) count against ``max_vetoes`` for the whole session; past it a
  soft veto converts to ``veto_budget_exhausted``. Strict vetoes never spend it (Harn's do).
* strict vetoes (a red or missing verifier) count against ``max_strict_vetoes`` since the
  session's last allow; past it a strict veto converts to ``strict_veto_cap_reached``. The soft
  budget never releases a strict veto.
* any vetoes in a row count against ``max_blocks_in_a_row``: the two budgets above are separate,
  so together they could block past a host's own loop cap (Claude Code ends a turn after about
  8 blocks), which would end the session silently. The veto that reaches it converts to
  ``blocks_in_a_row_cap_reached``, so the end is on the record.

* a judge's veto (source ``judge``) spends neither: the judge's own ``max_invocations`` is its
  budget, and past it the session ends ``completion_unverified``. Blocks in a row still count it.

Every conversion records the session's outcome as ``not_verified``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from donegate.gate.ladder import VETO_REASONS, Ruling
from donegate.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    Outcome = Literal["verified", "not_verified"]
else:
    Outcome = str  # a Literal for the type checker; its values are str at run time
# A judge cap reached over a passing verifier and a clear ledger ends verified (stop_verified).
VERIFIED_REASONS = frozenset(
    {"verified", "verified_after_write", "judge_cap_reached_over_verified_pass"}
)


def _zeros() -> Mapping[str, int]:
    return MappingProxyType(dict.fromkeys(sorted(VETO_REASONS), 0))


# Read-only, so that one shared default can never be changed through a session's counts.
ZERO_COUNTS: Mapping[str, int] = _zeros()


class VetoCounts(Record):
    """A session's delivered vetoes: by reason (zero-filled), by class, strict since the last
    allow, and vetoes of any class since the last allow (``blocks_in_a_row``)."""

    by_reason: Mapping[str, int] = ZERO_COUNTS
    soft: int = 0
    strict: int = 0
    strict_since_allow: int = 0
    blocks_in_a_row: int = 0

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "by_reason": dict(self.by_reason),
            "soft": self.soft,
            "strict": self.strict,
            "strict_since_allow": self.strict_since_allow,
            "blocks_in_a_row": self.blocks_in_a_row,
        }


class Resolution(Record):
    """The ruling after the budget: what is delivered, and the session's counts afterwards."""

    confirm: bool
    reason: str
    converted_from: str | None
    counts: VetoCounts
    outcome: Outcome | None


def resolve(
    ruling: Ruling,
    before: VetoCounts,
    *,
    max_vetoes: int,
    max_strict: int,
    max_blocks_in_a_row: int = 0,
) -> Resolution:
    """Apply the budgets to a ruling; a limit of 0 disables that budget.

    1. an allow stays an allow.
    2. a strict veto past ``max_strict`` strict vetoes since the last allow converts.
    3. a soft veto past ``max_vetoes`` soft vetoes in the session converts.
    4. a veto that would be the ``max_blocks_in_a_row``-th in a row converts.
    5. otherwise the veto is delivered and counted.
    """
    if ruling.confirm:
        return _allow(ruling.reason, None, before)
    if ruling.strict and 0 < max_strict <= before.strict_since_allow:
        return _allow("strict_veto_cap_reached", ruling.reason, before)
    judged = ruling.source == "judge"
    if not ruling.strict and not judged and 0 < max_vetoes <= before.soft:
        return _allow("veto_budget_exhausted", ruling.reason, before)
    if 0 < max_blocks_in_a_row <= before.blocks_in_a_row + 1:
        return _allow("blocks_in_a_row_cap_reached", ruling.reason, before)
    return _charge(
        ruling.reason, before, strict=ruling.strict, soft=not ruling.strict and not judged
    )


def _allow(reason: str, converted_from: str | None, before: VetoCounts) -> Resolution:
    # Any allow ends the runs of vetoes that the strict cap and the in-a-row cap count.
    counts = before._replace(strict_since_allow=0, blocks_in_a_row=0)
    outcome: Outcome = "verified" if reason in VERIFIED_REASONS else "not_verified"
    return Resolution(True, reason, converted_from, counts, outcome)


def _charge(reason: str, before: VetoCounts, *, strict: bool, soft: bool) -> Resolution:
    by_reason = dict(before.by_reason)
    by_reason[reason] = by_reason.get(reason, 0) + 1
    counts = VetoCounts(
        by_reason=MappingProxyType(by_reason),
        soft=before.soft + soft,
        strict=before.strict + strict,
        strict_since_allow=before.strict_since_allow + strict,
        blocks_in_a_row=before.blocks_in_a_row + 1,
    )
    return Resolution(False, reason, None, counts, None)
