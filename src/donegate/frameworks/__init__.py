"""Completion gates for agents built with a Python framework, and for plain Python agents.

An agent that changes systems of record (an account, a deployment) finishes only when the
team's checks read the change back::

    from donegate.frameworks import CompletionGate

    gate = CompletionGate("donegate.toml", agent="support-bot", task="Move account 4471")
    outcome = gate.check("Updated the address of account 4471.")

One module per framework holds its adapter, and is the only one to import that framework:
``donegate.frameworks.pydantic_ai`` (extra ``pydantic-ai``), ``.openai_agents``
(``openai-agents``), ``.langgraph`` (``langgraph``). Importing this package imports none.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from donegate.frameworks.completion import CompletionGate, Run
    from donegate.frameworks.outcome import NotVerified, Outcome

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "CompletionGate": "donegate.frameworks.completion",
    "NotVerified": "donegate.frameworks.outcome",
    "Outcome": "donegate.frameworks.outcome",
    "Run": "donegate.frameworks.completion",
}

__all__ = ["CompletionGate", "NotVerified", "Outcome", "Run"]


def __getattr__(name: str) -> Any:
    # The first use of a name imports its module and keeps the name here.
    if name not in _EXPORTS:
        raise AttributeError(f"module 'donegate.frameworks' has no attribute {name!r}")
    globals()[name] = found = getattr(importlib.import_module(_EXPORTS[name]), name)
    return found


def __dir__() -> list[str]:
    return sorted(__all__)
