"""Host adapters: one small module per agent, translating its hook payloads and answers.

Each adapter module exposes ``NAME``, ``EVENTS``, ``parse(payload) -> HookEvent`` and
``render(answer, event) -> HostOutput``; the registry maps a host name to its module, imported only
when that host's hook runs.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from donegate.session.event import HookAnswer, HookEvent, HostOutput

TYPE_CHECKING = False
if TYPE_CHECKING:  # a type, not a class the hook defines at every stop
    from typing import Any, Protocol

    class HostAdapter(Protocol):
        """What every host adapter module provides."""

        NAME: str
        EVENTS: tuple[str, ...]

        def parse(self, payload: Any, *, fallback_cwd: Path | None = None) -> HookEvent: ...

        def render(self, answer: HookAnswer, event: HookEvent) -> HostOutput: ...


ADAPTERS: dict[str, str] = {
    "claude-code": "donegate.hooks.claude_code",
    "copilot": "donegate.hooks.copilot",
    "codex": "donegate.hooks.codex",
    "cursor": "donegate.hooks.cursor",
    "gemini-cli": "donegate.hooks.gemini_cli",
}


def adapter(host: str) -> HostAdapter:
    """The adapter module for ``host``; KeyError names the hosts there are."""
    if host not in ADAPTERS:
        raise KeyError(f"unknown host {host!r}; known: {', '.join(sorted(ADAPTERS))}")
    module: HostAdapter = importlib.import_module(ADAPTERS[host])
    return module
