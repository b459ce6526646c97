"""The completion gate: may an agent stop now? Decided from facts, never from the agent's words.

::

    from donegate.gate import Gate, GateOptions

    gate = Gate(GateOptions(max_vetoes=3), state_dir="/var/lib/donegate")
    decision = gate.decide("session-1", {"source_write_count": 1, "verify": {"ok": False}})
    if not decision.confirm:
        print(decision.message)

Importing this package stays cheap (no pydantic), and its names are imported on first use (the
judge's modules only where a judge is configured): a hook starts a fresh process at every stop.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from donegate.gate.budget import VetoCounts
    from donegate.gate.core import Gate, Stage
    from donegate.gate.decision import Decision, GateContext, Verification
    from donegate.gate.facts import CompletionFacts, VerifyResult, WriteFact, parse_facts
    from donegate.gate.feedback import DEFAULT_TEMPLATES
    from donegate.gate.judge_answer import JudgeReport
    from donegate.gate.judge_config import JudgeConfig
    from donegate.gate.ladder import Observation, Ruling, Step
    from donegate.gate.options import GateOptions, parse_options
    from donegate.gate.requirements import (
        Ledger,
        Requirement,
        RequirementAssessment,
        RequirementContract,
        RequirementEvidence,
    )
    from donegate.gate.store import GateStore, StateError

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "DEFAULT_TEMPLATES": "donegate.gate.feedback",
    "CompletionFacts": "donegate.gate.facts",
    "Decision": "donegate.gate.decision",
    "Gate": "donegate.gate.core",
    "GateContext": "donegate.gate.decision",
    "GateOptions": "donegate.gate.options",
    "GateStore": "donegate.gate.store",
    "JudgeConfig": "donegate.gate.judge_config",
    "JudgeReport": "donegate.gate.judge_answer",
    "Ledger": "donegate.gate.requirements",
    "Observation": "donegate.gate.ladder",
    "Requirement": "donegate.gate.requirements",
    "RequirementAssessment": "donegate.gate.requirements",
    "RequirementContract": "donegate.gate.requirements",
    "RequirementEvidence": "donegate.gate.requirements",
    "Ruling": "donegate.gate.ladder",
    "Stage": "donegate.gate.core",
    "StateError": "donegate.gate.store",
    "Step": "donegate.gate.ladder",
    "Verification": "donegate.gate.decision",
    "VerifyResult": "donegate.gate.facts",
    "VetoCounts": "donegate.gate.budget",
    "WriteFact": "donegate.gate.facts",
    "parse_facts": "donegate.gate.facts",
    "parse_options": "donegate.gate.options",
}

__all__ = [
    "DEFAULT_TEMPLATES",
    "CompletionFacts",
    "Decision",
    "Gate",
    "GateContext",
    "GateOptions",
    "GateStore",
    "JudgeConfig",
    "JudgeReport",
    "Ledger",
    "Observation",
    "Requirement",
    "RequirementAssessment",
    "RequirementContract",
    "RequirementEvidence",
    "Ruling",
    "Stage",
    "StateError",
    "Step",
    "Verification",
    "VerifyResult",
    "VetoCounts",
    "WriteFact",
    "parse_facts",
    "parse_options",
]


def __getattr__(name: str) -> Any:
    # The first use of a name imports its module and keeps the name here.
    if name not in _EXPORTS:
        raise AttributeError(f"module 'donegate.gate' has no attribute {name!r}")
    globals()[name] = found = getattr(importlib.import_module(_EXPORTS[name]), name)
    return found


def __dir__() -> list[str]:
    return sorted(__all__)
