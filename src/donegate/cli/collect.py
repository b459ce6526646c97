"""``donegate collect``: observe the world as the team's configuration says, then verify."""

from __future__ import annotations

from pathlib import Path

import click

from donegate.claim import Claim, load_claim, parse_claim
from donegate.cli.prestart import Flags, Prestart, bytecode_store
from donegate.cli.report import show
from donegate.exitcodes import HELP_TABLE
from donegate.instant import Instant


@click.command(epilog=HELP_TABLE)
@click.argument("claim", required=False, metavar="CLAIM")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("donegate.toml"),
    show_default=True,
    help="The team's configuration: checks and policy. Commands and URLs come only from here.",
)
@click.option("--task-id", help="Without CLAIM: build one for this task id.")
@click.option("--claimed-outcome", default="", help="Without CLAIM: what the agent says it did.")
@click.option(
    "--mutation",
    "mutations",
    multiple=True,
    metavar="KIND:TARGET",
    help="Without CLAIM: one change the agent made (repeatable), timed now.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the completed claim on stdout.")
@click.option("--enforce", is_flag=True, help="Exit as the applied policy's on_unverified says.")
@click.option("--sign", is_flag=True, help="Sign the evidence collected (see donegate key show).")
def collect(
    claim: str | None,
    config_path: Path,
    task_id: str | None,
    claimed_outcome: str,
    mutations: tuple[str, ...],
    as_json: bool,
    enforce: bool,
    sign: bool,
) -> int:
    """Collect independent evidence for CLAIM (a file, or - for stdin) and verify it.

    Every check in the configuration runs, concurrently, after the claim's mutations; each adds one
    evidence item signed donegate/<version>. A check that could not observe is recorded as absent
    and leaves the claim unverified. Without CLAIM, build one from --task-id, --claimed-outcome
    and --mutation.

    Without --json a summary goes to stderr; with --json the completed claim goes to stdout.
    """
    from donegate.collect import collect as collect_claim
    from donegate.config import load_config
    from donegate.enforce import exit_code

    early = _prestarted()
    flags = Flags(config_path, task_id or "", claimed_outcome, mutations)
    at = Instant.now() if early is None else Instant.from_ns(early.claimed_ns)
    document = _claim(claim, task_id, claimed_outcome, mutations, at)
    config = load_config(config_path)
    for warning in config.warnings():
        click.echo(f"donegate: warning: {warning}", err=True)
    prestarted = None if early is None or claim is not None else early.run_for(flags)
    done = collect_claim(document, config, bytecode=bytecode_store(), prestarted=prestarted)
    if sign:
        from donegate.collect import VERIFIER_ID
        from donegate.signing.evidence import sign_collected
        from donegate.signing.keys import signing_key

        done = sign_collected(done, signing_key(), VERIFIER_ID)
    assert done.verdict is not None
    show(done, as_json=as_json)
    return exit_code(done.verdict, enabled=enforce)


def _prestarted() -> Prestart | None:
    """The test run that ``donegate.cli.main`` started for this collect, if it started one."""
    held = click.get_current_context().obj
    return held if isinstance(held, Prestart) else None


def _claim(
    path: str | None, task_id: str | None, outcome: str, mutations: tuple[str, ...], at: Instant
) -> Claim:
    if path is not None:
        if task_id or mutations or outcome:
            raise click.UsageError("give CLAIM or --task-id/--mutation, not both")
        return load_claim(path)
    if not task_id:
        raise click.UsageError("give CLAIM, or --task-id (with --mutation) to build one")
    return claim_from_flags(task_id, outcome, mutations, at)


def claim_from_flags(task_id: str, outcome: str, mutations: tuple[str, ...], at: Instant) -> Claim:
    """A claim for ``task_id`` with one mutation per ``KIND:TARGET``, all timed ``at``."""
    items = []
    for i, spec in enumerate(mutations, start=1):
        kind, sep, target = spec.partition(":")
        if not sep or not kind or not target:
            raise click.BadParameter(f"expected KIND:TARGET, got {spec!r}", param_hint="--mutation")
        items.append({"id": f"m{i}", "kind": kind, "target": target, "at": at.text})
    return parse_claim(
        {
            "spec_version": "0.1",
            "task": {"id": task_id},
            "claimed_outcome": outcome,
            "mutations": items,
        }
    )
