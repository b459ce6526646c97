"""Does an observation satisfy an expectation? JSON equality, strictly typed.

``true`` is not ``1``, ``"94107"`` is not ``94107``, ``2`` equals ``2.0``. An expected object is
satisfied by an observed object holding every expected key (recursively; extra keys allowed);
arrays and scalars compare exactly. A key the observation does not hold is no observation at all,
neither a match nor a contradiction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias

from donegate.record import Record

# Any JSON value, as parsed (the batch reader imports no pydantic, so neither does this module).
JsonValue: TypeAlias = Any

Outcome = Literal["match", "contradicts", "no_observation"]

# A check-type rule for one expected key: (expected value, observed value) -> satisfied?
KeyRule = Callable[[JsonValue, JsonValue], bool | None]


def json_equal(a: JsonValue, b: JsonValue) -> bool:
    """JSON equality: booleans are not numbers, numbers compare by value, containers exactly."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(json_equal, a, b))
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(json_equal(value, b[key]) for key, value in a.items())
        )
    return type(a) is type(b) and a == b


def satisfies(expected: JsonValue, observed: JsonValue) -> bool:
    """Objects as a subset (recursively), everything else by :func:`json_equal`."""
    if isinstance(expected, dict):
        return isinstance(observed, dict) and all(
            key in observed and satisfies(value, observed[key]) for key, value in expected.items()
        )
    return json_equal(expected, observed)


def _body_contains(expected: JsonValue, observed: JsonValue) -> bool | None:
    # The collector searched the body for the expected text and reports whether it was there.
    if isinstance(expected, str) and isinstance(observed, bool):
        return observed
    return None


# Check-type rules, by (check_type, key). Anything not here uses the generic comparison.
KEY_RULES: Mapping[tuple[str, str], KeyRule] = {
    ("endpoint_health", "body_contains"): _body_contains,
}


class Comparison(Record):
    """The outcome of comparing one evidence item, with the keys that decided it.

    A record (a tuple), not a frozen dataclass: every counting item of every claim makes one, and
    a frozen dataclass sets each field through ``object.__setattr__``."""

    outcome: Outcome
    contradicted: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


def compare(check_type: str, expected: Mapping[str, JsonValue], observed: JsonValue) -> Comparison:
    """Match when every expected key is satisfied, contradicts when a present key is not."""
    if not expected or not isinstance(observed, dict):
        return Comparison("no_observation", (), tuple(expected))
    contradicted: list[str] = []
    missing: list[str] = []
    rules = _RULES_BY_TYPE.get(check_type)  # most check types have no rule of their own
    for key, want in expected.items():
        got = observed.get(key, _ABSENT)
        if got is _ABSENT:
            missing.append(key)
            continue
        rule = rules.get(key) if rules else None
        satisfied = rule(want, got) if rule else None
        if satisfied is None:
            kind = type(want)
            if kind is type(got) and kind in _SCALARS:
                satisfied = want == got  # the common case, said by json_equal in one step
            else:
                satisfied = satisfies(want, got)
        if not satisfied:
            contradicted.append(key)
    if contradicted:
        return Comparison("contradicts", tuple(contradicted), tuple(missing))
    if missing:
        return Comparison("no_observation", (), tuple(missing))
    return MATCH


MATCH = Comparison("match")
"""Every match is this one object: a claim with a million matching items needs only one."""

_ABSENT = object()


def _by_check_type(rules: Mapping[tuple[str, str], KeyRule]) -> dict[str, dict[str, KeyRule]]:
    grouped: dict[str, dict[str, KeyRule]] = {}
    for (check_type, key), rule in rules.items():
        grouped.setdefault(check_type, {})[key] = rule
    return grouped


_RULES_BY_TYPE = _by_check_type(KEY_RULES)

_SCALARS = frozenset({str, int, float, type(None)})  # bool is its own type, never int's
