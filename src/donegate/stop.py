"""May the agent stop now? The gate over a workspace, for any host.

At a stop: the writes since the last verified snapshot, classified -> if source was written, a
claim (one mutation per write) whose evidence donegate collects itself, and its verdict -> the
gate's facts (writes, the verify reading, the failure streak from the session's receipts) -> the
ladder decides -> the policy's ``on_unverified`` says what a stop that is not verified does ->
a receipt in the ledger, whatever happened.

A stop that changed nothing costs a snapshot and a gate decision: the claim models, the
collectors and their libraries are imported only when there is something to verify.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from donegate import gitlisting
from donegate.errors import InvalidInput
from donegate.gate import Decision, Gate, GateOptions
from donegate.gate.table import GateTable, parse_gate_table
from donegate.hooks.event import HookAnswer, HookEvent
from donegate.ledger import Ledger
from donegate.pinned import CONFIG_FILE, pin, pinned
from donegate.workspace import ClassifiedWrite, Reported, Rules, Snapshot, WorkspaceState
from donegate.workspace.snapshot import rfc3339

if TYPE_CHECKING:
    from donegate.claim import Claim

OnUnverified = Literal["block", "warn", "record"]
# Writes that count as a source change for the gate: build configuration can break a build too.
_SOURCE_KINDS = {"source": "source", "config": "source", "cosmetic": "cosmetic"}
_VERIFIED_REASONS = ("verified_after_write", "verified")
_QUIET_ALLOWS = (*_VERIFIED_REASONS, "no_workspace_write")
MAX_FINDINGS_CHARS = 1500
MAX_COMMANDS_KEPT = 50
LET_GO = "max_blocks_in_a_row"
_MODES: dict[object, OnUnverified] = {"block": "block", "warn": "warn", "record": "record"}


class StopSettings(NamedTuple):
    """What ``donegate.toml`` says about stops, read without the collectors' models."""

    root: Path
    config_text: str | None
    gate: GateTable
    rules: Rules
    on_unverified: OnUnverified
    has_checks: bool
    config_changed: bool = False

    @property
    def ignore(self) -> tuple[str, ...]:
        return self.gate.ignore


class StopResult(NamedTuple):
    """What the gate decided at a stop, what the host is told, and the receipt's id."""

    answer: HookAnswer
    decision: Decision | None
    verdict: str
    receipt_id: int | None = None
    claim: dict[str, Any] | None = None


def workspace_root(cwd: Path) -> Path:
    """The repository's top level when ``cwd`` is in one, else ``cwd`` itself."""
    return gitlisting.toplevel(cwd) or cwd.resolve()


def session_settings(state_dir: Path, root: Path, session_id: str) -> StopSettings:
    """The settings this session is judged by: its pinned ``donegate.toml`` (see ``pinned``)."""
    config = pinned(state_dir, root, session_id)
    return read_settings(root, config.text, changed=config.changed, parsed=config.parsed)


def read_settings(
    root: Path, text: str | None, *, changed: bool = False, parsed: dict[str, Any] | None = None
) -> StopSettings:
    """The stop-relevant parts of a ``donegate.toml`` text (``parsed``: its TOML, when known)."""
    path = root / CONFIG_FILE
    if text is None:
        return StopSettings(root, None, GateTable(), Rules(), "block", False, changed)
    try:
        raw = parsed if parsed is not None else _toml(text)
        table = parse_gate_table(raw.get("gate"))
        mode = _on_unverified(raw.get("policy"))
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: {exc}", exc.path) from None
    checks = bool(raw.get("checks"))
    return StopSettings(root, text, table, _rules(table), mode, checks, changed)


def _toml(text: str) -> dict[str, Any]:
    import tomllib  # only when no pinned parse exists: a stop rarely needs the TOML parser

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"not valid TOML: {exc}") from None


def _on_unverified(policy: object) -> OnUnverified:
    mode = policy.get("on_unverified", "block") if isinstance(policy, dict) else "block"
    if mode not in _MODES:
        raise InvalidInput("must be block, warn or record", path="policy.on_unverified")
    return _MODES[mode]


def _rules(table: GateTable) -> Rules:
    defaults = Rules()
    return Rules(
        test_globs=table.test_paths or defaults.test_globs,
        doc_globs=table.doc_paths or defaults.doc_globs,
        config_globs=defaults.config_globs,
    )


def gate_options(settings: StopSettings) -> GateOptions:
    """The gate's options: the team's [gate] table; interactive hosts don't require a write."""
    return settings.gate.gate_options(requires_write=False)


@contextmanager
def session_lock(state_dir: Path, session_id: str) -> Iterator[None]:
    """One stop at a time per session: hosts run matching hooks in parallel."""
    locks = state_dir / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:100]
    with (locks / f"{name}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def on_stop(event: HookEvent, state_dir: Path) -> StopResult:
    """Decide a stop event: the whole pipeline, under the session's lock."""
    root = workspace_root(event.cwd)
    with session_lock(state_dir, event.session_id):
        settings = session_settings(state_dir, root, event.session_id)
        return _decide(event, settings, state_dir)


def _decide(event: HookEvent, settings: StopSettings, state_dir: Path) -> StopResult:
    """1. background work still running: let it stop, check at the next stop.
    2. the writes since the last verified snapshot, classified.
    3. a source write: build the claim, collect the evidence, verify.
    4. the gate decides from the writes, the reading and the streak.
    5. ``on_unverified`` shapes the answer; the receipt is recorded.
    """
    workspace = WorkspaceState(state_dir, settings.root, event.session_id, ignore=settings.ignore)
    if event.background_tasks:
        notice = "donegate: background tasks are still running; this stop was not checked."
        return _record(event, settings, state_dir, HookAnswer.allow(notice), None, None, [])
    current = workspace.snapshot()
    writes = workspace.classified_since_verified(settings.rules, current)
    source = [w for w in writes if _gate_kind(w) == "source"]
    claim = _verify(event, settings, writes, _reported(workspace)) if source else None
    if not source and workspace.has_verified():
        facts = _still_verified(writes)
    else:
        facts = _facts(writes, claim if settings.has_checks else None, event, state_dir)
    gate = Gate(gate_options(settings), state_dir=state_dir)
    decision = gate.decide(event.session_id, facts)
    verified = claim is not None and claim.verdict is not None and claim.verdict.state == "verified"
    if verified:
        workspace.mark_verified(current)
    answer = _with_note(_answer(decision, settings.on_unverified, claim, writes), settings)
    cap = settings.gate.max_blocks_in_a_row
    if answer.decision == "block" and _blocked_in_a_row(event, state_dir) + 1 >= cap:
        answer = _let_go(decision, cap)
        return _record(event, settings, state_dir, answer, decision, claim, writes, LET_GO)
    return _record(event, settings, state_dir, answer, decision, claim, writes)


def _with_note(answer: HookAnswer, settings: StopSettings) -> HookAnswer:
    if not settings.config_changed:
        return answer
    note = (
        f"{CONFIG_FILE} was changed during this session; this stop was judged by the "
        "configuration the session started with."
    )
    notice = f"{answer.notice} {note}" if answer.notice else f"donegate: {note}"
    return answer._replace(notice=notice)


def _blocked_in_a_row(event: HookEvent, state_dir: Path) -> int:
    """How many of this session's latest stops were blocked, back to the last one let go."""
    with Ledger(state_dir) as ledger:
        recent = ledger.recent(limit=50, session=event.session_id)
    return next((i for i, r in enumerate(recent) if r.decision != "veto"), len(recent))


def _let_go(decision: Decision, cap: int) -> HookAnswer:
    # Soft and strict budgets are separate; together they could block past the host's own loop
    # cap (Claude Code force-ends a turn after about 8 blocks), which ends the session silently.
    return HookAnswer.allow(
        f"donegate: this stop is NOT verified ({decision.reason}); the agent was sent back "
        f"{cap - 1} times in a row, so it is let go now rather than by the host. "
        f"{decision.message or ''}".strip()
    )


def _gate_kind(write: ClassifiedWrite) -> str:
    return _SOURCE_KINDS.get(write.kind, write.kind)


def _reported(workspace: WorkspaceState) -> list[Reported]:
    """What the host's tool hooks reported since the writes being verified began."""
    return workspace.journal.entries(since=workspace.reference().taken_at)


def _verify(
    event: HookEvent,
    settings: StopSettings,
    writes: Sequence[ClassifiedWrite],
    reported: Sequence[Reported],
) -> Claim:
    """The claim of this stop, with the configured checks' evidence and its verdict.

    Without checks the claim still gets a verdict (unverified: nothing observed it), so that the
    receipt says what was written and that nothing confirmed it.
    """
    # Imported here: the claim models and the collectors are only needed when there is a write.
    from donegate.collect import collect
    from donegate.config import parse_config
    from donegate.verdict import verify_claim

    claim = _claim(event, writes, reported)
    if settings.config_text is None or not settings.has_checks:
        return verify_claim(claim)
    source = str(settings.root / CONFIG_FILE)
    config = parse_config(settings.config_text, base_dir=settings.root, source=source)
    return collect(claim, config)


def _claim(
    event: HookEvent, writes: Sequence[ClassifiedWrite], reported: Sequence[Reported]
) -> Claim:
    """One mutation per write, timed when donegate's snapshot saw it (never by its mtime).

    What the host's tool hooks reported rides along for the record: which tools wrote a file
    and when they first said so, and the shell commands run meanwhile.
    """
    from donegate.claim import parse_claim

    mutations = [
        {
            "id": f"w{i}",
            "kind": f"file_{w.write.change}",
            "target": w.write.path,
            "at": rfc3339(w.write.observed_at),
            "write_kind": w.kind,
            **({"flags": list(w.flags)} if w.flags else {}),
            **_reports(w.write.path, reported),
        }
        for i, w in enumerate(writes, start=1)
    ]
    commands = [r.command for r in reported if r.command][-MAX_COMMANDS_KEPT:]
    return parse_claim(
        {
            "spec_version": "0.1",
            "task": {"id": event.session_id, "requested_by": event.host},
            "claimed_outcome": (event.last_message or "(the agent said nothing)")[:4000],
            "mutations": mutations,
            **({"shell_commands": commands} if commands else {}),
        }
    )


def _reports(path: str, reported: Sequence[Reported]) -> dict[str, Any]:
    mine = [r for r in reported if r.path == path]
    if not mine:
        return {}
    return {
        "reported_by": sorted({r.tool for r in mine}),
        "first_reported_at": rfc3339(min(r.at for r in mine)),
    }


def _facts(
    writes: Sequence[ClassifiedWrite], claim: Claim | None, event: HookEvent, state_dir: Path
) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "writes": [{"path": w.write.path, "kind": _gate_kind(w)} for w in writes]
    }
    if claim is None or claim.verdict is None:
        return facts
    ok = claim.verdict.state == "verified"
    facts["verify"] = {
        "ok": ok,
        "findings": None if ok else findings(claim),
        "command": _checks(claim),
    }
    streak, converging = _streak(claim, event, state_dir, ok)
    if streak > 1:
        # A first failure reads as "fails after your change"; from the second, as a streak.
        facts["consecutive_failed_after_write"] = streak
        facts["verification_failures_converging"] = converging
    return facts


def _still_verified(writes: Sequence[ClassifiedWrite]) -> dict[str, Any]:
    """Nothing but cosmetics, docs or tests since a verified stop: that verification still holds.

    A verified snapshot is only ever marked after source writes verified, so the session has made
    its source change; a comment edited since cannot flip a green run back to unverified.
    """
    cosmetic = sum(1 for w in writes if w.kind == "cosmetic")
    return {
        "source_write_count": 1,
        "cosmetic_write_count": cosmetic,
        "verify": {"ok": True, "command": "no source change since the last verified stop"},
    }


def findings(claim: Claim) -> str:
    """What the agent is told went wrong, check by check: failing tests by name where known."""
    assert claim.verdict is not None
    parts = [_finding_text(claim, f.index) for f in claim.verdict.evidence if f.outcome != "match"]
    text = "; ".join(p for p in parts if p) or (claim.verdict.reason or "the claim is not verified")
    return text if len(text) <= MAX_FINDINGS_CHARS else text[: MAX_FINDINGS_CHARS - 3] + "..."


def _finding_text(claim: Claim, index: int) -> str:
    item = claim.evidence[index]
    detail = getattr(item, "detail", None)
    detail = detail if isinstance(detail, dict) else {}
    label = detail.get("check") or f"{item.check_type} {item.target}"
    failing = detail.get("failing")
    if isinstance(failing, list) and failing:
        return f"{label}: {', '.join(map(str, failing))} failed after your last edit"
    why = detail.get("why_not_counted")
    if isinstance(why, str):
        return f"{label} does not count: {why}"
    tail = detail.get("output_tail")
    last = _last_lines(tail) if isinstance(tail, str) else ""
    observed = json.dumps(item.observed_value)
    return f"{label} observed {observed}, expected {json.dumps(item.expected)}{last}"


def _last_lines(text: str, count: int = 6) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()][-count:]
    return ("; output ends: " + " | ".join(lines)) if lines else ""


def _checks(claim: Claim) -> str:
    return ", ".join(dict.fromkeys(f"{e.check_type} {e.target}" for e in claim.evidence))


def _failing_count(claim: Claim) -> int | None:
    total = None
    for item in claim.evidence:
        observed = item.observed_value
        if item.check_type == "test_run" and isinstance(observed, dict):
            counts = [observed.get(k) for k in ("failed", "errors")]
            if all(isinstance(c, int) for c in counts):
                total = (total or 0) + sum(c for c in counts if isinstance(c, int))
    return total


def _streak(claim: Claim, event: HookEvent, state_dir: Path, ok: bool) -> tuple[int, bool]:
    """Failed verifications in a row (this one included) and whether failures are shrinking."""
    if ok:
        return 0, False
    with Ledger(state_dir) as ledger:
        history = ledger.recent(limit=50, session=event.session_id)
    streak, previous = 1, None
    for receipt in history:
        ran = bool(receipt.claim.get("evidence"))
        if not ran:
            continue
        if receipt.verdict == "verified":
            break
        streak += 1
        if previous is None:
            previous = (receipt.decision_doc or {}).get("failing_count")
    now = _failing_count(claim)
    converging = isinstance(previous, int) and now is not None and now < previous
    return streak, converging


def _answer(
    decision: Decision,
    mode: OnUnverified,
    claim: Claim | None,
    writes: Sequence[ClassifiedWrite],
) -> HookAnswer:
    hooks_note = _runner_files_note(writes)
    if decision.confirm:
        if decision.reason in _QUIET_ALLOWS and not hooks_note:
            return HookAnswer.allow()
        return HookAnswer.allow(_notice_for_allow(decision, hooks_note))
    message = decision.message or decision.reason
    if mode == "block":
        return HookAnswer.block(message, notice=f"donegate sent the agent back: {decision.reason}")
    if mode == "warn":
        return HookAnswer.allow(
            f"donegate: this stop is NOT verified ({decision.reason}). {message}"
        )
    return HookAnswer.allow()


def _notice_for_allow(decision: Decision, hooks_note: str) -> str:
    if decision.reason in _QUIET_ALLOWS:
        return f"donegate: {hooks_note}"
    why = (
        decision.reason
        if not decision.converted_from
        else (f"{decision.reason}, converted from {decision.converted_from}")
    )
    text = f"donegate: this stop is NOT verified ({why})."
    return f"{text} {hooks_note}".strip()


def _runner_files_note(writes: Sequence[ClassifiedWrite]) -> str:
    flagged = [w.write.path for w in writes if "test-hook" in w.flags]
    if not flagged:
        return ""
    return f"Note: the agent wrote {', '.join(flagged)}, which can change how tests run."


def _record(
    event: HookEvent,
    settings: StopSettings,
    state_dir: Path,
    answer: HookAnswer,
    decision: Decision | None,
    claim: Claim | None,
    writes: Sequence[ClassifiedWrite],
    reason: str | None = None,
) -> StopResult:
    verdict = claim.verdict.state if claim is not None and claim.verdict is not None else "none"
    claim_doc = claim.to_json_dict() if claim is not None else {}
    decision_doc = _decision_doc(event, answer, decision, claim, writes)
    with Ledger(state_dir) as ledger:
        receipt_id = ledger.record(
            session_id=event.session_id,
            host=event.host,
            workspace=settings.root,
            verdict=verdict,
            decision="veto" if answer.decision == "block" else "allow",
            reason=reason or (decision.reason if decision else "background_tasks"),
            claim=claim_doc,
            decision_doc=decision_doc,
        )
    return StopResult(answer, decision, verdict, receipt_id, claim_doc)


def _decision_doc(
    event: HookEvent,
    answer: HookAnswer,
    decision: Decision | None,
    claim: Claim | None,
    writes: Sequence[ClassifiedWrite],
) -> dict[str, Any]:
    return {
        "host_event": event.host_event,
        "continuing": event.continuing,
        "answer": {"decision": answer.decision, "reason": answer.reason, "notice": answer.notice},
        "gate": decision.to_json_dict() if decision else None,
        "writes": [{**w.write.to_json(), "kind": w.kind, "flags": list(w.flags)} for w in writes],
        "failing_count": _failing_count(claim) if claim is not None else None,
    }


def baseline(event: HookEvent, state_dir: Path) -> Snapshot:
    """Session start or a new prompt: the tree as it is now becomes the baseline, if none is set.

    A later prompt in the same session keeps the first baseline: the agent's unverified writes
    from an earlier turn stay writes.
    """
    root = workspace_root(event.cwd)
    with session_lock(state_dir, event.session_id):
        pin(state_dir, root, event.session_id)
        settings = session_settings(state_dir, root, event.session_id)
        workspace = WorkspaceState(state_dir, root, event.session_id, ignore=settings.ignore)
        return workspace.ensure_baseline()
