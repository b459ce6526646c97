"""May the agent stop now? The stop as one numbered function, for any host.

A stop that changed nothing costs a snapshot and a gate decision: the claim models, the
collectors and their libraries are imported only when there is something to verify.
"""

from __future__ import annotations

from collections.abc import Sequence

from donegate import reach
from donegate.gate import Decision, Gate, GateContext
from donegate.gate.store import FILE_NAME as GATE_FILE
from donegate.gate.store import GateStore
from donegate.record import Record
from donegate.session import answer, reading
from donegate.session.event import HookAnswer, HookEvent
from donegate.session.layout import Layout, locked
from donegate.session.receipt import Receipts, repairing
from donegate.session.settings import Settings
from donegate.session.workspace import Workspace, receipt_root
from donegate.workspace import ClassifiedWrite

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from donegate.claim import Claim
    from donegate.sealed._launch import Started

BACKGROUND = "background_tasks"
UNCONFINED = "unconfined"  # the reason of a stop that [gate] require_confined refused
_UNCONFINED_NOTE = (
    "donegate: the agent's commands ran unconfined (no host sandbox kept them out of donegate's "
    "state), so this verdict does not exclude tampering by the agent; `donegate init HOST` "
    "configures the host's sandbox and `donegate doctor` checks it."
)
_REFUSED_UNCONFINED = (
    "donegate: this stop is NOT verified: the agent's commands ran unconfined, and "
    "[gate] require_confined = true. `donegate init HOST` configures the host's sandbox; "
    "`donegate doctor` checks it."
)
FAILED = "donegate_error"


class StopFailed(Exception):
    """donegate itself failed at a stop (``__cause__`` says how); its receipt already says so."""

    def __init__(self, cause: Exception, receipt_id: int | None) -> None:
        super().__init__(describe(cause))
        self.receipt_id = receipt_id


def describe(exc: BaseException) -> str:
    """An error as one line for the person: our own errors by message, others by type too."""
    from donegate.errors import InvalidInput

    return str(exc) if isinstance(exc, InvalidInput) else f"{type(exc).__name__}: {exc}"


class StopResult(Record):
    """What the gate decided at a stop, what the host is told, and the receipt's id."""

    answer: HookAnswer
    decision: Decision | None
    verdict: str
    receipt_id: int | None = None
    claim: dict[str, Any] | None = None


def decide_stop(event: HookEvent, layout: Layout) -> StopResult:
    """Decide one stop event.

    1. this stop's receipt is opened as pending: its first durable act, so that a stop killed
       at any later moment is on the record.
    2. under the session's lock, the workspace: its root is the one pinned at the session's
       first hook call (a directory that cannot be a project is refused).
    3. receipts left pending by killed hooks are closed as interrupted.
    4. the settings the session is judged by (the configuration a person accepted).
    5. background tasks still running: the stop is let go unchecked, and says so.
    6. the writes since the last verified snapshot, classified.
    7. writes that need verifying: the claim, the configured checks, the verdict.
    8. the gate decides from the writes, the reading and the session's history.
    9. ``on_unverified`` shapes the answer; the receipt is closed.
    """
    receipts = Receipts(layout, event, receipt_root(layout, event))
    try:
        receipt_id = receipts.open()  # 1
        try:
            with locked(layout.lock(event.session_id)):
                space = Workspace.open(layout, event)  # 2
                receipts.root = space.root
                notes = space.notes  # one list: every step adds what the person should hear
                notes.extend(receipts.sweep())  # 3
                return _rest(event, layout, space, receipts, receipt_id, notes)
        except Exception as exc:  # recorded here, where the pending receipt is known
            failed = _record_failure(receipts, receipt_id, exc)
            raise StopFailed(exc, failed) from exc
    finally:
        receipts.end()


def _rest(
    event: HookEvent,
    layout: Layout,
    space: Workspace,
    receipts: Receipts,
    receipt_id: int,
    notes: list[str],
) -> StopResult:
    """Steps 4 and 5 of :func:`decide_stop`, then the rest."""
    settings = space.settings()  # 4
    notes += settings.notes
    judge_exposed = reach.warning(space.root, layout.state_dir)
    if judge_exposed:  # nothing donegate could check would tell: the person must move it
        notes.append(judge_exposed)
    if event.background_tasks:  # 5
        said = "donegate: background tasks are still running; this stop was not checked."
        return _let_go(receipts, receipt_id, said, notes, verdict="none", reason=BACKGROUND)
    parked = _parked(event, space, settings)
    try:
        return _checked(event, layout, space, settings, receipts, receipt_id, notes, parked)
    finally:
        if parked is not None:
            parked.close()  # idempotent: given its run, it was closed with the check's run


def _parked(event: HookEvent, space: Workspace, settings: Settings) -> Started | None:
    """The test command parked in the kept copy (see ``checking.park``) for a confined agent's
    stop after a turn with tool calls on record: a turn of words alone (most stops, which change
    nothing) starts none, and pays nothing for it."""
    if event.confinement is None or not settings.has_checks or not space.worked_this_turn():
        return None
    from donegate.session import checking

    return checking.park(space, settings)


def _checked(
    event: HookEvent,
    layout: Layout,
    space: Workspace,
    settings: Settings,
    receipts: Receipts,
    receipt_id: int,
    notes: list[str],
    parked: Started | None,
) -> StopResult:
    """Steps 6 to 9 of :func:`decide_stop`."""
    writes = space.writes(settings)  # 6
    event = _confinement_as_started(event, space, writes, notes)
    if _refused_unconfined(event, settings, writes):
        # Not sent back: the agent cannot confine itself, and sending it back changes nothing.
        space.close_turn()
        return _let_go(
            receipts,
            receipt_id,
            _REFUSED_UNCONFINED,
            notes,
            verdict="unverified",
            reason=UNCONFINED,
            writes=writes,
        )
    claim = _verify(event, space, settings, writes, parked)  # 7
    facts = _facts(space, settings, writes, claim)
    judged = _judged(space, settings, writes)
    decision = _decide(layout, event, settings, facts, claim, notes, judged)  # 8
    if claim is not None and claim.verdict is not None and claim.verdict.state == "verified":
        space.mark_verified()
        if event.confinement is None and settings.on_unverified != "record":
            notes.append(_UNCONFINED_NOTE)
    told = answer.answer_for(decision, settings.on_unverified, writes, [*notes, *receipts.notes])
    if told.decision == "allow":
        space.close_turn()
    elif told.reason:
        space.remember_sent_back(told.reason)
    signed = _signed(claim, space)
    return _close(receipts, receipt_id, event, told, decision, signed, writes, settings)  # 9


def _verify(
    event: HookEvent,
    space: Workspace,
    settings: Settings,
    writes: Sequence[ClassifiedWrite],
    parked: Started | None,
) -> Claim | None:
    """The claim of the writes, checked, when any of them needs verifying.

    The test command starts first (see :mod:`donegate.session.checking`); the claim and the scan
    are made while it runs."""
    if not any(reading.gate_kind(w) == "source" for w in writes):
        return None
    from donegate.session import checking, mutations, scanning  # only for a stop with source

    reported = space.reported()
    targets = [(m["id"], m["target"]) for m in mutations.records(writes, reported)]
    keep = event.confinement is not None
    running = checking.sealed_run(space, settings, targets, keep=keep, parked=parked)
    with running as (sealed, started):
        claim = mutations.build_claim(event, writes, reported)
        found = [
            *scanning.compiled(writes),
            *scanning.hooks_off(space, writes),
            *scanning.environment(space, writes),
            *scanning.scan(space, settings, writes),
        ]
        space.notes.extend(f"donegate: noted, not blocking: {f}" for f in found if not f.blocking)
        void_runs = tuple(str(f) for f in found if f.blocking)
        checking.while_it_runs(started)
        return checking.checked(claim, settings, space, sealed, started, void_runs)


def _facts(
    space: Workspace, settings: Settings, writes: Sequence[ClassifiedWrite], claim: Claim | None
) -> reading.FactsFor:
    """What the gate is told, but for the session's history, which the gate itself keeps."""
    if claim is None and space.has_verified():
        return reading.FactsFor(writes, None, still_verified=True)
    checked = claim if settings.has_checks else None
    return reading.FactsFor(writes, checked, satisfies=settings.satisfies)


def _decide(
    layout: Layout,
    event: HookEvent,
    settings: Settings,
    facts: reading.FactsFor,
    claim: Claim | None,
    notes: list[str],
    judged: tuple[str | None, str | None] = (None, None),
) -> Decision:
    """The gate's decision, from the facts and the session's history it keeps."""

    def decide() -> Decision:
        store = GateStore(layout.state_dir / GATE_FILE)
        try:
            gate = Gate(settings.gate_options(), store=store)
            data = facts.data(gate.history(event.session_id))
            failing = reading.failing_count(claim) if claim is not None else None
            # A stop event is the agent's final answer; the judge and the output rows read it.
            task, diff = judged
            context = GateContext(
                event.session_id,
                task=task,
                stop_reason="sentinel",
                text=event.last_message,
                diff=diff,
            )
            return gate.decide(event.session_id, data, context=context, failing_count=failing)
        finally:
            store.close()

    return repairing(layout, layout.state_dir / GATE_FILE, decide, notes)


def _judged(
    space: Workspace, settings: Settings, writes: Sequence[ClassifiedWrite]
) -> tuple[str | None, str | None]:
    """What only a judge reads (the task, the diff), built only when one is configured."""
    if settings.gate.judge is None:
        return None, None
    return space.task(), space.diff_text(writes)


def _record_failure(receipts: Receipts, receipt_id: int, exc: Exception) -> int | None:
    doc = {"host_event": receipts.event.host_event, "error": describe(exc)}
    try:
        return receipts.close(
            receipt_id,
            verdict="unverified",
            blocked=False,
            reason=FAILED,
            claim={},
            decision_doc=doc,
        )
    except Exception:  # the ledger itself is what failed: the hook says so to the person
        return None


def _let_go(
    receipts: Receipts,
    receipt_id: int,
    said: str,
    notes: list[str],
    *,
    verdict: str,
    reason: str,
    writes: Sequence[ClassifiedWrite] = (),
) -> StopResult:
    """A stop let go without checks: the person is told ``said`` (and ``notes``), the receipt
    closed with ``verdict`` and ``reason``."""
    told = HookAnswer.allow(" ".join([said, *notes]))
    doc = _decision_doc(receipts.event, told, None, None, writes)
    rid = receipts.close(
        receipt_id, verdict=verdict, blocked=False, reason=reason, claim={}, decision_doc=doc
    )
    return StopResult(told, None, verdict, rid, {})


def _confinement_as_started(
    event: HookEvent, space: Workspace, writes: Sequence[ClassifiedWrite], notes: list[str]
) -> HookEvent:
    """``event``, not confined when the session's writes changed the host's sandbox settings
    (read at this stop, they say what the next start of the host will do, not what this one
    did)."""
    if event.confinement is None or not writes:
        return event
    from donegate.session import scanning

    rewritten = scanning.sandbox_rewritten(space, writes)
    if not rewritten:
        return event
    notes.append(
        f"donegate: {', '.join(rewritten)}, the host's sandbox settings, changed in this "
        "session; the host read them when it started, so this stop counts as unconfined."
    )
    return event._replace(confinement=None)


def _refused_unconfined(
    event: HookEvent, settings: Settings, writes: Sequence[ClassifiedWrite]
) -> bool:
    """Whether ``[gate] require_confined`` refuses to verify this stop: it has writes to verify
    and nothing is known to have confined the agent that made them."""
    if event.confinement is not None or not settings.gate.require_confined:
        return False
    return any(reading.gate_kind(w) == "source" for w in writes)


def _signed(claim: Claim | None, space: Workspace) -> Signed:
    """The claim with the evidence donegate collected signed, and the receipt's envelope.

    Signing needs the ``sign`` extra; without it (or with a broken key) the receipt is kept
    unsigned and the person told: a signature never decides a stop.
    """
    if claim is None or not claim.evidence:
        return Signed(claim, None)
    try:
        from donegate.collect import VERIFIER_ID
        from donegate.signing.evidence import sign_claim, sign_collected
        from donegate.signing.keys import signing_key

        key = signing_key(space.layout.state_dir)
        claim = sign_collected(claim, key, VERIFIER_ID)
        return Signed(claim, sign_claim(claim.to_json_dict(), key, space.current.fingerprint))
    except ImportError:
        return Signed(claim, None)
    except Exception as exc:  # an unreadable key must not cost the stop its receipt
        space.notes.append(f"donegate: this receipt is not signed: {describe(exc)}")
        return Signed(claim, None)


class Signed(Record):
    claim: Claim | None
    envelope: dict[str, Any] | None


def _close(
    receipts: Receipts,
    receipt_id: int,
    event: HookEvent,
    told: HookAnswer,
    decision: Decision,
    signed: Signed,
    writes: Sequence[ClassifiedWrite],
    settings: Settings,
) -> StopResult:
    claim = signed.claim
    verdict = claim.verdict.state if claim is not None and claim.verdict is not None else "none"
    claim_doc = claim.to_json_dict() if claim is not None else {}
    rid = receipts.close(
        receipt_id,
        verdict=verdict,
        blocked=told.decision == "block",
        reason=decision.reason,
        claim=claim_doc,
        # The mode the stop was judged under: the report's "what would block have done".
        decision_doc={
            **_decision_doc(event, told, decision, claim, writes),
            "on_unverified": settings.on_unverified,
            **({"dsse": signed.envelope} if signed.envelope else {}),
        },
    )
    return StopResult(told, decision, verdict, rid, claim_doc)


def _decision_doc(
    event: HookEvent,
    told: HookAnswer,
    decision: Decision | None,
    claim: Claim | None,
    writes: Sequence[ClassifiedWrite],
) -> dict[str, Any]:
    return {
        "host_event": event.host_event,
        "continuing": event.continuing,
        "answer": {"decision": told.decision, "reason": told.reason, "notice": told.notice},
        "gate": decision.to_json_dict() if decision else None,
        "writes": [{**w.write.to_json(), "kind": w.kind, "flags": list(w.flags)} for w in writes],
        "failing_count": reading.failing_count(claim) if claim is not None else None,
        # Whether a sandbox kept the agent's commands out of donegate's state, and which.
        "confinement": {"confined": event.confinement is not None, "by": event.confinement},
    }
