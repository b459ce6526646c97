"""``donegate schema``: print the JSON Schema of the Completion Claim v0.1 document."""

from __future__ import annotations

import json

import click

from donegate.claim import json_schema
from donegate.exitcodes import ExitCode


@click.command()
def schema() -> int:
    """Print the JSON Schema (draft 2020-12) of a Completion Claim v0.1 document."""
    click.echo(json.dumps(json_schema(), indent=2, sort_keys=False))
    return ExitCode.OK
