"""donegate: check an AI agent's completion claim against the world.

The public surface is listed in ``__all__``; everything else is internal and may change. Names are
imported on first use, so that a hook process that needs only the gate never pays for the models.
"""

from __future__ import annotations

import importlib

from donegate.__about__ import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from donegate.claim import (
        Claim,
        Evidence,
        EvidenceFinding,
        Mutation,
        Task,
        Verdict,
        Verifier,
        json_schema,
        load_claim,
        parse_claim,
    )
    from donegate.errors import DonegateError, InternalError, InvalidInput
    from donegate.exitcodes import ExitCode
    from donegate.instant import Instant
    from donegate.policy import AppliedPolicy, Policy
    from donegate.verdict import VerifyOptions, decide, verify_claim

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "AppliedPolicy": "donegate.policy",
    "Claim": "donegate.claim",
    "DonegateError": "donegate.errors",
    "Evidence": "donegate.claim",
    "EvidenceFinding": "donegate.claim",
    "ExitCode": "donegate.exitcodes",
    "Instant": "donegate.instant",
    "InternalError": "donegate.errors",
    "InvalidInput": "donegate.errors",
    "Mutation": "donegate.claim",
    "Policy": "donegate.policy",
    "Task": "donegate.claim",
    "Verdict": "donegate.claim",
    "Verifier": "donegate.claim",
    "VerifyOptions": "donegate.verdict",
    "decide": "donegate.verdict",
    "json_schema": "donegate.claim",
    "load_claim": "donegate.claim",
    "parse_claim": "donegate.claim",
    "verify_claim": "donegate.verdict",
}

__all__ = [
    "AppliedPolicy",
    "Claim",
    "DonegateError",
    "Evidence",
    "EvidenceFinding",
    "ExitCode",
    "Instant",
    "InternalError",
    "InvalidInput",
    "Mutation",
    "Policy",
    "Task",
    "Verdict",
    "Verifier",
    "VerifyOptions",
    "__version__",
    "decide",
    "json_schema",
    "load_claim",
    "parse_claim",
    "verify_claim",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'donegate' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
