"""Claims read by a typed decoder (msgspec), only ever as the one loader would read them.

:func:`read` takes a line of JSON text to small structs, or to None when the line is anything but
a claim the loader (:func:`donegate.claim.parse_claim`, pydantic) takes exactly as it is: a field
the format does not name (the loader keeps it), a dangling reference, a bad instant, a value
nested more than :data:`VALUE_DEPTH` deep on a line with :data:`MOST_BRACKETS` brackets or more
(it may nest deeper than the loader's parser goes), an integer longer than Python converts,
anything unexpected. The caller then asks the loader, which decides and names the path of what is
wrong. So the reader never accepts what the loader refuses, and never has error messages of its
own.

The structs remember which optional fields were given (an unset one is ``UNSET``, an absent list
an :class:`Absent` one), so :func:`donegate.claim.as_model` can make the loader's models of them,
fields set and all; the rules read the structs as they read those models. This module knows
nothing of those models: the loader imports it, never the other way.
"""

from __future__ import annotations

import re
from decimal import Decimal
from operator import attrgetter
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from donegate.duration import in_float_range
from donegate.instant import Instant, instant_key

NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
Seconds = Annotated[int, msgspec.Meta(ge=0)] | Annotated[float, msgspec.Meta(ge=0)]

VALUE_DEPTH = 4
"""How deeply a value the format leaves open (``expected``, ``observed_value``, the agent's own
``verdict``) nests in a claim read at once: the types of the first decoder bound it, so such a
line is taken without measuring its text (a value the decoder drops, the first of two equal
keys, was read to these types too)."""
MOST_BRACKETS = 190
"""A line whose values nest deeper is read again with values of any depth if it has fewer
opening brackets than this (``[`` and ``{``, in strings too), else it goes to the loader: the
loader's parser stops between 196 and 201 levels deep, and a line can only nest as deep as it has
brackets. Counting them costs two scans in C (a twentieth of a line's time, spent only on these
lines); measuring the depth would cost a Python walk, which a dropped value would escape."""
LONGEST_INTEGER = 4300
"""The loader refuses a number with more integer digits than this (Python's own limit)."""
# A digit run starting at a run's first digit, so each run is scanned once, however long.
_TOO_MANY_DIGITS = re.compile(rb"(?<![0-9])[0-9]{%d}" % (LONGEST_INTEGER + 1))


class Absent(list[Any]):
    """The empty list a claim has when it names no such list (the loader does not set it)."""


def _nested(levels: int) -> object:
    """The JSON values nested at most ``levels`` deep, as a type msgspec checks in C.

    Each level doubles the decoder's type tree (4 levels build in about 2 ms)."""
    scalar = str | int | float | bool | None
    value: object = scalar
    for _ in range(levels):
        value = scalar | list[value] | dict[str, value]  # type: ignore[valid-type]
    return value


if TYPE_CHECKING:  # the rules read a decoded value as any JSON, and an instant's text as Instant
    Value = Any
    Text = Any
    Bound = int | Decimal  # read() makes a float the decimal the line writes
else:
    Value = _nested(VALUE_DEPTH)
    Text = str
    Bound = Seconds  # decoded as a number only: a Decimal would also take a string


class _Struct(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """Unknown fields are refused here: the loader keeps them, so such a line goes to it.

    Decoded JSON holds no reference cycles, so the collector need not track these structs.
    """


class _Task(_Struct):
    id: NonEmpty
    description: str | msgspec.UnsetType | None = msgspec.UNSET
    requested_by: str | msgspec.UnsetType | None = msgspec.UNSET


class _Mutation(_Struct):
    id: NonEmpty
    kind: str
    target: str
    at: Text  # made an Instant by read() (or the line goes to the loader)


class _Verifier(_Struct):
    id: str
    kind: Literal["independent", "self_attested", "absent"]


class EvidenceStruct(_Struct, kw_only=True):  # the model's field order, an optional one inside
    check_type: NonEmpty
    target: str
    expected: dict[str, Value]
    observed_value: Value | msgspec.UnsetType = msgspec.UNSET  # not a dict: observes nothing
    at: Text  # as a mutation's
    covers: list[str]
    verifier: _Verifier


class PolicyStruct(_Struct):
    id: str | msgspec.UnsetType | None = msgspec.UNSET
    requires: list[str] | msgspec.UnsetType = msgspec.UNSET
    max_age_s: Bound | msgspec.UnsetType | None = msgspec.UNSET
    on_unverified: Literal["block", "warn", "record"] | msgspec.UnsetType = msgspec.UNSET


class ClaimStruct(_Struct):
    spec_version: Literal["0.1"]
    task: _Task
    claimed_outcome: str
    mutations: list[_Mutation] = msgspec.field(default_factory=Absent)
    evidence: list[EvidenceStruct] = msgspec.field(default_factory=Absent)
    policy: PolicyStruct | msgspec.UnsetType | None = msgspec.UNSET
    # Only the verifier computes a verdict, so this one is never read; it is decoded all the same,
    # as the loader reads it (raw, its text would go unchecked: invalid UTF-8 slips through).
    verdict: Value | msgspec.UnsetType = msgspec.UNSET


class _DeepEvidence(EvidenceStruct, kw_only=True):
    expected: dict[str, Any]
    observed_value: Any | msgspec.UnsetType = msgspec.UNSET


class _DeepClaim(ClaimStruct):
    """A claim whose values may nest to any depth (the line's brackets bound it)."""

    evidence: list[_DeepEvidence] = msgspec.field(default_factory=Absent)  # type: ignore[assignment]
    verdict: Any | msgspec.UnsetType = msgspec.UNSET


# Instants met lately, by their text: a claim's writes repeat its session's neighbours' times.
# Few are kept: each kept instant is walked by every pass of the collector, and 65,536 of them
# cost more than they saved (a claim with eight instants never met before: 50 us, against 42 us
# with 1,024 kept).
_INSTANTS_KEPT = 1024
_instants: dict[str, Instant] = {}
_DECODER = msgspec.json.Decoder(ClaimStruct)
_DEEP_DECODER = msgspec.json.Decoder(_DeepClaim)


def read(line: bytes) -> ClaimStruct | None:
    """The claim on ``line`` if the fast reader takes it as the loader would, else None."""
    try:
        claim: ClaimStruct = _DECODER.decode(line)
    except Exception:  # whatever the reader does not take, the loader decides and explains
        if line.count(b"[") + line.count(b"{") >= MOST_BRACKETS:
            return None  # perhaps nested too deeply for the loader, which alone can tell
        try:
            claim = _DEEP_DECODER.decode(line)
        except Exception:
            return None
    if not _settled(claim):
        return None
    if len(line) > LONGEST_INTEGER and _TOO_MANY_DIGITS.search(line):
        return None  # perhaps only digits in a string, but the loader alone can tell
    policy = claim.policy
    if type(policy) is PolicyStruct and type(policy.max_age_s) is float:
        return claim if _exact_bound(policy, line) else None
    return claim


def _exact_bound(policy: PolicyStruct, line: bytes) -> bool:
    """``policy.max_age_s`` made the decimal ``line`` writes; False when that is not a bound
    (below zero however little, or past a float's range): the loader then says why."""
    bound = exact_max_age(line, within="policy")
    if not isinstance(bound, Decimal) or bound < 0 or not in_float_range(bound):
        return False
    policy.max_age_s = bound
    return True


class _ExactPolicy(msgspec.Struct, gc=False):
    max_age_s: int | Decimal | None = None


class _ExactClaim(msgspec.Struct, gc=False):
    policy: _ExactPolicy | None = None


_EXACT_IN_POLICY = msgspec.json.Decoder(_ExactPolicy)
_EXACT_IN_CLAIM = msgspec.json.Decoder(_ExactClaim)


def exact_max_age(text: bytes, *, within: str | None) -> int | Decimal | None:
    """The ``max_age_s`` of the JSON object ``text`` (of its member ``within``: only ``policy``),
    read from its digits: ``0.3`` is three tenths, not the float nearest it. Only for a text the
    loader took, with a number there: its other members are passed over unread. ``ValueError``
    when the text cannot be read so."""
    try:
        if within is None:
            return _EXACT_IN_POLICY.decode(text).max_age_s
        policy = _EXACT_IN_CLAIM.decode(text).policy
    except msgspec.DecodeError as exc:
        raise ValueError(str(exc)) from None
    return None if policy is None else policy.max_age_s


def _settled(claim: ClaimStruct) -> bool:
    """Every ``at`` made an :class:`Instant`, mutation ids unique, every ``covers`` entry naming
    one; False as soon as one is not so (the loader then says what is wrong). Instants met
    before are looked up for all mutations at once, in C: a claim's Python work is mostly this."""
    mutations = claim.mutations
    ats = list(map(_instants.get, map(_AT, mutations)))
    if not all(ats):  # an instant not met before (instants have no truth value of their own)
        for index, known in enumerate(ats):
            if known is None:
                made = ats[index] = _new_instant(mutations[index].at)
                if made is None:
                    return False
    ids = set(map(_ID, mutations))
    if len(ids) != len(mutations):
        return False
    for mutation, at in zip(mutations, ats, strict=True):
        mutation.at = at
    for item in claim.evidence:
        text = item.at
        at = _instants.get(text) or _new_instant(text)
        if at is None or not ids.issuperset(item.covers):
            return False
        item.at = at
    return True


_AT = attrgetter("at")
_ID = attrgetter("id")


def _new_instant(text: str) -> Instant | None:
    """``text``, not met before, as an instant, kept for the next time; None when it is not one
    (not RFC 3339). Instants are immutable, and a batch repeats many (a session's writes)."""
    try:
        key = instant_key(text)
    except ValueError:
        return None
    if len(_instants) >= _INSTANTS_KEPT:
        _instants.clear()  # cleared, never replaced: _settled looks it up by name each time
    instant = _instants[text] = Instant(text, key)
    return instant


UNSET: Any = msgspec.UNSET  # a field the text did not give
