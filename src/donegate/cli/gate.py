"""``donegate gate``: the completion gate for any host, in any language.

This module is on the hook's path (a fresh process at every agent stop), so it imports only the
gate, the standard library and click: no pydantic.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from donegate import jsontext
from donegate.errors import InvalidInput
from donegate.exitcodes import ExitCode
from donegate.gate import Decision, Gate, GateContext, GateStore, parse_options
from donegate.gate._check import count, mapping, optional_text

GATE_EXIT_CODES = (
    "Exit codes: 0 allow, 1 veto, 2 usage error (e.g. no --session), 4 invalid input, "
    "5 internal error (e.g. an unreadable state file; no decision was made)."
)
_REQUEST_KEYS = frozenset({"facts", "options", "context"})
_CONTEXT_KEYS = frozenset({"task", "text", "diff", "stop_reason", "pending_effects"})
MAX_REQUEST_BYTES = 64 * 1024 * 1024
"""The largest ``gate decide`` request read; a larger one is refused (exit 4), never half-read."""


def _session(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value.strip():
        raise click.BadParameter("expected a non-blank session id")
    if not jsontext.clean_text(value):
        raise click.BadParameter(f"a session id is UTF-8 text without NUL, got {value[:80]!r}")
    return value


_SESSION = click.option(
    "--session",
    "session_id",
    required=True,
    metavar="ID",
    callback=_session,
    help="The agent session; budgets and events are kept per session.",
)
_STATE_DIR = click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where gate state lives; default $DONEGATE_STATE_DIR, else ~/.local/state/donegate.",
)


@click.group(epilog=GATE_EXIT_CODES)
def gate() -> None:
    """Decide whether an agent may stop, from write and verifier facts (never its words)."""


@gate.command(epilog=GATE_EXIT_CODES)
@_SESSION
@_STATE_DIR
@click.option("--json", "as_json", is_flag=True, help="Print the decision object on stdout.")
def decide(session_id: str, state_dir: Path | None, as_json: bool) -> int:
    """Decide one stop from {"facts": {...}, "options": {...}, "context": {...}} on stdin.

    Without "facts" the gate abstains: it allows with reason facts_unavailable, and the
    verification reads not_run. On a veto the feedback for the agent is in "message".
    "context" (task, text, diff, stop_reason, pending_effects) is what a judge is shown and
    where assistant_output requirements are observed.
    """
    request = _read_request()
    options = parse_options(request.get("options"))
    context = _context(session_id, request.get("context"))
    # The event is committed with "reported": false and flipped only once the answer is out, so
    # a process killed in between leaves a record saying nobody was told.
    store = GateStore.in_state_dir(state_dir, track_reports=True)
    decision = Gate(options, store=store).decide(session_id, request.get("facts"), context=context)
    if as_json:
        _print_json(decision.to_json_dict(), indent=2)
    else:
        _summarise(decision)
    sys.stdout.flush()
    sys.stderr.flush()
    if store.last_event is not None:
        store.mark_reported(store.last_event)
    return ExitCode.ALLOW if decision.confirm else ExitCode.VETO


@gate.command()
@_SESSION
@_STATE_DIR
def events(session_id: str, state_dir: Path | None) -> int:
    """Print the session's decision events, oldest first, one JSON object a line."""
    for event in GateStore.in_state_dir(state_dir).events(session_id):
        _print_json(event)
    return ExitCode.OK


@gate.command()
@_SESSION
@_STATE_DIR
def counts(session_id: str, state_dir: Path | None) -> int:
    """Print the session's veto counts (by reason, zero-filled, and by class) as JSON."""
    store = GateStore.in_state_dir(state_dir)
    data = {"session_id": session_id, **store.counts(session_id).to_json_dict()}
    data["outcome"] = store.outcome(session_id)
    data["judge_invocations"] = store.judge_invocations(session_id)
    data["conversions"] = store.conversions(session_id)
    _print_json(data, indent=2)
    return ExitCode.OK


def _read_request() -> dict[str, Any]:
    from donegate.cli.streams import NoStdin, stdin_bytes, unreadable

    try:
        raw = stdin_bytes().read(MAX_REQUEST_BYTES + 1)
    except NoStdin as exc:  # started without a request to read: a usage error
        raise click.UsageError(str(exc)) from None
    except OSError as exc:
        raise click.UsageError(str(unreadable(exc))) from None
    if len(raw) > MAX_REQUEST_BYTES:
        raise InvalidInput(f"stdin is larger than {MAX_REQUEST_BYTES} bytes (see Input bounds)")
    request = jsontext.loads(raw, what="stdin")
    return dict(mapping(request, "", _REQUEST_KEYS))


def _context(session_id: str, data: object) -> GateContext | None:
    if data is None:
        return None
    raw = mapping(data, "context", _CONTEXT_KEYS)
    for key in ("task", "text", "diff", "stop_reason"):
        optional_text(raw.get(key), f"context.{key}")
    effects = count(raw.get("pending_effects", 0), "context.pending_effects")
    fields = {k: v for k, v in raw.items() if k != "pending_effects"}
    return GateContext(session_id, pending_effects=effects, **fields)


def _print_json(data: dict[str, Any], indent: int | None = None) -> None:
    sys.stdout.write(json.dumps(data, indent=indent, sort_keys=indent is None) + "\n")


def _summarise(decision: Decision) -> None:
    if decision.confirm:
        converted = (
            f" (converted from {decision.converted_from})" if decision.converted_from else ""
        )
        click.echo(f"allow: {decision.reason}{converted}", err=True)
        return
    kind = "strict" if decision.strict else "soft"
    click.echo(f"veto ({kind}): {decision.reason}", err=True)
    click.echo(f"  {decision.message}", err=True)
