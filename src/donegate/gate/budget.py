"""The veto budget: how many vetoes a session may receive before a veto becomes an allow.

Two separate budgets, so a looping agent always ends, and ends attributably:

* soft vetoes (``no_source_write``) count against ``max_vetoes`` for the whole session; past it a
  soft veto converts to ``veto_budget_exhausted``. Strict vetoes never spend it (Harn's do).
* strict vetoes (a red or missing verifier) count against ``max_strict_vetoes`` since the
  session's last allow; past it a strict veto converts to ``strict_veto_cap_reached``. The soft
  budget never releases a strict veto.

Either conversion records the session's outcome as ``not_verified``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from donegate.gate.ladder import VETO_REASONS, Ruling

Outcome = Literal["verified", "not_verified"]
VERIFIED_REASONS = frozenset({"verified", "verified_after_write"})


def _zeros() -> Mapping[str, int]:
    return MappingProxyType(dict.fromkeys(sorted(VETO_REASONS), 0))


# Read-only, so that one shared default can never be changed through a session's counts.
ZERO_COUNTS: Mapping[str, int] = _zeros()


class VetoCounts(NamedTuple):
    """A session's delivered vetoes: by reason (zero-filled), by class, and strict since allow."""

    by_reason: Mapping[str, int] = ZERO_COUNTS
    soft: int = 0
    strict: int = 0
    strict_since_allow: int = 0

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "by_reason": dict(self.by_reason),
            "soft": self.soft,
            "strict": self.strict,
            "strict_since_allow": self.strict_since_allow,
        }


class Resolution(NamedTuple):
    """The ruling after the budget: what is delivered, and the session's counts afterwards."""

    confirm: bool
    reason: str
    converted_from: str | None
    counts: VetoCounts
    outcome: Outcome | None


def resolve(ruling: Ruling, before: VetoCounts, *, max_vetoes: int, max_strict: int) -> Resolution:
    """Apply the budgets to a ruling; a limit of 0 disables that budget."""
    if ruling.confirm:
        return _allow(ruling.reason, None, before)
    if ruling.strict:
        if 0 < max_strict <= before.strict_since_allow:
            return _allow("strict_veto_cap_reached", ruling.reason, before)
        return _charge(ruling.reason, before, strict=True)
    if 0 < max_vetoes <= before.soft:
        return _allow("veto_budget_exhausted", ruling.reason, before)
    return _charge(ruling.reason, before, strict=False)


def _allow(reason: str, converted_from: str | None, before: VetoCounts) -> Resolution:
    # Any allow ends the run of strict vetoes that the strict cap counts.
    counts = before._replace(strict_since_allow=0)
    outcome: Outcome = "verified" if reason in VERIFIED_REASONS else "not_verified"
    return Resolution(True, reason, converted_from, counts, outcome)


def _charge(reason: str, before: VetoCounts, *, strict: bool) -> Resolution:
    by_reason = dict(before.by_reason)
    by_reason[reason] = by_reason.get(reason, 0) + 1
    counts = VetoCounts(
        by_reason=MappingProxyType(by_reason),
        soft=before.soft + (not strict),
        strict=before.strict + strict,
        strict_since_allow=before.strict_since_allow + strict,
    )
    return Resolution(False, reason, None, counts, None)
