"""What the judge's wire tests share: a stop the judge is asked about, and how a failure reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from donegate.gate import Decision, Gate, GateContext, GateOptions

GREEN = {"source_write_count": 1, "verify": {"ok": True, "command": "pytest"}}
# Not the sealed final answer: the skip rule does not hold, so the judge is asked.
ASKED = GateContext("s", task="fix the zip bug", text="Fixed it.", stop_reason=None)
DONE = {"verdict": "done", "detail": "looks right"}


def decide(tmp_path: Path, url: str, **judge: Any) -> Decision:
    """One stop, green after a write, judged by the OpenAI-compatible server at ``url``."""
    config = {"provider": "openai", "model": "m", "base_url": url, **judge}
    gate = Gate(GateOptions(judge=config), state_dir=tmp_path / "state")
    return gate.decide("s", GREEN, context=ASKED)


def assert_judge_error(decision: Decision, kind: str) -> None:
    """The stop ended unverified because the judge failed this way."""
    assert decision.reason == "completion_judge_error"
    assert decision.outcome == "not_verified"
    assert decision.judge is not None
    assert (decision.judge.error or "").startswith(kind), decision.judge.error
