"""What the framework gates' tests share: an accounts database, the team's file, the ledger."""

from __future__ import annotations

import sqlite3
import textwrap
from dataclasses import dataclass
from pathlib import Path

from donegate.ledger import Ledger, Receipt

ACCOUNT = 4471
OLD = "1 Old Road"
NEW = "9 New Street"
TASK = f"Change the address of account {ACCOUNT} to {NEW}."


@dataclass(frozen=True)
class Accounts:
    """The system of record: a real SQLite file with one account in it."""

    path: Path

    @classmethod
    def create(cls, directory: Path) -> Accounts:
        accounts = cls(directory / "accounts.sqlite3")
        with sqlite3.connect(accounts.path) as db:
            db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, address TEXT NOT NULL)")
            db.execute("INSERT INTO accounts VALUES (?, ?)", (ACCOUNT, OLD))
        return accounts

    @property
    def url(self) -> str:
        return f"sqlite:///{self.path}"

    def write(self, account_id: int, address: str, *, commit: bool = True) -> None:
        db = sqlite3.connect(self.path)
        try:
            db.execute("UPDATE accounts SET address = ? WHERE id = ?", (address, account_id))
            if commit:
                db.commit()
        finally:
            db.close()

    def address(self, account_id: int = ACCOUNT) -> str:
        with sqlite3.connect(self.path) as db:
            return str(
                db.execute("SELECT address FROM accounts WHERE id = ?", (account_id,)).fetchone()[0]
            )


def readback_config(
    directory: Path, source: str, gate: str = "max_strict_vetoes = 2", table: str = "accounts"
) -> Path:
    """The team's file: one readback of the account's address, covering ``accounts/*``."""
    path = directory / "donegate.toml"
    path.write_text(
        textwrap.dedent(
            f"""
            [gate]
            {gate}

            [[checks]]
            check_type = "state_readback"
            name = "account address"
            target = "accounts/{ACCOUNT}"
            source = "{source}"
            query = "SELECT address FROM {table} WHERE id = :id"
            params = {{ id = {ACCOUNT} }}
            expected = {{ address = "{NEW}" }}
            covers = ["accounts/*"]
            timeout_s = 10
            """
        )
    )
    return path


def receipts(state_dir: Path, session: str | None = None) -> list[Receipt]:
    """The ledger's receipts, oldest first."""
    with Ledger(state_dir) as ledger:
        return list(reversed(ledger.recent(100, session=session)))
