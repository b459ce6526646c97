"""Policies: which check types a class of task requires, and how fresh the evidence must be.

A claim carries the agent's copy of its policy. The verifier's policy wins: a policy the caller
passes (a file, the team's configuration) replaces the document's own entirely, and the verdict
records which one was applied.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, PlainSerializer, ValidationError, WithJsonSchema

from donegate.duration import exact, in_float_range
from donegate.errors import InvalidInput
from donegate.jsonvalue import NOT_FINITE
from donegate.wire import WireModel, parse_json, translate

OnUnverified = Literal["block", "warn", "record"]
PolicySource = Literal["document", "file", "config", "none"]


def bound_seconds(value: Any) -> int | Decimal:
    """A policy's ``max_age_s``, held exactly: an integer as itself, any other number as the
    decimal it is written as (a float as the one its repr writes: the loaders hand over the text's
    own decimal, see :func:`donegate.reader.exact_max_age`). Bools are not numbers."""
    if type(value) not in (int, float, Decimal):
        raise ValueError(f"expected a number of seconds, got {type(value).__name__}")
    seconds = exact(value)
    # An int of any size is exact; a decimal past a float's range is refused as a JSON reader's
    # float would be (1e400), so every loader refuses the same texts.
    if isinstance(seconds, Decimal) and not in_float_range(seconds):
        raise ValueError(NOT_FINITE)
    if seconds < 0:
        raise ValueError(f"must be >= 0, got {seconds}")
    assert not isinstance(seconds, Fraction)
    return seconds


def _written(value: int | Decimal) -> int | float:
    # JSON written by the standard library holds a float, not a decimal's digits: a bound is
    # written back as the float nearest it, the same for 0.3 (or 300.0) as it was read.
    return float(value) if isinstance(value, Decimal) else value


Seconds = Annotated[
    Any,
    AfterValidator(bound_seconds),
    PlainSerializer(_written, when_used="json"),
    WithJsonSchema({"type": "number", "minimum": 0}),
]


class Policy(WireModel):
    """The spec's policy object."""

    id: str | None = None
    requires: list[str] = Field(default_factory=list)
    max_age_s: Seconds | None = None
    on_unverified: OnUnverified = "block"


class AppliedPolicy(WireModel):
    """Which policy decided a verdict, and where it came from."""

    source: PolicySource
    policy: Policy | None = None

    @property
    def requires(self) -> list[str]:
        return self.policy.requires if self.policy else []

    @property
    def max_age_s(self) -> int | Decimal | None:
        return self.policy.max_age_s if self.policy else None

    @property
    def on_unverified(self) -> OnUnverified:
        return self.policy.on_unverified if self.policy else "block"


def parse_policy(data: str | bytes, *, origin: str = "policy") -> Policy:
    """Parse a JSON policy object, or raise :class:`InvalidInput` naming the path."""
    raw = parse_json(data, what=origin)
    try:
        return exact_bound(Policy.model_validate(raw), data)
    except ValidationError as exc:
        error = translate(exc)
        raise InvalidInput(
            f"{origin} is not a valid policy:\n{error.message}", error.path
        ) from None
    except ValueError as exc:  # the bound's own digits are not a bound
        raise InvalidInput(
            f"{origin} is not a valid policy:\nmax_age_s: {exc}", "max_age_s"
        ) from None


def exact_bound(policy: Policy, text: str | bytes, *, within: str | None = None) -> Policy:
    """``policy``, read from JSON ``text`` (from its member ``within``, when given), with its
    ``max_age_s`` the decimal the text writes: the models' JSON parser reads a fraction (``0.3``)
    as the binary float nearest it, which a bound of that age is not. ``ValueError`` when that
    decimal is not a bound (below zero by less than a float tells)."""
    if type(policy.max_age_s) is not Decimal:
        return policy  # no bound, or an integer: read exactly already
    from donegate.reader import exact_max_age

    raw = text.encode() if isinstance(text, str) else text
    bound = bound_seconds(exact_max_age(raw, within=within))
    return policy.model_copy(update={"max_age_s": bound})


def load_policy_file(path: Path) -> Policy:
    """Read a policy file (JSON), or raise :class:`InvalidInput`."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read policy file {path}: {exc.strerror}") from None
    return parse_policy(data, origin=str(path))
