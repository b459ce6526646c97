"""LangGraph with a verify node: the real graph runtime, a scripted agent node, a real ToolNode.

The agent node answers from a script and keeps the messages it was given, so a test asserts on
what the agent saw after the gate sent it back.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from donegate.frameworks import CompletionGate, NotVerified
from donegate.frameworks.langgraph import add_verification
from tests.checks.httpserver import Reply, Server, serving
from tests.frameworks.support import ACCOUNT, NEW, OLD, TASK, Accounts, readback_config, receipts


def write(address: str) -> AIMessage:
    args = {"account_id": ACCOUNT, "address": address}
    return AIMessage(
        content="", tool_calls=[{"name": "update_address", "args": args, "id": address}]
    )


class ScriptedAgent:
    """The agent node: the next scripted message each time, and what it was given each time."""

    def __init__(self, *turns: AIMessage, then: AIMessage | None = None) -> None:
        self.turns = list(turns)
        self.then = then
        self.seen: list[list[AnyMessage]] = []

    def __call__(self, state: MessagesState) -> dict[str, Any]:
        self.seen.append(list(state["messages"]))
        if self.turns:
            return {"messages": [self.turns.pop(0)]}
        assert self.then is not None, "the agent node ran more often than scripted"
        # A fresh message each time: one with an id already seen would replace the first.
        return {"messages": [self.then.model_copy(update={"id": None})]}

    def told(self, index: int) -> str:
        return str(self.seen[index][-1].content)


def to_tools_or_verify(state: MessagesState) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "verify"


def graph(agent: ScriptedAgent, tools: list[Any], gate: CompletionGate | None) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_edge("tools", "agent")
    if gate is None:
        builder.add_node("verify", lambda state: {})  # the ungated control: no check at all
        builder.add_edge("verify", END)
    else:
        add_verification(builder, gate, back="agent")
    builder.add_conditional_edges("agent", to_tools_or_verify, ["tools", "verify"])
    return builder.compile()


def support_tools(accounts: Accounts, gate: CompletionGate | None) -> list[Any]:
    def update_address(account_id: int, address: str) -> str:
        """Set the postal address of an account."""
        accounts.write(account_id, address)
        return "updated"

    if gate is not None:
        update_address = gate.mutation(kind="state_write", target="accounts/{account_id}")(
            update_address
        )
    return [tool(update_address)]


@pytest.fixture
def accounts(tmp_path: Path) -> Accounts:
    return Accounts.create(tmp_path)


def support_gate(tmp_path: Path, accounts: Accounts, *, strict: bool = False) -> CompletionGate:
    return CompletionGate(
        readback_config(tmp_path, accounts.url),
        agent="support-bot",
        task=TASK,
        host="langgraph",
        state_dir=tmp_path / "state",
        strict=strict,
    )


def ask(app: Any) -> list[AnyMessage]:
    return list(app.invoke({"messages": [HumanMessage(TASK)]})["messages"])


def test_a_true_done_verifies_on_the_first_try(tmp_path: Path, accounts: Accounts) -> None:
    gate = support_gate(tmp_path, accounts)
    agent = ScriptedAgent(write(NEW), AIMessage("Done."))
    messages = ask(graph(agent, support_tools(accounts, gate), gate))
    assert messages[-1].content == "Done."
    [receipt] = receipts(tmp_path / "state")
    assert (receipt.host, receipt.verdict, receipt.decision) == ("langgraph", "verified", "allow")


def test_without_the_verify_node_a_wrong_value_is_accepted(
    tmp_path: Path, accounts: Accounts
) -> None:
    agent = ScriptedAgent(write("9 New Str"), AIMessage("Done."))
    messages = ask(graph(agent, support_tools(accounts, None), None))
    assert messages[-1].content == "Done."
    assert accounts.address() == "9 New Str"


def test_a_wrong_value_is_sent_back_and_the_agent_node_sees_why(
    tmp_path: Path, accounts: Accounts
) -> None:
    gate = support_gate(tmp_path, accounts)
    agent = ScriptedAgent(write("9 New Str"), AIMessage("Done."), write(NEW), AIMessage("Fixed."))
    messages = ask(graph(agent, support_tools(accounts, gate), gate))
    assert messages[-1].content == "Fixed."
    told = agent.told(2)  # the third turn: after the tool, the answer, and the gate's reason
    assert '"9 New Str"' in told
    assert f'"{NEW}"' in told
    assert isinstance(agent.seen[2][-1], HumanMessage)
    assert [r.verdict for r in receipts(tmp_path / "state")] == ["refuted", "verified"]


def test_a_done_without_a_write_is_sent_back(tmp_path: Path, accounts: Accounts) -> None:
    gate = support_gate(tmp_path, accounts)
    agent = ScriptedAgent(AIMessage("Done."), write(NEW), AIMessage("Now done."))
    messages = ask(graph(agent, support_tools(accounts, gate), gate))
    assert messages[-1].content == "Now done."
    assert "Nothing has been changed yet" in agent.told(1)


def test_an_agent_that_never_fixes_it_ends_not_verified(tmp_path: Path, accounts: Accounts) -> None:
    gate = support_gate(tmp_path, accounts)
    agent = ScriptedAgent(write("elsewhere"), then=AIMessage("Done."))
    messages = ask(graph(agent, support_tools(accounts, gate), gate))
    assert messages[-1].content == "Done."
    decided = receipts(tmp_path / "state")
    assert [r.decision for r in decided] == ["veto", "veto", "allow"]  # max_strict_vetoes = 2
    assert (decided[-1].verdict, decided[-1].reason) == ("refuted", "strict_veto_cap_reached")
    assert accounts.address() != OLD


def test_strict_mode_raises_out_of_the_graph(tmp_path: Path, accounts: Accounts) -> None:
    gate = support_gate(tmp_path, accounts, strict=True)
    agent = ScriptedAgent(write("elsewhere"), then=AIMessage("Done."))
    with pytest.raises(NotVerified):
        ask(graph(agent, support_tools(accounts, gate), gate))


@pytest.fixture
def version_server() -> Iterator[tuple[dict[str, str], Server]]:
    deployed = {"version": "1.4.1"}
    with serving({"/version": lambda: Reply(200, json.dumps(deployed))}) as server:
        yield deployed, server


def test_a_deploy_agent_is_gated_on_the_live_endpoint(
    tmp_path: Path, version_server: tuple[dict[str, str], Server]
) -> None:
    deployed, server = version_server
    config = tmp_path / "donegate.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [[checks]]
            check_type = "endpoint_health"
            url = "{server.url}/version"
            expected = {{ status = 200, body_contains = '"version": "1.4.2"' }}
            covers = ["services/*"]
            """
        )
    )
    gate = CompletionGate(
        config, agent="deploy-bot", host="langgraph", state_dir=tmp_path / "state"
    )

    @tool
    @gate.mutation(kind="deploy", target="services/{service}")
    def deploy(service: str, version: str) -> str:
        """Deploy a version of a service."""
        if version == "1.4.2":
            deployed["version"] = version
        return f"deploying {service} {version}"

    def deploying(version: str) -> AIMessage:
        call = {"name": "deploy", "args": {"service": "api", "version": version}, "id": version}
        return AIMessage(content="", tool_calls=[call])

    agent = ScriptedAgent(
        deploying("1.4.2rc1"),
        AIMessage("Deployed."),
        deploying("1.4.2"),
        AIMessage("Deployed 1.4.2."),
    )
    messages = ask(graph(agent, [deploy], gate))
    assert messages[-1].content == "Deployed 1.4.2."
    assert '"body_contains": false' in agent.told(2)
    assert [r.verdict for r in receipts(tmp_path / "state")] == ["refuted", "verified"]


def test_a_state_without_messages_names_its_claim_and_its_feedback(
    tmp_path: Path, accounts: Accounts
) -> None:
    from typing_extensions import TypedDict

    class Ticket(TypedDict, total=False):
        answer: str
        note: str
        tries: int

    gate = support_gate(tmp_path, accounts)
    update = gate.mutation(kind="state_write", target="accounts/{account_id}")(accounts.write)
    notes: list[str] = []

    def work(state: Ticket) -> dict[str, Any]:
        notes.append(state.get("note", ""))
        tries = state.get("tries", 0) + 1
        update(ACCOUNT, NEW if tries > 1 else "9 New Str")
        return {"answer": f"done (try {tries})", "tries": tries}

    builder = StateGraph(Ticket)
    builder.add_node("work", work)
    builder.add_edge(START, "work")
    builder.add_edge("work", "verify")
    add_verification(
        builder,
        gate,
        back="work",
        said=lambda state: state["answer"],
        feedback=lambda outcome: {"note": outcome.message or ""},
    )
    final = builder.compile().invoke({"tries": 0})
    assert final["answer"] == "done (try 2)"
    assert notes[0] == ""
    assert '"9 New Str"' in notes[1]
    assert [r.claim["claimed_outcome"] for r in receipts(tmp_path / "state")] == [
        "done (try 1)",
        "done (try 2)",
    ]
