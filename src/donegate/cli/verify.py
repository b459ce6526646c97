"""``donegate verify``: compute a claim's verdict by the spec's six rules."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from donegate.cli.options import INSTANT, SecondsParam
from donegate.errors import InvalidInput
from donegate.exitcodes import HELP_TABLE
from donegate.instant import Instant
from donegate.rules import DEFAULT_MAX_SKEW_S, MAX_SKEW_LIMIT_S, VerifyOptions

if TYPE_CHECKING:  # a batch of claims is read without the models (see donegate.bulk)
    from pydantic import BaseModel

    from donegate.claim import Claim
    from donegate.policy import AppliedPolicy


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
    type=SecondsParam(MAX_SKEW_LIMIT_S),
    default=DEFAULT_MAX_SKEW_S,
    show_default=True,
    help="Seconds evidence may be dated after the decision time (clock skew).",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, 64),
    metavar="N",
    help="Processes for a --jsonl batch; answers stay in input order. "
    "Default: one per core for a file of 2 MB or more (stdin redirected from one included), "
    "and for a pipe once 2 MB have come with no pause; else 1.",
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
    max_skew: Decimal,
    jobs: int | None,
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

    With --jsonl every non-blank line gets one JSON line out, in order: its verdict, or
    {"line", "state": "invalid", "path", "error"}. No line stops the batch; the exit code is 0,
    or 4 when any line was invalid (141, quietly, when the reader goes away: | head -1).
    """
    if (claim is None) == (jsonl is None):
        raise click.UsageError("give exactly one of CLAIM or --jsonl FILE")
    if jobs is not None and jsonl is None:
        raise click.UsageError("--jobs works with --jsonl FILE")
    options = VerifyOptions(
        policy=_applied_policy(policy_file),
        now=now,
        trust=frozenset(trust) if trust else None,
        max_skew_s=max_skew,
    )
    if jsonl is not None:
        if trust_key:
            raise click.UsageError("--trust-key works on one CLAIM, not with --jsonl")
        from donegate.cli.batch import answer_lines, open_lines

        with _stdin_usage():
            stream = open_lines(jsonl)  # opened first: an unreadable file is said one way
        return answer_lines(stream, jsonl, options, jobs)
    assert claim is not None
    from donegate.cli.report import show
    from donegate.enforce import exit_code
    from donegate.verdict import verify_claim

    with _stdin_usage():
        loaded = _load(claim)
    verified = verify_claim(_signed_only(loaded, trust_key), options)
    show(verified, as_json=as_json)
    assert verified.verdict is not None
    return exit_code(verified.verdict, enabled=enforce)


@contextlib.contextmanager
def _stdin_usage() -> Iterator[None]:
    """Standard input closed or unreadable: said as the usage error it is (exit 2)."""
    from donegate.cli.streams import NoStdin

    try:
        yield
    except NoStdin as exc:
        raise click.UsageError(str(exc)) from None


LARGE_CLAIM_BYTES = 1024 * 1024
"""From this size on, a claim's evidence is validated item by item (see :func:`_load`)."""


def _load(source: str) -> Claim:
    """The claim at ``source`` (a path, or ``-``), read so that a large one fits in memory.

    ``parse_claim`` holds the parser's whole tree and every model at once: about 14 times the
    input. A large claim is parsed to plain data first, and each evidence item replaced by its
    model as it is validated, so the items' plain data is freed as their models are built.
    Anything the piecewise reading does not accept is parsed again by ``parse_claim``, so an
    invalid claim gets exactly the error it always got.
    """
    from donegate.claim import parse_claim

    data = _read(source)
    if len(data) >= LARGE_CLAIM_BYTES:
        try:
            return _parse_in_pieces(data)
        except (ValueError, TypeError):
            pass  # the one loader below says what is wrong, as it always has
    return parse_claim(data)


def _read(source: str) -> bytes:
    if source == "-":
        from donegate.cli.streams import stdin_bytes, unreadable

        try:
            return stdin_bytes().read()
        except OSError as exc:
            raise unreadable(exc) from None
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read claim file {source}: {exc.strerror}") from None


def _parse_in_pieces(data: bytes) -> Claim:
    import pydantic_core

    from donegate.claim import Claim, Evidence, with_exact_bound

    raw = pydantic_core.from_json(data, allow_inf_nan=False)
    items = raw.get("evidence") if isinstance(raw, dict) else None
    if not isinstance(items, list):
        raise ValueError("no evidence list: nothing to gain")
    shared: dict[frozenset[str], set[str]] = {}
    for index, item in enumerate(items):
        model = Evidence.model_validate(item)
        _share_fields_set(model, shared)
        _share_fields_set(model.verifier, shared)
        items[index] = model
    return with_exact_bound(Claim.model_validate(raw), data)


def _share_fields_set(model: BaseModel, shared: dict[frozenset[str], set[str]]) -> None:
    # pydantic gives every model its own set of the fields it was given, and its own dict of
    # extra keys, most often empty: about a third of the memory of a large claim. Models are
    # frozen, so a shared set or empty dict is never changed.
    names = model.__pydantic_fields_set__
    one = shared.setdefault(frozenset(names), names)
    if one is not names:
        object.__setattr__(model, "__pydantic_fields_set__", one)
    if model.__pydantic_extra__ == {} and model.__pydantic_extra__ is not _NO_EXTRA:
        object.__setattr__(model, "__pydantic_extra__", _NO_EXTRA)


_NO_EXTRA: dict[str, Any] = {}


def _signed_only(claim: Claim, keys: tuple[Path, ...]) -> Claim:
    if not keys:
        return claim
    from donegate.signing.keys import trusted_key
    from donegate.signing.trust import trusted_only

    return trusted_only(claim, {k.keyid: k for k in map(trusted_key, keys)})


def _applied_policy(policy_file: Path | None) -> AppliedPolicy | None:
    if policy_file is None:
        return None
    from donegate.policy import AppliedPolicy, load_policy_file

    return AppliedPolicy(source="file", policy=load_policy_file(policy_file))
