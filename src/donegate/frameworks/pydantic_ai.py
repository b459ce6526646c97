"""Pydantic AI: the gate as the agent's output validator, and tools whose calls are mutations.

::

    from pydantic_ai import Agent
    from donegate.frameworks import CompletionGate
    from donegate.frameworks.pydantic_ai import gate_agent

    gate = CompletionGate("donegate.toml", agent="support-bot", host="pydantic-ai")
    agent = Agent(model, retries={"output": gate.max_sendbacks or 8})

    @agent.tool_plain
    @gate.mutation(kind="state_write", target="accounts/{account_id}")
    def update_address(account_id: int, address: str) -> str: ...

    gate_agent(agent, gate)

The agent's final output goes through :meth:`CompletionGate.check`; a run that is not verified
raises ``ModelRetry`` with what is missing, which Pydantic AI sends to the model as a retry. The
retry is counted against the agent's output retries: the validator tells the gate how many are
left, so the run is let go (not verified, on the record) when none are, instead of ending in
Pydantic AI's own "exceeded maximum retries" error. Tools registered elsewhere (a toolset, an MCP
server) are wrapped by :class:`MutationToolset`. Only this module imports Pydantic AI.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.toolsets import AbstractToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from donegate.frameworks._tools import fill
from donegate.frameworks.completion import CompletionGate

T = TypeVar("T")
DepsT = TypeVar("DepsT")
A = TypeVar("A", bound=Agent[Any, Any])

__all__ = ["MutationToolset", "gate_agent", "output_validator", "recorded"]


def output_validator(gate: CompletionGate) -> Callable[[RunContext[Any], T], T]:
    """An output validator that lets the output through only when the gate allows the run.

    A plain function: Pydantic AI runs it in a worker thread (the checks block on I/O), in a
    copy of the run's context, so the run it checks is the one its tools recorded into. Partial
    outputs of a stream are passed through unchecked: only the final one ends the run.
    """

    def validate(ctx: RunContext[Any], output: T) -> T:
        if ctx.partial_output:
            return output
        left = max(ctx.max_retries - ctx.retry, 0)
        outcome = gate.check(_said(output), sendbacks_left=left)
        if outcome.sent_back:
            raise ModelRetry(outcome.message or "The task is not verified yet.")
        return output

    return validate


def gate_agent(agent: A, gate: CompletionGate) -> A:
    """``agent`` with the gate as one of its output validators (added last)."""
    agent.output_validator(output_validator(gate))
    return agent


@dataclass
class MutationToolset(WrapperToolset[DepsT]):
    """A toolset whose named tools record each call as a mutation in the gate's current run.

    ``mutations`` maps a tool's name to ``(kind, target)``; the target is filled from the call's
    validated arguments. The call is recorded when it ended; one that raised, as attempted.
    """

    gate: CompletionGate = field(kw_only=True)
    mutations: Mapping[str, tuple[str, str]] = field(kw_only=True)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[DepsT], tool: ToolsetTool[DepsT]
    ) -> Any:
        spec = self.mutations.get(name)
        if spec is None:
            return await super().call_tool(name, tool_args, ctx, tool)
        kind, template = spec
        target = fill(template, tool_args)
        try:
            result = await super().call_tool(name, tool_args, ctx, tool)
        except BaseException as exc:
            self.gate.run.record(kind, target, name, type(exc).__name__)
            raise
        self.gate.run.record(kind, target, name)
        return result


def recorded(
    toolset: AbstractToolset[DepsT], gate: CompletionGate, mutations: Mapping[str, tuple[str, str]]
) -> MutationToolset[DepsT]:
    """``toolset`` with the calls of the tools named in ``mutations`` recorded (see above)."""
    return MutationToolset(toolset, gate=gate, mutations=dict(mutations))


def _said(output: object) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, BaseModel):
        return output.model_dump_json()
    return repr(output)
