"""Pydantic AI with the gate as its output validator: the real agent loop, a scripted model.

The model is Pydantic AI's ``FunctionModel``: each test scripts its turns, and keeps every
request the agent sent it, so a test asserts on what the model was told when it was sent back.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from donegate.frameworks import CompletionGate, NotVerified
from donegate.frameworks.pydantic_ai import gate_agent, recorded
from tests.frameworks.support import (
    ACCOUNT,
    NEW,
    OLD,
    TASK,
    Accounts,
    readback_config,
    receipts,
)

Turn = ModelResponse


def write(address: str) -> Turn:
    return ModelResponse(
        parts=[ToolCallPart("update_address", {"account_id": ACCOUNT, "address": address})]
    )


def say(text: str) -> Turn:
    return ModelResponse(parts=[TextPart(text)])


class Script:
    """A scripted model: answers with the next turn, and keeps every request it received."""

    def __init__(self, *turns: Turn, then: Turn | None = None) -> None:
        self.turns = list(turns)
        self.then = then  # the turn repeated once the script is spent
        self.requests: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        if self.turns:
            return self.turns.pop(0)
        assert self.then is not None, "the agent asked the model more often than scripted"
        return self.then

    def told(self, index: int) -> str:
        """What the agent's request number ``index`` carried (the parts of its last message)."""
        last = self.requests[index][-1]
        assert isinstance(last, ModelRequest)
        return " ".join(str(getattr(part, "content", "")) for part in last.parts)


@pytest.fixture
def accounts(tmp_path: Path) -> Accounts:
    return Accounts.create(tmp_path)


def support_agent(
    script: Script,
    accounts: Accounts,
    gate: CompletionGate | None,
    retries: int = 8,
) -> Agent[None, str]:
    """The support agent: one tool that writes an address; gated unless ``gate`` is None."""
    agent = Agent(FunctionModel(script), retries={"output": retries})

    def update_address(account_id: int, address: str) -> str:
        """Set the postal address of an account."""
        accounts.write(account_id, address)
        return "updated"

    if gate is None:
        agent.tool_plain(update_address)
        return agent
    agent.tool_plain(
        gate.mutation(kind="state_write", target="accounts/{account_id}")(update_address)
    )
    return gate_agent(agent, gate)


def gate_for(
    tmp_path: Path, source: str, *, strict: bool = False, table: str = "accounts"
) -> CompletionGate:
    config = readback_config(tmp_path, source, table=table)
    return CompletionGate(
        config,
        agent="support-bot",
        task=TASK,
        host="pydantic-ai",
        state_dir=tmp_path / "state",
        strict=strict,
    )


def test_a_true_done_verifies_on_the_first_try(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, accounts.url)
    script = Script(write(NEW), say("Done: the address is updated."))
    result = support_agent(script, accounts, gate).run_sync(TASK)
    assert result.output == "Done: the address is updated."
    [receipt] = receipts(tmp_path / "state")
    assert (receipt.host, receipt.verdict, receipt.decision) == ("pydantic-ai", "verified", "allow")
    assert len(script.requests) == 2


def test_without_the_gate_a_done_with_no_write_is_accepted(
    tmp_path: Path, accounts: Accounts
) -> None:
    # The control for the next test: the same model, ungated, ends the run on its false done.
    script = Script(say("Done: the address is updated."))
    result = support_agent(script, accounts, None).run_sync(TASK)
    assert result.output == "Done: the address is updated."
    assert accounts.address() == OLD


def test_a_done_with_no_write_is_sent_back_and_the_model_is_told(
    tmp_path: Path, accounts: Accounts
) -> None:
    gate = gate_for(tmp_path, accounts.url)
    script = Script(say("Done."), write(NEW), say("Now it is done."))
    result = support_agent(script, accounts, gate).run_sync(TASK)
    assert result.output == "Now it is done."
    assert "Nothing has been changed yet" in script.told(1)
    assert [(r.decision, r.verdict) for r in receipts(tmp_path / "state")] == [
        ("veto", "none"),
        ("allow", "verified"),
    ]


def test_a_wrong_value_is_sent_back_with_what_the_readback_saw(
    tmp_path: Path, accounts: Accounts
) -> None:
    gate = gate_for(tmp_path, accounts.url)
    script = Script(write("9 New Str"), say("Done."), write(NEW), say("Corrected."))
    result = support_agent(script, accounts, gate).run_sync(TASK)
    assert result.output == "Corrected."
    told = script.told(2)
    assert '"9 New Str"' in told
    assert f'"{NEW}"' in told
    assert accounts.address() == NEW
    assert [r.verdict for r in receipts(tmp_path / "state")] == ["refuted", "verified"]


def test_an_agent_that_never_fixes_it_ends_not_verified(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, accounts.url)
    script = Script(write("elsewhere"), then=say("Done."))
    result = support_agent(script, accounts, gate).run_sync(TASK)
    assert result.output == "Done."  # let go: the budget (max_strict_vetoes = 2) is spent
    last = receipts(tmp_path / "state")[-1]
    assert (last.verdict, last.decision, last.reason) == (
        "refuted",
        "allow",
        "strict_veto_cap_reached",
    )
    assert gate.run.last is not None
    assert not gate.run.last.verified


def test_strict_mode_raises_to_the_application(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, accounts.url, strict=True)
    script = Script(write("elsewhere"), then=say("Done."))
    with pytest.raises(NotVerified, match="strict_veto_cap_reached"):
        support_agent(script, accounts, gate).run_sync(TASK)
    assert len(receipts(tmp_path / "state")) == 3


def test_an_agent_with_fewer_retries_than_the_budget_is_let_go_on_the_record(
    tmp_path: Path, accounts: Accounts
) -> None:
    gate = gate_for(tmp_path, accounts.url)
    script = Script(write("elsewhere"), then=say("Done."))
    result = support_agent(script, accounts, gate, retries=1).run_sync(TASK)
    assert result.output == "Done."
    last = receipts(tmp_path / "state")[-1]
    assert (last.reason, last.decision_doc["gate"]["converted_from"]) == (
        "blocks_in_a_row_cap_reached",
        "failed_verification",
    )
    assert gate.max_sendbacks == 5  # max_vetoes 3 + max_strict_vetoes 2


def test_a_toolset_records_its_calls(tmp_path: Path, accounts: Accounts) -> None:
    gate = gate_for(tmp_path, accounts.url)

    def update_address(account_id: int, address: str) -> str:
        """Set the postal address of an account."""
        accounts.write(account_id, address)
        return "updated"

    tools = recorded(
        FunctionToolset([update_address]),
        gate,
        {"update_address": ("state_write", "accounts/{account_id}")},
    )
    script = Script(write("9 New Str"), say("Done."), write(NEW), say("Corrected."))
    agent = gate_agent(Agent(FunctionModel(script), toolsets=[tools], retries={"output": 8}), gate)
    assert agent.run_sync(TASK).output == "Corrected."
    assert [c.target for c in gate.run.changes] == [f"accounts/{ACCOUNT}"] * 2
    assert "9 New Str" in script.told(2)


# The real PostgreSQL, as the readback tests use it.
POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


@pytest.fixture
def pg_accounts() -> Iterator[tuple[str, Callable[[], str]]]:
    from sqlalchemy import create_engine, text

    table = f"accounts_{uuid.uuid4().hex[:10]}"
    engine = create_engine(POSTGRES, isolation_level="AUTOCOMMIT")
    with engine.connect() as db:
        db.exec_driver_sql(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, address TEXT NOT NULL)")
        db.execute(text(f"INSERT INTO {table} VALUES (:id, :a)"), {"id": ACCOUNT, "a": OLD})

    def address() -> str:
        with engine.connect() as db:
            return str(
                db.execute(text(f"SELECT address FROM {table} WHERE id = {ACCOUNT}")).scalar()
            )

    try:
        yield table, address
    finally:
        with engine.connect() as db:
            db.exec_driver_sql(f"DROP TABLE IF EXISTS {table}")
        engine.dispose()


def test_on_postgresql_a_wrong_value_is_sent_back_then_verified(
    tmp_path: Path, pg_accounts: tuple[str, Callable[[], str]]
) -> None:
    from sqlalchemy import create_engine, text

    table, address = pg_accounts
    gate = gate_for(tmp_path, POSTGRES.replace("+psycopg", ""), table=table)
    engine = create_engine(POSTGRES)

    @gate.mutation(kind="state_write", target="accounts/{account_id}")
    def update_address(account_id: int, address: str) -> str:
        """Set the postal address of an account."""
        with engine.begin() as db:
            db.execute(
                text(f"UPDATE {table} SET address = :a WHERE id = :id"),
                {"a": address, "id": account_id},
            )
        return "updated"

    script = Script(write("9 New Str"), say("Done."), write(NEW), say("Corrected."))
    agent = gate_agent(Agent(FunctionModel(script), retries={"output": 8}), gate)
    agent.tool_plain(update_address)
    try:
        assert agent.run_sync(TASK).output == "Corrected."
    finally:
        engine.dispose()
    assert '"9 New Str"' in script.told(2)
    assert address() == NEW
    assert [r.verdict for r in receipts(tmp_path / "state")] == ["refuted", "verified"]
