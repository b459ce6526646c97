"""What ``donegate hook HOST`` does: read a host's payload, act on it, answer in its terms.

The installed hooks call only that command, and it needs no command-line framework: this module
is the whole hook path. Whatever goes wrong inside donegate, the agent is not
trapped: the stop is allowed, the person is told in a notice, and the stop is recorded as not
verified. A traceback never becomes the agent's feedback. A call that cannot write donegate's
state, as one from inside the agent's sandbox cannot, records nothing: it says so on its
standard error and exits 1.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from donegate import jsontext, statedir
from donegate.errors import InvalidInput
from donegate.hooks import adapter
from donegate.session.event import HookAnswer, HookEvent
from donegate.timefmt import rfc3339

TYPE_CHECKING = False
if TYPE_CHECKING:
    from donegate.hooks import HostAdapter

MAX_PAYLOAD_BYTES = 16 * 1024 * 1024
# A hook call that cannot write donegate's state (run from inside the agent's sandbox) recorded
# nothing, and exits so: 1, which no host reads as a block (Claude Code's is 2).
NOT_RECORDED = 1


def run_hook(host: str, state_dir: str | Path | None = None, *, ends_process: bool = False) -> int:
    """Handle one ``host`` hook call: the payload on stdin, the answer on stdout, exit code out.

    ``ends_process``: the caller ends the process with ``os._exit`` right after (the hook's own
    command does), so a stop may leave its commits in SQLite's log (:func:`_hold_databases`).
    """
    host_adapter = adapter(host)
    try:
        event = host_adapter.parse(_payload(), fallback_cwd=Path.cwd())
    except Exception as exc:  # any payload at all is answered, never with a traceback
        if not isinstance(exc, InvalidInput):
            exc = InvalidInput(f"{type(exc).__name__}: {exc}")
        _say(f"donegate: unreadable {host} hook payload: {exc}")
        notice = f"donegate could not read this hook call ({exc}); the stop was not checked."
        return _emit(host_adapter, HookAnswer.allow(notice), None)
    try:
        fresh = statedir.absent(state_dir)
        state = statedir.writable(state_dir)
        if fresh:  # said to whoever ran it: inside a box that hides the real one, the agent
            _say(f"donegate: {event.host_event} hook: {statedir.made_here(state)}")
        answer = _handle(event, state, ends_process)
    except statedir.Unwritable as exc:  # run inside the agent's box: said to whoever ran it
        _say(f"donegate: {event.host_event} hook: {exc}")
        return NOT_RECORDED
    except Exception as exc:  # the agent must never be trapped by donegate's own failure
        answer = _failed(event, statedir.resolve(state_dir), exc)
    return _emit(host_adapter, answer, event)


def _ship_later(state: Path) -> None:
    # A configured team ledger gets the receipt from a detached process, never waited on here.
    try:
        from donegate.teamledger.background import ship_in_background

        ship_in_background(state)
    except Exception as exc:  # the receipt is safe in the local outbox; the next sync ships it
        _say(f"donegate: could not start shipping to the team ledger: {type(exc).__name__}: {exc}")


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")


def _payload() -> object:
    if sys.stdin is None:  # the host started the hook with its standard input closed
        raise InvalidInput("standard input is closed: the host sent no payload")
    data = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    if len(data) > MAX_PAYLOAD_BYTES:
        raise InvalidInput(f"payload larger than {MAX_PAYLOAD_BYTES} bytes")
    return jsontext.loads(data or b"{}", what="payload")


def _handle(event: HookEvent, state: Path, ends_process: bool) -> HookAnswer:
    # The stop pipeline is imported per event kind: a tool-call journal entry stays cheap.
    if event.kind == "stop":
        top = _list_early(event.cwd)
        event = _confined(event, top or event.cwd, state)
        if ends_process:
            _hold_databases(state)
        from donegate.session import on_stop

        answer = on_stop(event, state).answer
        _ship_later(state)
        return answer
    if event.kind == "baseline":
        from donegate.session import on_start

        return HookAnswer.allow(on_start(event, state))
    if event.kind == "tool_use":
        from donegate.session import on_tool_use

        return HookAnswer.allow(on_tool_use(event, state))
    return HookAnswer.allow()


def _hold_databases(state: Path) -> None:
    # Only a process that ends with os._exit (donegate.cli.main) may hold them: there, the
    # commits of this stop are left in the write-ahead log instead of checkpointed at its end.
    from donegate import sqlitefile
    from donegate.gate.store import FILE_NAME as GATE_FILE
    from donegate.ledger import FILE_NAME as LEDGER_FILE

    sqlitefile.hold([state / GATE_FILE, state / LEDGER_FILE])


def _list_early(cwd: Path) -> Path | None:
    # git lists the tree on the other core while Python imports the stop pipeline.
    from donegate import gitlisting

    top = gitlisting.toplevel(cwd)
    if top is not None:
        gitlisting.start(top)
    return top


def _confined(event: HookEvent, root: Path, state: Path) -> HookEvent:
    # Read at stops only, from the host's few small settings files: whether a sandbox kept the
    # agent's commands out of donegate's state, which the stop records and may require.
    from donegate.hooks.confinement import confinement

    return event._replace(confinement=confinement(event.host, root, state_dir=state))


def _failed(event: HookEvent, state: Path, exc: Exception) -> HookAnswer:
    from donegate.session.stop import StopFailed

    what = f"{type(exc).__name__}: {exc}" if not isinstance(exc, InvalidInput) else str(exc)
    if isinstance(exc, StopFailed):
        what = str(exc)  # the stop's own receipt already records the failure
    _say(f"donegate: {event.host_event} hook failed: {what}")
    if event.kind != "stop":
        return HookAnswer.allow()
    if isinstance(exc, StopFailed) and exc.receipt_id is not None:
        recorded = True
    else:
        recorded = _record_failure(event, state, what)
    where = "recorded as not verified" if recorded else "could not even be recorded"
    return HookAnswer.allow(f"donegate could not check this stop ({what}); it is {where}.")


def _record_failure(event: HookEvent, state: Path, what: str) -> bool:
    try:
        from donegate.ledger import Ledger

        with Ledger(state) as ledger:
            ledger.record(
                session_id=event.session_id,
                host=event.host,
                workspace=event.cwd,
                verdict="unverified",
                decision="allow",
                reason="donegate_error",
                claim={},
                decision_doc={"error": what, "at": rfc3339(datetime.now(UTC))},
            )
    except Exception as exc:  # the ledger itself is what failed: say so, still let the agent go
        _say(f"donegate: could not record the failure: {exc}")
        return False
    return True


def _emit(host_adapter: HostAdapter, answer: HookAnswer, event: HookEvent | None) -> int:
    # A payload that could not be read is answered as a non-stop event: never a block.
    unread = HookEvent(host_adapter.NAME, "", "ignored", "", Path.cwd())
    rendered = host_adapter.render(answer, event or unread)
    if rendered.stdout:
        sys.stdout.write(rendered.stdout + "\n")
    if rendered.stderr:
        _say(rendered.stderr)
    return rendered.exit_code
