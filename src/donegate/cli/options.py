"""Option types shared by subcommands."""

from __future__ import annotations

import re
from decimal import Decimal

import click

from donegate.instant import Instant

_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


class InstantParam(click.ParamType):  # type: ignore[type-arg]
    """An RFC 3339 timestamp with an offset, for ``--now``."""

    name = "RFC3339"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> Instant:
        if isinstance(value, Instant):
            return value
        try:
            return Instant.parse(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


INSTANT = InstantParam()


class SecondsParam(click.ParamType):  # type: ignore[type-arg]
    """A finite, non-negative number of seconds up to ``maximum``, kept exact as a Decimal.

    NaN and the infinities are refused: every comparison with NaN is false, so a NaN bound would
    let anything through. ``1e400`` is refused as out of range, not rounded to infinity.
    """

    name = "SECONDS"

    def __init__(self, maximum: int) -> None:
        self.maximum = maximum

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> Decimal:
        if isinstance(value, Decimal):
            return value
        text = str(value).strip()
        if not _DECIMAL.fullmatch(text) or len(text) > 100:
            self.fail(f"expected a number of seconds like 5 or 0.5, got {text[:40]!r}", param, ctx)
        seconds = Decimal(text)
        if not 0 <= seconds <= self.maximum:
            self.fail(f"expected 0 to {self.maximum} seconds, got {text}", param, ctx)
        return seconds
