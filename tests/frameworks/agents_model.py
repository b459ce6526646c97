"""A scripted model for the OpenAI Agents SDK: the SDK's own ``Model`` interface, no network.

Each call answers with the next scripted turn and keeps the input the SDK sent, so a test can
assert on what the model was told.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from agents import ModelResponse, Usage
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

Turn = list[Any]


def call(name: str, **arguments: Any) -> Turn:
    """A turn that calls one tool."""
    ident = f"call_{name}_{json.dumps(arguments, sort_keys=True).__hash__() & 0xFFFFFF:x}"
    return [
        ResponseFunctionToolCall(
            id=ident,
            call_id=ident,
            type="function_call",
            name=name,
            arguments=json.dumps(arguments),
        )
    ]


def say(text: str) -> Turn:
    """A turn that answers in words (the agent's final output)."""
    content = ResponseOutputText(text=text, type="output_text", annotations=[])
    message = ResponseOutputMessage(
        id="msg", type="message", role="assistant", status="completed", content=[content]
    )
    return [message]


class ScriptedModel(Model):
    """Answers with the scripted turns in order, then with ``then`` for ever."""

    def __init__(self, *turns: Turn, then: Turn | None = None) -> None:
        self.turns = list(turns)
        self.then = then
        self.inputs: list[list[Any]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        self.inputs.append([input] if isinstance(input, str) else list(input))
        if self.turns:
            output = self.turns.pop(0)
        else:
            assert self.then is not None, "the agent asked the model more often than scripted"
            output = self.then
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests do not stream")

    def told(self, index: int) -> str:
        """The last item of the input of call ``index``, as text (what the user said last)."""
        last = self.inputs[index][-1]
        return str(last.get("content") if isinstance(last, dict) else last)
