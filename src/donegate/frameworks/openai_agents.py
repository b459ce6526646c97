"""OpenAI Agents SDK: the gate as an output guardrail, and a runner that sends the agent back.

::

    from agents import Agent, function_tool
    from donegate.frameworks import CompletionGate
    from donegate.frameworks.openai_agents import run_gated

    gate = CompletionGate("donegate.toml", agent="deploy-bot", host="openai-agents")

    @function_tool
    @gate.mutation(kind="deploy", target="services/{service}")
    def deploy(service: str, version: str) -> str: ...

    result = await run_gated(Agent(name="deploy-bot", tools=[deploy]), "Deploy api 1.4.2", gate)

A guardrail's tripwire ends the SDK's run; it cannot send the agent back. :func:`run_gated` does
that: it runs the agent with :func:`completion_guardrail` and, when the gate sends the run back,
runs it again from where it stopped (the items so far) with the gate's reason as the next user
message, until the gate lets it go: verified, or the budget is spent (not verified, on the
record). The guardrail alone suits an application that handles the tripwire itself. Streamed
runs are not gated. Only this module imports the SDK.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from agents import (
    Agent,
    GuardrailFunctionOutput,
    ItemHelpers,
    OutputGuardrail,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    RunContextWrapper,
    Runner,
    RunResult,
    TResponseInputItem,
)

from donegate.errors import InternalError
from donegate.frameworks.completion import CompletionGate
from donegate.frameworks.outcome import Outcome

__all__ = ["GUARDRAIL_NAME", "completion_guardrail", "run_gated"]

GUARDRAIL_NAME = "donegate_completion"
DEFAULT_MAX_SENDBACKS = 8  # when the team's budgets leave the number of sendbacks unbounded


def completion_guardrail(
    gate: CompletionGate, *, sendbacks_left: int | None = None
) -> OutputGuardrail[Any]:
    """An output guardrail that trips when the gate sends the run back.

    The tripwire's ``output_info`` is the :class:`~donegate.frameworks.Outcome` (its ``message``
    is what the agent should be told). The check runs in a worker thread, in a copy of the run's
    context, so that it blocks no other task and checks the run its tools recorded into.
    """

    async def check(
        ctx: RunContextWrapper[Any], agent: Agent[Any], output: Any
    ) -> GuardrailFunctionOutput:
        said = output if isinstance(output, str) else repr(output)
        outcome = await asyncio.to_thread(gate.check, said, sendbacks_left=sendbacks_left)
        return GuardrailFunctionOutput(output_info=outcome, tripwire_triggered=outcome.sent_back)

    return OutputGuardrail(guardrail_function=check, name=GUARDRAIL_NAME)


async def run_gated(
    agent: Agent[Any],
    input: str | list[TResponseInputItem],
    gate: CompletionGate,
    *,
    run_config: RunConfig | None = None,
    max_sendbacks: int | None = None,
    **runner: Any,
) -> RunResult:
    """Run ``agent`` until the gate lets it go; each sendback runs it again with the reason.

    ``max_sendbacks`` bounds the re-runs (default: the team's budgets, :attr:`max_sendbacks`,
    else 8); at the last one the gate lets a veto go as ``blocks_in_a_row_cap_reached``, not
    verified. Other keyword arguments go to ``Runner.run`` (``context``, ``max_turns``, ...).
    A strict gate raises :class:`~donegate.frameworks.NotVerified` out of the run.
    """
    limit = max_sendbacks if max_sendbacks is not None else gate.max_sendbacks
    limit = DEFAULT_MAX_SENDBACKS if limit is None else limit
    items = input
    for sent in range(limit + 1):
        guard = completion_guardrail(gate, sendbacks_left=limit - sent)
        config = _with_guardrail(run_config or RunConfig(), guard)
        try:
            return await Runner.run(agent, items, run_config=config, **runner)
        except OutputGuardrailTripwireTriggered as exc:
            outcome = exc.guardrail_result.output.output_info
            if exc.guardrail_result.guardrail is not guard or not isinstance(outcome, Outcome):
                raise  # another guardrail's tripwire: the application's to handle
            items = _continued(exc, items, outcome)
    # The last check was told no sendback is left, so the gate let the run go.
    raise InternalError(f"run_gated: the gate sent the run back more than {limit} times")


def _with_guardrail(config: RunConfig, guard: OutputGuardrail[Any]) -> RunConfig:
    return dataclasses.replace(config, output_guardrails=[*(config.output_guardrails or []), guard])


def _continued(
    exc: OutputGuardrailTripwireTriggered,
    before: str | list[TResponseInputItem],
    outcome: Outcome,
) -> list[TResponseInputItem]:
    """The next run's input: the run so far, then the gate's reason as the user's next word."""
    data = exc.run_data
    if data is not None:
        history = ItemHelpers.input_to_new_input_list(data.input)
        history += [item.to_input_item() for item in data.new_items]
    else:  # no record of the run: what it was given, and what it answered
        history = ItemHelpers.input_to_new_input_list(before)
        said = exc.guardrail_result.agent_output
        history.append({"role": "assistant", "content": str(said)})
    reason = outcome.message or "The task is not verified yet."
    history.append({"role": "user", "content": reason})
    return history
