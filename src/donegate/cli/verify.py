"""``donegate verify``: compute a claim's verdict by the spec's six rules."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import click
import pydantic_core

from donegate.claim import Claim, load_claim, parse_claim
from donegate.cli.options import INSTANT
from donegate.cli.report import show
from donegate.enforce import exit_code
from donegate.errors import InvalidInput
from donegate.exitcodes import HELP_TABLE, ExitCode
from donegate.instant import Instant
from donegate.policy import AppliedPolicy, load_policy_file
from donegate.verdict import DEFAULT_MAX_SKEW_S, VerifyOptions, decide, verify_claim


@click.command(epilog=HELP_TABLE)
@click.argument("claim", required=False, metavar="CLAIM")
@click.option(
    "--jsonl", metavar="FILE|-", help="Verify one claim per line; one JSON line out each."
)
@click.option(
    "--policy",
    "policy_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A JSON policy object that replaces the document's own policy entirely.",
)
@click.option("--now", type=INSTANT, help="Decision time (RFC 3339); default: the clock.")
@click.option(
    "--trust",
    multiple=True,
    metavar="VERIFIER_ID",
    help="Believe 'independent' only from these verifier ids (repeatable).",
)
@click.option(
    "--trust-key",
    multiple=True,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    metavar="KEY.pub",
    help="Count evidence as independent only when signed by this Ed25519 key (repeatable); "
    "stronger than --trust, which believes a verifier id as written.",
)
@click.option(
    "--max-skew",
    type=click.FloatRange(min=0),
    default=DEFAULT_MAX_SKEW_S,
    show_default=True,
    help="Seconds evidence may be dated after the decision time (clock skew).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the claim with its verdict on stdout.")
@click.option("--enforce", is_flag=True, help="Exit as the applied policy's on_unverified says.")
def verify(
    claim: str | None,
    jsonl: str | None,
    policy_file: Path | None,
    now: Instant | None,
    trust: tuple[str, ...],
    trust_key: tuple[Path, ...],
    max_skew: float,
    as_json: bool,
    enforce: bool,
) -> int:
    """Verify CLAIM (a file, or - for stdin) and exit with its verdict.

    Evidence counts only when it is independent (and from a --trust'ed verifier, when given),
    strictly later than every mutation it covers, fresh under the policy's max_age_s, and not dated
    after the decision time by more than --max-skew. A counting observation that contradicts its
    expectation refutes the claim; the claim is verified only when every mutation and every
    required check type has counting, matching evidence. A verdict in the input is ignored.

    Without --json a summary goes to stderr; with --json the claim with its computed verdict goes
    to stdout and nothing else does.
    """
    if (claim is None) == (jsonl is None):
        raise click.UsageError("give exactly one of CLAIM or --jsonl FILE")
    options = VerifyOptions(
        policy=_applied_policy(policy_file),
        now=now,
        trust=frozenset(trust) if trust else None,
        max_skew_s=max_skew,
    )
    if jsonl is not None:
        if trust_key:
            raise click.UsageError("--trust-key works on one CLAIM, not with --jsonl")
        return _verify_lines(jsonl, options)
    assert claim is not None
    verified = verify_claim(_signed_only(load_claim(claim), trust_key), options)
    show(verified, as_json=as_json)
    assert verified.verdict is not None
    return exit_code(verified.verdict, enabled=enforce)


def _signed_only(claim: Claim, keys: tuple[Path, ...]) -> Claim:
    if not keys:
        return claim
    from donegate.signing.keys import trusted_key
    from donegate.signing.trust import trusted_only

    return trusted_only(claim, {k.keyid: k for k in map(trusted_key, keys)})


def _applied_policy(policy_file: Path | None) -> AppliedPolicy | None:
    if policy_file is None:
        return None
    return AppliedPolicy(source="file", policy=load_policy_file(policy_file))


def _verify_lines(source: str, options: VerifyOptions) -> int:
    invalid = False
    out = sys.stdout.buffer
    with _open_lines(source) as stream:
        for number, line in _numbered(stream):
            record, ok = _verify_line(number, line, options)
            invalid = invalid or not ok
            out.write(record + b"\n")
    return ExitCode.INVALID_INPUT if invalid else ExitCode.OK


def _verify_line(number: int, line: bytes, options: VerifyOptions) -> tuple[bytes, bool]:
    try:
        claim = parse_claim(line)
    except InvalidInput as exc:
        return pydantic_core.to_json({"line": number, "error": str(exc)}), False
    verdict = decide(claim, options)
    # Spliced rather than rebuilt: the verdict is serialised once, straight to JSON.
    head = pydantic_core.to_json({"line": number, "task_id": claim.task.id})[:-1]
    return head + b',"verdict":' + verdict.model_dump_json(exclude_unset=True).encode() + b"}", True


def _open_lines(source: str) -> IO[bytes]:
    if source == "-":
        return sys.stdin.buffer
    try:
        return Path(source).open("rb")
    except OSError as exc:
        raise InvalidInput(f"cannot read {source}: {exc.strerror}") from None


def _numbered(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    for number, line in enumerate(stream, start=1):
        if line.strip():
            yield number, line
