"""Option types shared by subcommands."""

from __future__ import annotations

import click

from donegate.instant import Instant


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
