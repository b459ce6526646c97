"""What a judge answers, and what the receipt records of it: the answer's strict reading, the
one failure of a judge call, and the report.

Apart from the stage (:mod:`.judge`) and the client (:mod:`.judge_client`), which both read
answers: neither imports the other for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from donegate.gate.requirements import JUDGE_EVIDENCE, RequirementAssessment
from donegate.record import Record

GAP_CLASSES = (
    "missing_artifact",
    "unmet_manner_clause",
    "failed_verification",
    "unresolved_authorization",
    "other",
)


class JudgeFailure(Exception):
    """No usable answer: ``kind`` is timeout, transport, http, too_large, refused or malformed."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class JudgeAnswer(Record):
    """The judge's structured answer, validated. ``gap_class`` absent or unknown reads ``other``."""

    verdict: str
    detail: str
    gap_class: str
    requirements: tuple[RequirementAssessment, ...] = ()

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "detail": self.detail,
            "gap_class": self.gap_class,
            "requirements": [r._asdict() for r in self.requirements],
        }


def strict_json(text: str | bytes, what: str) -> Any:
    """``text`` as JSON, refusing a key given twice (which one would count is anyone's guess).

    Anything that is not such JSON, nested too deep for the decoder included, is ``malformed``.
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError) as exc:
        raise JudgeFailure("malformed", f"{what} is not JSON: {_reason(exc)}") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key[:50]!r} is given twice, expected once")
        found[key] = value
    return found


def _reason(exc: Exception) -> str:
    return "nested too deep" if isinstance(exc, RecursionError) else str(exc)[:200]


def _unfenced(text: str) -> str:
    """The text inside a Markdown code fence (```json ... ```), else the text as it is.

    Sliced, not matched: a backtracking pattern took 55 s on a fence holding 4,000 spaces.
    """
    body = text.strip()
    if len(body) < 6 or not (body.startswith("```") and body.endswith("```")):
        return text
    inner = body[3:-3]
    return inner.removeprefix("json")


def parse_answer(text: str, judge_rows: frozenset[str]) -> JudgeAnswer:
    """The answer's JSON object -> :class:`JudgeAnswer`; anything else is ``malformed``.

    An unknown ``verdict`` is malformed, never an approval, and so is a key given twice. Rows
    not the judge's to assess are dropped: the judge cannot meet a check's or the output's row.
    """
    data = strict_json(_unfenced(text), "the answer")
    if not isinstance(data, dict):
        raise JudgeFailure("malformed", "the answer is not a JSON object")
    verdict = data.get("verdict")
    if verdict not in ("done", "continue"):
        raise JudgeFailure("malformed", f"verdict {verdict!r}, expected done or continue")
    detail = data.get("detail")
    if detail is not None and not isinstance(detail, str):
        raise JudgeFailure("malformed", "detail is not text")
    gap = data.get("gap_class")
    gap_class = gap if gap in GAP_CLASSES else "other"
    rows = _assessments(data.get("requirements"), judge_rows)
    return JudgeAnswer(verdict, detail or "", gap_class, rows)


def _assessments(value: object, judge_rows: frozenset[str]) -> tuple[RequirementAssessment, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise JudgeFailure("malformed", "requirements is not a list")
    found = []
    for item in value:
        if not isinstance(item, dict) or item.get("id") not in judge_rows:
            continue
        met = item.get("met") if isinstance(item.get("met"), bool) else None
        detail = item.get("detail") if isinstance(item.get("detail"), str) else None
        found.append(RequirementAssessment(item["id"], met, (JUDGE_EVIDENCE,), detail))
    return tuple(found)


class JudgeReport(Record):
    """What the receipt records about the judge: whether it ran, what it saw and said."""

    seam: str
    invoked: bool
    outcome: str
    source: str
    skip_clauses: Mapping[str, bool]
    answer: JudgeAnswer | None = None
    converted_from: str | None = None
    error: str | None = None
    invocation: int | None = None
    cap: int | None = None
    status: str | None = None
    shown: Mapping[str, Any] | None = None

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "seam": self.seam,
            "invoked": {"deterministic": self.skip_clauses["gate_ran"], self.seam: self.invoked},
            "outcome": self.outcome,
            "source": self.source,
            "skip_clauses": dict(self.skip_clauses),
            "answer": self.answer.to_json_dict() if self.answer else None,
            "converted_from": self.converted_from,
            "error": self.error,
            "invocation": self.invocation,
            "cap": self.cap,
            "status": self.status,
            "shown": dict(self.shown) if self.shown is not None else None,
            "selected_actions": _selected_actions(self.shown),
        }


def _selected_actions(shown: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """What went into the packet, and with which evidence role (empty: no packet was built)."""
    if shown is None:
        return []
    roles = {"task": "user_prompt", "diff": "workspace_write", "final_message": "assistant_output"}
    actions = [{"action": k, "role": r} for k, r in roles.items() if shown.get(k)]
    if shown["verification"]["observed"] != "not_run":
        actions.append({"action": "verification", "role": "verifier"})
    actions += [{"action": "assess", "role": "judge", "id": i} for i in shown["assess"]]
    return actions


# --- the stage ---------------------------------------------------------------------------------
