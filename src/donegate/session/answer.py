"""The gate's decision and the policy's ``on_unverified`` as the answer a host receives.

One word per side: the gate *allows* or *vetoes*; the host is told to *allow* the stop or
*block* it. A veto becomes a block only under ``on_unverified = "block"``; ``warn`` lets the agent
stop and tells the person; ``record`` only records.
"""

from __future__ import annotations

from collections.abc import Sequence

from donegate.gate import Decision
from donegate.session.event import HookAnswer
from donegate.session.settings import OnUnverified
from donegate.workspace import ClassifiedWrite

_QUIET_ALLOWS = ("verified_after_write", "verified", "no_workspace_write")


def answer_for(
    decision: Decision,
    mode: OnUnverified,
    writes: Sequence[ClassifiedWrite],
    notes: Sequence[str] = (),
) -> HookAnswer:
    """What the host is told; ``notes`` (for the person) ride along in the notice."""
    answer = _answer(decision, mode, _runner_files_note(writes))
    if not notes:
        return answer
    joined = " ".join(notes)
    return answer._replace(notice=f"{answer.notice} {joined}" if answer.notice else joined)


def _answer(decision: Decision, mode: OnUnverified, hooks_note: str) -> HookAnswer:
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
    why = decision.reason
    if decision.converted_from:
        why = f"{decision.reason}, converted from {decision.converted_from}"
    text = f"donegate: this stop is NOT verified ({why})."
    if decision.reason == "verifier_unavailable":
        text = (
            f"donegate: this stop is NOT verified: the checks could not run: {decision.message}. "
            "The agent was not sent back, since it cannot fix this; once it is fixed, the next "
            "stop verifies."
        )
    if decision.reason == "blocks_in_a_row_cap_reached":
        # The host would end the session itself soon: the end is on the record instead.
        text += (
            " The agent was sent back too many times in a row, so it is let go now rather "
            f"than by the host. {decision.message or ''}"
        ).rstrip()
    return f"{text} {hooks_note}".strip()


def _runner_files_note(writes: Sequence[ClassifiedWrite]) -> str:
    flagged = [w.write.path for w in writes if "test-hook" in w.flags]
    if not flagged:
        return ""
    return f"Note: the agent wrote {', '.join(flagged)}, which can change how tests run."
