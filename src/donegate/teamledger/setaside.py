"""Receipts the team ledger refused, set aside on this machine with the server's reason.

A refused receipt stays in the local outbox, which remains the one record of what the team
ledger does not hold yet; this file only names the receipts a sync skips, and why. So a lost or
damaged file loses nothing (those receipts are tried, and refused, again), and clearing it
(``donegate ledger sync --retry-set-aside``) tries them all again. An entry holds the receipt's
fingerprint: a receipt closed again with other content is no longer the one refused, and ships.

The file is ``team-set-aside.sqlite3`` in the state directory, beside the local ledger.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from donegate.errors import InvalidInput
from donegate.ledger import Receipt
from donegate.record import Record
from donegate.sqlitefile import cause, connect, migrate
from donegate.timefmt import rfc3339

FILE_NAME = "team-set-aside.sqlite3"
_VERSION = 1
_SCHEMA = """
CREATE TABLE set_aside (
    receipt_id INTEGER PRIMARY KEY,
    uuid TEXT,
    fingerprint TEXT NOT NULL,
    reason TEXT NOT NULL,
    set_aside_at TEXT NOT NULL
)
"""
_BUSY_TIMEOUT_S = 10.0


class Entry(Record):
    """One receipt set aside: which, when, and the server's reason."""

    receipt_id: int
    uuid: str | None
    reason: str
    set_aside_at: str


class SetAside:
    """The set-aside receipts of one state directory (each call opens the file and closes it)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / FILE_NAME

    def held(self) -> dict[int, str]:
        """The fingerprint of each receipt set aside, by receipt id."""
        rows = self._read("SELECT receipt_id, fingerprint FROM set_aside")
        return {int(str(rid)): str(digest) for rid, digest in rows}

    def count(self) -> int:
        """How many receipts are set aside."""
        rows = self._read("SELECT count(*) FROM set_aside")
        return int(str(rows[0][0])) if rows else 0

    def entries(self) -> list[Entry]:
        """Every receipt set aside, oldest receipt first."""
        sql = "SELECT receipt_id, uuid, reason, set_aside_at FROM set_aside ORDER BY receipt_id"
        return [Entry(*row) for row in self._read(sql)]  # type: ignore[arg-type]

    def add(self, refused: Iterable[tuple[Receipt, str]]) -> None:
        """Set each receipt aside with its reason (again: the newest reason is kept)."""
        now = rfc3339(datetime.now(UTC))
        rows = [(r.id, r.uuid, fingerprint(r), why, now) for r, why in refused]
        if rows:
            with self._open() as db:
                db.executemany("INSERT OR REPLACE INTO set_aside VALUES (?, ?, ?, ?, ?)", rows)

    def release(self, receipt_ids: Iterable[int]) -> None:
        """Forget these receipts: the team ledger holds them now."""
        with self._open() as db:
            rows = [(i,) for i in receipt_ids]
            db.executemany("DELETE FROM set_aside WHERE receipt_id = ?", rows)

    def clear(self) -> int:
        """Let every receipt set aside be tried again; how many there were."""
        if not self.path.exists():
            return 0
        with self._open() as db:
            return db.execute("DELETE FROM set_aside").rowcount

    def _read(self, sql: str) -> list[tuple[object, ...]]:
        if not self.path.exists():
            return []  # nothing was ever set aside; reading makes no file
        with self._open() as db:
            return db.execute(sql).fetchall()

    @contextmanager
    def _open(self) -> Iterator[sqlite3.Connection]:
        # Each statement is its own transaction: an entry is independent of the others, and
        # one lost in a crash only means its receipt is tried, and refused, once more.
        try:
            db = connect(self.path, _BUSY_TIMEOUT_S)
            try:
                migrate(db, self.path, _SCHEMA, _VERSION, _not_ours)
                yield db
            finally:
                db.close()
        except sqlite3.Error as exc:
            why = cause(exc, self.path)
            raise InvalidInput(f"set-aside receipts {self.path} are unusable: {why}") from None


def fingerprint(receipt: Receipt) -> str:
    """A digest of everything the receipt would ship: it changes when the receipt does."""
    text = json.dumps(receipt.to_json(), sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _not_ours(detail: str) -> InvalidInput:
    return InvalidInput(f"set-aside receipts {detail} (not donegate's, or from another version)")
