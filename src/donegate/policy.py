"""Policies: which check types a class of task requires, and how fresh the evidence must be.

A claim carries the agent's copy of its policy. The verifier's policy wins: a policy the caller
passes (a file, the team's configuration) replaces the document's own entirely, and the verdict
records which one was applied.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError, WithJsonSchema

from donegate.errors import InvalidInput
from donegate.jsonvalue import NOT_FINITE
from donegate.wire import WireModel, parse_json, translate

OnUnverified = Literal["block", "warn", "record"]
PolicySource = Literal["document", "file", "config", "none"]


def _seconds(value: Any) -> int | float:
    # int or float kept as given (300 stays 300 when written back); bools are not numbers.
    if type(value) not in (int, float):
        raise ValueError(f"expected a number of seconds, got {type(value).__name__}")
    if type(value) is float and not math.isfinite(value):  # an int of any size is exact
        raise ValueError(NOT_FINITE)
    if value < 0:
        raise ValueError(f"must be >= 0, got {value}")
    seconds: int | float = value
    return seconds


Seconds = Annotated[Any, AfterValidator(_seconds), WithJsonSchema({"type": "number", "minimum": 0})]


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
    def max_age_s(self) -> int | float | None:
        return self.policy.max_age_s if self.policy else None

    @property
    def on_unverified(self) -> OnUnverified:
        return self.policy.on_unverified if self.policy else "block"


def parse_policy(data: str | bytes, *, origin: str = "policy") -> Policy:
    """Parse a JSON policy object, or raise :class:`InvalidInput` naming the path."""
    raw = parse_json(data, what=origin)
    try:
        return Policy.model_validate(raw)
    except ValidationError as exc:
        error = translate(exc)
        raise InvalidInput(
            f"{origin} is not a valid policy:\n{error.message}", error.path
        ) from None


def load_policy_file(path: Path) -> Policy:
    """Read a policy file (JSON), or raise :class:`InvalidInput`."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read policy file {path}: {exc.strerror}") from None
    return parse_policy(data, origin=str(path))
