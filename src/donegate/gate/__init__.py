"""The completion gate: may an agent stop now? Decided from facts, never from the agent's words.

::

    from donegate.gate import Gate, GateOptions

    gate = Gate(GateOptions(max_vetoes=3), state_dir="/var/lib/donegate")
    decision = gate.decide("session-1", {"source_write_count": 1, "verify": {"ok": False}})
    if not decision.confirm:
        print(decision.message)

Importing this package stays cheap (no pydantic): a hook starts a fresh process at every stop.
"""

from __future__ import annotations

from donegate.gate.budget import VetoCounts
from donegate.gate.core import Decision, Gate, GateContext, Stage, Verification
from donegate.gate.facts import CompletionFacts, VerifyResult, WriteFact, parse_facts
from donegate.gate.feedback import DEFAULT_TEMPLATES
from donegate.gate.judge import JudgeReport
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
