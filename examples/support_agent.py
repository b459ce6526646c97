"""A support agent built with Pydantic AI, gated by donegate: it may finish only when the account
read back from the database shows the change it claims.

    python examples/support_agent.py                      # SQLite in a temporary directory
    python examples/support_agent.py --postgres postgresql://postgres@127.0.0.1:5432/test

The model is scripted (Pydantic AI's FunctionModel), so the example runs offline: on its first
try it writes the address with a typo and says it is done; donegate reads the account back, sends
it back with what it saw, and the second try verifies. Every try leaves a receipt in the ledger
(``donegate report --state-dir DIR`` shows them).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import uuid
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from donegate.frameworks import CompletionGate
from donegate.frameworks.pydantic_ai import gate_agent
from donegate.ledger import Ledger

ACCOUNT = 4471
ADDRESS = "9 New Street"
TASK = f"Change the address of account {ACCOUNT} to {ADDRESS}."

CONFIG = """\
[gate]
max_strict_vetoes = 3

[[checks]]
check_type = "state_readback"
name = "account address"
target = "accounts/{account}"
source = "{source}"
query = "SELECT address FROM {table} WHERE id = :id"
params = {{ id = {account} }}
expected = {{ address = "{address}" }}
covers = ["accounts/*"]
"""


class Database:
    """The system of record: one accounts table, in SQLite or PostgreSQL."""

    def __init__(self, url: str, table: str) -> None:
        self.url = url
        self.table = table

    @classmethod
    def sqlite(cls, directory: Path) -> Database:
        path = directory / "accounts.sqlite3"
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, address TEXT NOT NULL)")
            db.execute("INSERT INTO accounts VALUES (?, ?)", (ACCOUNT, "1 Old Road"))
        return cls(f"sqlite:///{path}", "accounts")

    @classmethod
    def postgres(cls, url: str) -> Database:
        database = cls(url, f"accounts_{uuid.uuid4().hex[:8]}")
        database.run(f"CREATE TABLE {database.table} (id INTEGER PRIMARY KEY, address TEXT)")
        database.run(f"INSERT INTO {database.table} VALUES ({ACCOUNT}, '1 Old Road')")
        return database

    def run(self, statement: str, **values: object) -> None:
        from sqlalchemy import create_engine, text

        engine = create_engine(self.url)
        try:
            with engine.begin() as db:
                db.execute(text(statement), values)
        finally:
            engine.dispose()

    def drop(self) -> None:
        if not self.url.startswith("sqlite"):
            self.run(f"DROP TABLE IF EXISTS {self.table}")


def scripted_model(told: list[str]) -> FunctionModel:
    """Try 1: a typo, and "done". Try 2: the right address. ``told`` keeps what it was told."""
    turns: list[TextPart | ToolCallPart] = [
        ToolCallPart("update_address", {"account_id": ACCOUNT, "address": "9 New Str"}),
        TextPart(f"Done: account {ACCOUNT} now lives at {ADDRESS}."),
        ToolCallPart("update_address", {"account_id": ACCOUNT, "address": ADDRESS}),
        TextPart(f"Corrected: account {ACCOUNT} now lives at {ADDRESS}."),
    ]

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest) and len(messages) > 1:
            # What came back besides the tools' returns: Pydantic AI's retry, with the reason.
            parts = [p for p in last.parts if not isinstance(p, ToolReturnPart)]
            told.extend(str(getattr(p, "content", "")) for p in parts)
        return ModelResponse(parts=[turns.pop(0)])

    return FunctionModel(answer)


def support_agent(database: Database, gate: CompletionGate, told: list[str]) -> Agent[None, str]:
    agent = Agent(scripted_model(told), retries={"output": gate.max_sendbacks or 8})

    @agent.tool_plain
    @gate.mutation(kind="state_write", target="accounts/{account_id}")
    def update_address(account_id: int, address: str) -> str:
        """Set the postal address of an account."""
        statement = f"UPDATE {database.table} SET address = :address WHERE id = :id"
        database.run(statement, address=address, id=account_id)
        return "updated"

    return gate_agent(agent, gate)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="use this PostgreSQL database")
    parser.add_argument("--state-dir", type=Path, help="the ledger's directory (default: temp)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="donegate-support-") as tmp:
        work = Path(tmp)
        database = Database.postgres(args.postgres) if args.postgres else Database.sqlite(work)
        try:
            return run(database, work, args.state_dir or work / "state")
        finally:
            database.drop()


def run(database: Database, work: Path, state_dir: Path) -> int:
    source = database.url.replace("+psycopg", "")
    config = work / "donegate.toml"
    config.write_text(
        CONFIG.format(account=ACCOUNT, source=source, table=database.table, address=ADDRESS)
    )
    gate = CompletionGate(
        config, agent="support-bot", task=TASK, host="pydantic-ai", state_dir=state_dir
    )
    told: list[str] = []
    print(f"task: {TASK}  (database: {source.split('://')[0]})")
    output = support_agent(database, gate, told).run_sync(TASK).output
    return report(gate.run.session_id, state_dir, output, told)


def report(session: str, state_dir: Path, output: str, told: list[str]) -> int:
    """Each try as the ledger recorded it, what the model received when sent back, the end."""
    with Ledger(state_dir) as ledger:
        tries = list(reversed(ledger.recent(50, session=session)))
    retries = iter(told)
    for number, receipt in enumerate(tries, start=1):
        said = receipt.claim.get("claimed_outcome", "(no claim)")
        print(f"try {number}: the agent said {said!r}")
        if receipt.decision == "veto":
            print(f"  sent back ({receipt.reason}); the claim is {receipt.verdict}")
            print(f"  the model's next request carried: {next(retries, '(nothing)')}")
        else:
            print(f"  let go: {receipt.verdict} ({receipt.reason})")
        print(f"  receipt {receipt.id}")
    verified = bool(tries) and tries[-1].verdict == "verified"
    print(f"final answer {output!r}: {'VERIFIED' if verified else 'NOT verified'}")
    print(f"ledger: {state_dir} (shown by donegate report; --state-dir DIR keeps it)")
    return 0 if verified else 1


if __name__ == "__main__":
    sys.exit(main())
