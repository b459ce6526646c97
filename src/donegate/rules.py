"""The six rules of Completion Claim v0.1, as one ladder over plain values.

Only this module decides a verdict. It reads a claim through the small views below, which both the
validated models (:mod:`donegate.claim`) and the batch reader's structs (:mod:`donegate.bulk`)
satisfy, and answers with a :class:`Ruling` of plain values: one set of rules for every way a claim
arrives, and no model built for a verdict nobody asked to keep. It imports nothing heavier than the
standard library, so a batch of claims starts without pydantic.

Nothing the agent wrote into the document (its own verdict, its own "independent" label when the
caller names the verifiers it trusts, its own policy when the caller passes one) can make a claim
pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal, Protocol

from donegate.duration import exact, exceeds, on_grid, seconds_text, units_text
from donegate.expectation import Comparison, compare
from donegate.instant import MAX_FRACTION_DIGITS, Instant, Seconds, decimal_digits, is_finite
from donegate.record import Record

if TYPE_CHECKING:
    from donegate.policy import AppliedPolicy

State = Literal["verified", "unverified", "refuted"]
Outcome = Literal["match", "contradicts", "no_observation"]

DEFAULT_MAX_SKEW_S = 5.0
MAX_SKEW_LIMIT_S = 10**9
"""The largest clock skew accepted (about 31 years): past it, a bound says nothing."""


class MutationView(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def at(self) -> Instant: ...


class VerifierView(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> str: ...


class EvidenceView(Protocol):
    @property
    def check_type(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def expected(self) -> Mapping[str, Any]: ...
    @property
    def observed_value(self) -> Any: ...
    @property
    def at(self) -> Instant: ...
    @property
    def covers(self) -> Sequence[str]: ...
    @property
    def verifier(self) -> VerifierView: ...


class ClaimView(Protocol):
    @property
    def mutations(self) -> Sequence[MutationView]: ...
    @property
    def evidence(self) -> Sequence[EvidenceView]: ...


class PolicyView(Protocol):
    """What the rules read of the applied policy."""

    @property
    def requires(self) -> Sequence[str]: ...
    @property
    def max_age_s(self) -> Seconds | None: ...


@dataclass(frozen=True, slots=True)
class VerifyOptions:
    """How the caller wants a claim verified.

    ``policy`` replaces the document's own when given; ``trust`` (when not None) is the set of
    verifier ids whose ``independent`` label is believed; ``now`` is the decision time.
    ``required`` names evidence items (by index) that must each count and match, whatever else
    does: a collector's configured checks, so that a partial pass is never a pass. Each one that
    does not is listed in ``unmet`` as ``check:<name>``. ``causes`` holds, for items the caller
    collected itself, what it knows of them in words (why one did not happen, which tests a run
    failed): the reasons say it. Words only: no cause moves a verdict.
    """

    policy: AppliedPolicy | None = None
    now: Instant | None = None
    trust: frozenset[str] | None = None
    max_skew_s: Seconds = DEFAULT_MAX_SKEW_S
    required: Mapping[int, str] = field(default_factory=dict)
    causes: Mapping[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # NaN compares false with everything, so a NaN bound would let any date through.
        skew = self.max_skew_s
        if isinstance(skew, bool) or not isinstance(skew, int | float | Fraction | Decimal):
            raise ValueError(f"max_skew_s: expected a number of seconds, got {skew!r}")
        if not is_finite(skew):
            raise ValueError(f"max_skew_s: expected a finite number of seconds, got {skew}")
        if not 0 <= skew <= MAX_SKEW_LIMIT_S:
            raise ValueError(f"max_skew_s: expected 0 to {MAX_SKEW_LIMIT_S} seconds, got {skew}")


class Finding(Record):
    """Why one evidence item did or did not move the verdict: ``index``, ``check_type``,
    ``counts``, ``outcome`` (None when it does not count) and ``why``, in words; with the item
    and its comparison (None when it does not count), which the reasons read."""

    index: int  # type: ignore[assignment]  # the field hides tuple.index, as the models' name it
    check_type: str
    counts: bool
    outcome: Outcome | None
    why: str
    item: EvidenceView
    comparison: Comparison | None


class Ruling(Record):
    """A verdict as plain values; :mod:`donegate.verdict` makes it the wire model."""

    state: State
    unmet: list[str]
    reason: str | None
    decided_at: Instant
    findings: list[Finding]


def rule(claim: ClaimView, applied: PolicyView, options: VerifyOptions) -> Ruling:
    """Apply the spec's rules, in order, under the ``applied`` policy.

    1. Rules 1, 2, 5 and the skew bound: an item counts only if it is independent (and trusted),
       strictly later than every mutation it covers, fresh, and not dated in the future.
    2. Compare every counting item: match, contradicts, or no observation.
    3. Rule 6: a counting item that contradicts its expectation refutes the claim.
    4. Rules 3 and 4, and the policy: verified only with at least one counting match, every
       mutation covered by one, every required check type matched by one, and every evidence
       item the caller requires (``options.required``) a counting match itself.
    5. Otherwise unverified: absence is never success.
    """
    now = options.now or Instant.now()
    mutations = claim.mutations
    # Rule 2 holds at once for an item dated after every mutation, whatever it covers: most items
    # then need one comparison, and only the others look at what they cover.
    latest = max(map(_WRITTEN_KEY, mutations)) if mutations else None
    window = _Window.at(now, applied.max_age_s, options.max_skew_s)
    trust = options.trust
    causes = options.causes
    readings: list[Finding] = []
    matched: list[int] = []
    matched_types: set[str] = set()
    covered: set[str] = set()
    contradiction: Finding | None = None
    for index, item in enumerate(claim.evidence):  # one pass: this runs for every claim
        check_type = item.check_type
        why_not = _why_not_counted(mutations, latest, item, now, window, trust)
        if why_not is not None:
            if why_not is _ABSENT and index in causes:
                why_not = f"the check did not happen: {causes[index]}"
            readings.append(Finding(index, check_type, False, None, why_not, item, None))
            continue
        comparison = compare(check_type, item.expected, item.observed_value)
        outcome = comparison.outcome
        if outcome == "match":
            readings.append(Finding(index, check_type, True, outcome, _MATCHES, item, comparison))
            matched.append(index)
            matched_types.add(check_type)
            covered.update(item.covers)
            continue
        reading = Finding(
            index, check_type, True, outcome, _why(item, comparison), item, comparison
        )
        readings.append(reading)
        if outcome == "contradicts" and contradiction is None:
            contradiction = reading
    unmet = _unmet(claim, applied, matched_types, covered, matched, options.required)
    state: State
    if contradiction is not None:
        state, reason = "refuted", _refuted_reason(contradiction, causes.get(contradiction.index))
    elif matched and not unmet:
        state, reason = "verified", None
    else:
        state, reason = "unverified", _unverified_reason(claim, readings, unmet, options.required)
    return Ruling(state, unmet, reason, now, readings)


class _Window:
    """The instants evidence may carry at one decision time: not older than ``max_age`` (when the
    policy sets one), not later than the clock's skew allows.

    Each bound is held exactly (a float as the decimal it writes: :func:`donegate.duration.exact`)
    and as an instant key, worked out once, so each item costs two comparisons of keys:
    ``now - at > max_age`` exactly when ``at`` orders before ``now - max_age``. An item the keys
    put outside is decided again in integers by the comparison its message prints
    (:func:`_stale`, :func:`_ahead`), so the verdict and the words come from one comparison.
    """

    __slots__ = ("max_age", "max_age_text", "newest", "oldest", "skew", "skew_text")

    def __init__(self, now: Instant, max_age: Seconds | None, skew: Seconds) -> None:
        # As messages print them, written once: a stale batch would write them for every item.
        self.max_age = None if max_age is None else on_grid(exact(max_age))
        self.max_age_text = None if max_age is None else seconds_text(exact(max_age))
        self.skew = on_grid(exact(skew))
        self.skew_text = seconds_text(exact(skew))
        self.oldest = None if self.max_age is None else _shifted(now.key, self.max_age, -1)
        self.newest = _shifted(now.key, self.skew, 1)

    @classmethod
    def at(cls, now: Instant, max_age: Seconds | None, skew: Seconds) -> _Window:
        # A batch decides at one time under a few bounds: each window is worked out once.
        key = (now.key, type(max_age), max_age, type(skew), skew)
        window = _windows.get(key)
        if window is None:
            if len(_windows) >= 256:
                _windows.clear()
            window = _windows[key] = cls(now, max_age, skew)
        return window


_windows: dict[tuple[object, ...], _Window] = {}


def _shifted(key: tuple[int, str], seconds: Seconds, sign: int) -> tuple[int, str]:
    """The key of the instant ``sign * seconds`` after the one whose key is ``key``, exactly.

    A bound with no finite decimal expansion (a caller's ``Fraction(1, 3)``) is put on a grid
    ten times finer than any instant's digits, rounded towards the instant it was shifted from:
    no instant lies between the bound and that grid point, so every comparison stays exact.
    """
    whole, digits = key
    if isinstance(seconds, int) and not digits:
        return whole + sign * seconds, ""
    exact = whole + Fraction(int(digits or "0"), 10 ** len(digits)) + sign * Fraction(seconds)
    floor = exact.numerator // exact.denominator
    try:
        return floor, decimal_digits(exact - floor)
    except ValueError:
        places = MAX_FRACTION_DIGITS + 1
        rest = exact - floor
        scaled = rest.numerator * 10**places
        tick = scaled // rest.denominator if sign > 0 else -(-scaled // rest.denominator)
        if tick == 10**places:
            return floor + 1, ""
        return floor, f"{tick:0{places}d}".rstrip("0")


def _why_not_counted(
    mutations: Sequence[MutationView],
    latest: tuple[int, str] | None,
    item: EvidenceView,
    now: Instant,
    window: _Window,
    trust: frozenset[str] | None,
) -> str | None:
    """None when the item counts, else the first reason it does not."""
    verifier = item.verifier
    kind = verifier.kind
    if kind == "self_attested":
        return "self-attested evidence never satisfies a requirement (rule 1)"
    if kind == "absent":
        return _ABSENT
    if trust is not None and verifier.id not in trust:
        return f"verifier {verifier.id!r} is not one the caller trusts (--trust)"
    at = item.at
    at_key = at.key  # instants order as their keys (see Instant)
    if item.covers and (latest is None or not at_key > latest):
        before = _written_after(mutations, item)
        if before is not None:
            return before
    # Exact: an instant 300.0000009 s old is older than 300 s, and 0.3 s old is not older than
    # a max_age_s of 0.3, so no rounding ever makes evidence look fresh or stale.
    oldest = window.oldest
    if oldest is not None and at_key < oldest:
        stale = _stale(now, at, window)
        if stale is not None:
            return stale
    if at_key > window.newest:
        return _ahead(now, at, window)
    return None


def _stale(now: Instant, at: Instant, window: _Window) -> str | None:
    """Rule 5's message for an item older than the policy's bound, else None; the age and the
    bound it prints are the very values compared."""
    units, places = now.units_since(at)
    assert window.max_age is not None
    if not exceeds(units, places, window.max_age):
        return None
    return (
        f"stale: {units_text(units, places)} s old at decision time, "
        f"policy max_age_s is {window.max_age_text} (rule 5)"
    )


def _ahead(now: Instant, at: Instant, window: _Window) -> str | None:
    """The skew bound's message for an item dated too far after the decision time, else None."""
    units, places = at.units_since(now)
    if not exceeds(units, places, window.skew):
        return None
    return (
        f"dated {units_text(units, places)} s after the decision time, "
        f"beyond the allowed clock skew of {window.skew_text} s"
    )


_WRITTEN_KEY = attrgetter("at.key")  # read in C, with no Python frame per mutation
_ID = attrgetter("id")


def _written_after(mutations: Sequence[MutationView], item: EvidenceView) -> str | None:
    """Rule 2 for each mutation ``item`` covers, in order: the first written at or after it."""
    written_at = {m.id: m.at for m in mutations}
    at = item.at
    for mutation_id in item.covers:
        mutation_at = written_at[mutation_id]
        if not at.key > mutation_at.key:
            return (
                f"collected at {at}, not after mutation {mutation_id} at {mutation_at} "
                "(rule 2: a check before the write proves nothing about it)"
            )
    return None


def _unmet(
    claim: ClaimView,
    applied: PolicyView,
    matched_types: set[str],
    covered: set[str],
    matched: list[int],
    required: Mapping[int, str],
) -> list[str]:
    requires = applied.requires
    if len(requires) > 1:
        requires = _unique(requires)
    unmet = [t for t in requires if t not in matched_types]
    mutations = claim.mutations
    if not covered.issuperset(map(_ID, mutations)):  # in C: most claims cover every mutation
        unmet += [f"mutation:{m.id}" for m in mutations if m.id not in covered]
    if required:
        counted = set(matched)
        unmet += [f"check:{name}" for i, name in sorted(required.items()) if i not in counted]
    return unmet


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _refuted_reason(reading: Finding, cause: str | None) -> str:
    item, comparison = reading.item, reading.comparison
    assert comparison is not None
    key = comparison.contradicted[0]
    observed = item.observed_value if isinstance(item.observed_value, dict) else {}
    # What the collector saw (the tests that failed) says more than the exit status alone.
    seen = f"; {cause}" if cause else ""
    return (
        f"evidence[{reading.index}] ({item.check_type} {item.target}) contradicts the claim: "
        f"{key} expected {_show(item.expected[key])}, observed {_show(observed.get(key))}{seen}."
    )


def _unverified_reason(
    claim: ClaimView,
    readings: Sequence[Finding],
    unmet: Sequence[str],
    required: Mapping[int, str],
) -> str:
    if not readings:
        return "No evidence was submitted; a claim without evidence is unproven (rule 4)."
    if not any(r.counts for r in readings):
        first = readings[0]
        return (
            f"No evidence counts: evidence[0] ({first.item.check_type}) "
            f"does not count: {first.why}."
        )
    # A required check that failed says most about why: its own reason comes first.
    if required:
        matched = {r.index for r in readings if r.outcome == "match"}
        for index, name in sorted(required.items()):
            if index not in matched and index < len(readings):
                why = readings[index].why
                return f"Configured check {name} did not confirm the claim ({why})."
    for entry in unmet:
        if entry.startswith("mutation:"):
            mutation_id = entry.removeprefix("mutation:")
            mutation = next(m for m in claim.mutations if m.id == mutation_id)
            return (
                f"Mutation {mutation.id} ({mutation.kind} {mutation.target}) is not covered by "
                "fresh, independent, matching evidence (rule 3)."
            )
        return f"The policy requires {entry}, and no fresh, independent evidence of it matches."
    return (
        "No counting evidence matched its expectation; nothing was observed to confirm the claim."
    )


_MATCHES = "counts and matches its expectation"
_ABSENT = "the check did not happen (verifier kind absent)"


def _why(item: EvidenceView, comparison: Comparison) -> str:
    """Why a counting item did not match, in words."""
    if comparison.outcome == "contradicts":
        return f"counts and contradicts its expectation on {', '.join(comparison.contradicted)}"
    if not item.expected:
        return "counts, but expects nothing, so it observes nothing"
    if not isinstance(item.observed_value, dict):
        return "counts, but holds no observed_value object: no observation"
    return f"counts, but observed_value lacks {', '.join(comparison.missing)}: no observation"


def _show(value: object) -> str:
    kind = type(value)
    if kind is int:  # most observed values; json.dumps takes its slow path for anything not str
        return int.__repr__(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    return json.dumps(value)
