"""LangGraph: a verify node, and the edge that sends the graph back to the agent until it may end.

::

    from langgraph.graph import END, START, MessagesState, StateGraph
    from donegate.frameworks import CompletionGate
    from donegate.frameworks.langgraph import add_verification

    gate = CompletionGate("donegate.toml", agent="support-bot", host="langgraph")
    builder = StateGraph(MessagesState)
    builder.add_node("agent", call_model)
    builder.add_node("tools", ToolNode([update_address]))   # tools wrapped by gate.mutation
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", to_tools_or_verify, ["tools", "verify"])
    builder.add_edge("tools", "agent")
    add_verification(builder, gate, back="agent")             # "verify" -> "agent" | END

The verify node checks the run's end (:meth:`CompletionGate.check`) with the agent's last
message as its claim. Sent back, it adds the gate's reason to the messages as the user's next
word, and the edge routes to the agent node; let go (verified, or not verified once the budget
is spent), the edge routes to the end. For a state without ``messages``, give ``said`` (the
claim, read from the state) and ``feedback`` (the update that tells the agent). Only this
module imports LangGraph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.graph import END, StateGraph

from donegate.frameworks.completion import CompletionGate
from donegate.frameworks.outcome import Outcome

__all__ = ["DEFAULT_MAX_SENDBACKS", "add_verification", "after_verify", "verify_node"]

DEFAULT_MAX_SENDBACKS = 8  # when the team's budgets leave the number of sendbacks unbounded
State = Any  # the graph's own state: a mapping with "messages", unless said and feedback say


def verify_node(
    gate: CompletionGate,
    *,
    said: Callable[[State], str] | None = None,
    feedback: Callable[[Outcome], dict[str, Any]] | None = None,
    max_sendbacks: int | None = None,
) -> Callable[[State], dict[str, Any]]:
    """A node that checks the run's end and, sent back, tells the agent why.

    ``max_sendbacks`` bounds the times the node sends a run back (default: the team's budgets,
    else 8); past it a veto is let go, not verified, on the record.
    """
    read = said or _last_message
    tell = feedback or _as_message

    def verify(state: State) -> dict[str, Any]:
        run = gate.run
        limit = max_sendbacks if max_sendbacks is not None else gate.max_sendbacks
        limit = DEFAULT_MAX_SENDBACKS if limit is None else limit
        # Every earlier check of this run sent it back: an allow ends the run.
        outcome = gate.check(read(state), sendbacks_left=limit - run.attempts)
        return tell(outcome) if outcome.sent_back else {}

    return verify


def after_verify(gate: CompletionGate, *, back: str, done: str = END) -> Callable[[State], str]:
    """The edge out of the verify node: to ``back`` when the run was sent back, else ``done``."""

    def route(state: State) -> str:
        last = gate.run.last
        if last is None:
            raise RuntimeError("the verify node has not checked this run")
        return back if last.sent_back else done

    return route


def add_verification(
    builder: StateGraph[Any, Any, Any, Any],
    gate: CompletionGate,
    *,
    back: str,
    name: str = "verify",
    done: str = END,
    said: Callable[[State], str] | None = None,
    feedback: Callable[[Outcome], dict[str, Any]] | None = None,
    max_sendbacks: int | None = None,
) -> StateGraph[Any, Any, Any, Any]:
    """Add the verify node as ``name`` and its edge to ``back`` or ``done``; the graph's own
    edges must lead the agent's final answer to ``name``."""
    node = verify_node(gate, said=said, feedback=feedback, max_sendbacks=max_sendbacks)
    # LangGraph types a node by the graph's state class, which this module cannot name.
    builder.add_node(name, cast("Any", node))
    builder.add_conditional_edges(name, after_verify(gate, back=back, done=done), [back, done])
    return builder


def _last_message(state: State) -> str:
    messages = state.get("messages") if isinstance(state, dict) else None
    if not messages:
        return ""
    last = messages[-1]
    if isinstance(last, BaseMessage):
        return last.text if isinstance(last.text, str) else str(last.content)
    return str(last)


def _as_message(outcome: Outcome) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=outcome.message or "The task is not verified yet.")]}
