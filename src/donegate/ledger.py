"""The ledger: every stop's receipt (its claim and the gate's decision), in SQLite.

The file is ``receipts.sqlite3`` in the state directory (:mod:`donegate.statedir`), outside the
agent's working tree. It is opened in WAL mode with a busy timeout, so parallel hook processes
at one stop each record their receipt; every write is one ``BEGIN IMMEDIATE`` transaction.

A file that is not a ledger (corrupt, foreign, from a newer donegate) is an
:class:`~donegate.errors.InvalidInput`, never an empty list of receipts.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from donegate import statedir
from donegate.errors import InvalidInput
from donegate.record import Record
from donegate.sqlitefile import cause, connect, migrate, writing
from donegate.timefmt import rfc3339

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, Self

FILE_NAME = "receipts.sqlite3"
SCHEMA_VERSION = 3
PENDING = "pending"
DEFAULT_BUSY_TIMEOUT_S = 10.0

if TYPE_CHECKING:
    Decision = Literal["allow", "veto"]
else:
    Decision = str  # a Literal for the type checker; its values are str at run time
# "none": the stop made no claim to verify (nothing was written, or the check was skipped).
_VERDICTS = ("verified", "unverified", "refuted", "none")
_DECISIONS = ("allow", "veto")
_SCHEMA = """
CREATE TABLE receipts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    host TEXT NOT NULL,
    workspace TEXT NOT NULL,
    created_at TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('verified', 'unverified', 'refuted', 'none')),
    decision TEXT NOT NULL CHECK (decision IN ('allow', 'veto')),
    reason TEXT,
    claim_json TEXT NOT NULL,
    decision_json TEXT NOT NULL
);
CREATE INDEX receipts_by_session ON receipts (session_id, id);
CREATE INDEX receipts_pending ON receipts (workspace, id) WHERE reason = 'pending';
{_V3}
"""
# Version 3: a stable id per receipt (the team ledger is idempotent on it), the machine that
# recorded it, the outbox of closed receipts not yet shipped, and an index for time windows.
_V3 = """
ALTER TABLE receipts ADD COLUMN uuid TEXT;
ALTER TABLE receipts ADD COLUMN machine TEXT;
CREATE UNIQUE INDEX receipts_by_uuid ON receipts (uuid);
CREATE INDEX receipts_by_time ON receipts (created_at);
CREATE TABLE outbox (
    receipt_id INTEGER PRIMARY KEY REFERENCES receipts (id),
    queued_at TEXT NOT NULL
)
"""
_SCHEMA = _SCHEMA.replace("{_V3}", _V3)
# Version 2 finds the receipts a killed hook left open without reading the whole ledger.
_UPGRADES = {
    1: "CREATE INDEX receipts_pending ON receipts (workspace, id) WHERE reason = 'pending'",
    # Receipts of version 2 get a random uuid; closed ones are queued for the team ledger.
    2: _V3
    + "; UPDATE receipts SET uuid = lower(hex(randomblob(16)))"
    + "; INSERT INTO outbox (receipt_id, queued_at) SELECT id, created_at FROM receipts "
    "WHERE reason IS NOT 'pending'",
}
# The form _rfc3339 writes (2026-11-30T08:00:00.000000Z), as a GLOB pattern.
_STORED_INSTANT = (
    "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T"
    "[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]Z"
)
_COLUMNS = (
    "id, session_id, host, workspace, created_at, verdict, decision, reason, "
    "claim_json, decision_json, uuid, machine"
)
_INSERTED = (
    "session_id, host, workspace, created_at, verdict, decision, reason, "
    "claim_json, decision_json, uuid, machine"
)


class Receipt(Record):
    """One recorded stop: who, where, when, the verdict and the gate's decision."""

    id: int
    session_id: str
    host: str
    workspace: str
    created_at: str
    verdict: str
    decision: Decision
    reason: str | None
    claim: dict[str, Any]
    decision_doc: dict[str, Any]
    uuid: str | None = None
    machine: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with every field."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "host": self.host,
            "workspace": self.workspace,
            "created_at": self.created_at,
            "verdict": self.verdict,
            "decision": self.decision,
            "reason": self.reason,
            "claim": self.claim,
            "decision_doc": self.decision_doc,
            "uuid": self.uuid,
            "machine": self.machine,
        }


class Damaged(Record):
    """A row whose JSON does not read: its id, its time as stored, and why (the parser's words)."""

    id: int
    created_at: str
    why: str


class Ledger:
    """The receipts of one state directory. Use as a context manager, or call :meth:`close`."""

    def __init__(
        self,
        state_dir: str | Path | None = None,
        *,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
    ) -> None:
        self.path = statedir.ensure(state_dir) / FILE_NAME
        self._timeout = busy_timeout_s
        self._db: sqlite3.Connection | None = None

    def record(
        self,
        *,
        session_id: str,
        host: str,
        workspace: str | Path,
        verdict: str,
        decision: Decision,
        reason: str | None,
        claim: Mapping[str, Any],
        decision_doc: Mapping[str, Any] | None = None,
        created_at: datetime | None = None,
        machine: str | None = None,
    ) -> int:
        """Store one receipt and return its id. ``claim`` is the claim document as JSON data.

        ``machine`` defaults to this machine's host name. A receipt recorded closed (not
        pending) is queued in the outbox for the team ledger in the same transaction.
        """
        row = (
            _storable(session_id),
            _storable(host),
            _storable(str(workspace)),
            _rfc3339(created_at or datetime.now(UTC)),
            _one_of("verdict", verdict, _VERDICTS),
            _one_of("decision", decision, _DECISIONS),
            None if reason is None else _storable(reason),
            _dumps("claim", claim),
            _dumps("decision_doc", decision_doc or {}),
            _uuid4_hex(),
            machine or os.uname().nodename,
        )
        with self._transaction() as db:
            cursor = db.execute(
                f"INSERT INTO receipts ({_INSERTED}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row
            )
            assert cursor.lastrowid is not None
            if reason != PENDING:
                _enqueue(db, cursor.lastrowid)
            return cursor.lastrowid

    def close_receipt(
        self,
        receipt_id: int,
        *,
        verdict: str,
        decision: Decision,
        reason: str | None,
        claim: Mapping[str, Any],
        decision_doc: Mapping[str, Any] | None = None,
    ) -> bool:
        """Close a receipt opened as pending with what the stop decided; False: no such receipt."""
        row = (
            _one_of("verdict", verdict, _VERDICTS),
            _one_of("decision", decision, _DECISIONS),
            reason,
            _dumps("claim", claim),
            _dumps("decision_doc", decision_doc or {}),
            receipt_id,
        )
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE receipts SET verdict = ?, decision = ?, reason = ?, claim_json = ?, "
                "decision_json = ? WHERE id = ?",
                row,
            )
            if cursor.rowcount != 1:
                return False
            _enqueue(db, receipt_id)
            return True

    def pending(self, workspace: str | Path) -> list[Receipt]:
        """The receipts of ``workspace`` still open (their stop has not finished), oldest first."""
        sql = f"SELECT {_COLUMNS} FROM receipts WHERE reason = ? AND workspace = ? ORDER BY id"
        with self._guard():
            rows = self._connect().execute(sql, (PENDING, _storable(str(workspace)))).fetchall()
        return [self._receipt(row) for row in rows]

    def latest(self, workspace: str | Path) -> Receipt | None:
        """The newest closed receipt of ``workspace``, if any."""
        sql = (
            f"SELECT {_COLUMNS} FROM receipts WHERE workspace = ? AND reason IS NOT ? "
            "ORDER BY id DESC LIMIT 1"
        )
        with self._guard():
            row = self._connect().execute(sql, (_storable(str(workspace)), PENDING)).fetchone()
        return None if row is None else self._receipt(row)

    def mark_drifted(self, receipt_id: int, drift: Mapping[str, Any]) -> bool:
        """Say on a closed receipt that the tree no longer is the one it describes: ``drift``
        (when, which files) under ``drifted`` in its decision document; its verdict stays, as
        what was true when it was written. False: no such closed receipt, or marked already."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT decision_json FROM receipts WHERE id = ? AND reason IS NOT ?",
                (receipt_id, PENDING),
            ).fetchone()
            if row is None:
                return False
            doc = _loads(self.path, receipt_id, row[0])
            if "drifted" in doc:
                return False
            doc["drifted"] = dict(drift)
            db.execute(
                "UPDATE receipts SET decision_json = ? WHERE id = ?",
                (_dumps("decision_doc", doc), receipt_id),
            )
            _enqueue(db, receipt_id)
            return True

    def recent(self, limit: int = 20, session: str | None = None) -> list[Receipt]:
        """The newest receipts first, at most ``limit``, of one session if given."""
        where, args = ("", [])
        if session is not None:
            where, args = "WHERE session_id = ?", [_storable(session)]
        sql = f"SELECT {_COLUMNS} FROM receipts {where} ORDER BY id DESC LIMIT ?"
        with self._guard():
            rows = self._connect().execute(sql, (*args, max(limit, 0))).fetchall()
        return [self._receipt(row) for row in rows]

    def query(
        self,
        *,
        since: datetime | None = None,
        verdict: str | None = None,
        session: str | None = None,
        limit: int | None = None,
        damaged: list[Damaged] | None = None,
    ) -> list[Receipt]:
        """The receipts matching every filter given, newest first, at most ``limit``.

        ``since`` keeps the receipts created at or after that instant, and those whose stored
        time is not an instant as this ledger writes one (they cannot be placed before it).
        A row that does not read fails the query, or, given ``damaged``, is added there.
        """
        where, args = _filters(since, verdict, session)
        sql = f"SELECT {_COLUMNS} FROM receipts {where} ORDER BY created_at DESC, id DESC"
        if limit is not None:
            sql, args = sql + " LIMIT ?", [*args, max(limit, 0)]
        with self._guard():
            rows = self._connect().execute(sql, args).fetchall()
        if damaged is None:
            return [self._receipt(row) for row in rows]
        return list(self._readable(rows, damaged))

    def outbox(self, limit: int = 500) -> list[Receipt]:
        """Closed receipts not yet shipped to the team ledger, oldest first."""
        sql = (
            f"SELECT {', '.join('r.' + c.strip() for c in _COLUMNS.split(','))} FROM outbox o "
            "JOIN receipts r ON r.id = o.receipt_id ORDER BY o.receipt_id LIMIT ?"
        )
        with self._guard():
            rows = self._connect().execute(sql, (max(limit, 0),)).fetchall()
        return [self._receipt(row) for row in rows]

    def shipped(self, receipt_ids: list[int]) -> None:
        """Take receipts off the outbox once the team ledger holds them."""
        with self._transaction() as db:
            db.executemany("DELETE FROM outbox WHERE receipt_id = ?", [(i,) for i in receipt_ids])

    def outbox_size(self) -> int:
        """How many closed receipts wait to be shipped."""
        with self._guard():
            return int(self._connect().execute("SELECT count(*) FROM outbox").fetchone()[0])

    def get(self, receipt_id: int) -> Receipt:
        """The receipt with this id; ``InvalidInput`` if there is none."""
        with self._guard():
            row = (
                self._connect()
                .execute(f"SELECT {_COLUMNS} FROM receipts WHERE id = ?", (receipt_id,))
                .fetchone()
            )
        if row is None:
            raise InvalidInput(f"no receipt {receipt_id} in {self.path}")
        return self._receipt(row)

    def close(self) -> None:
        """Close the connection (a later call reopens it)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _guard(self) -> Iterator[None]:
        # The one place where SQLite's errors become ours.
        try:
            yield
        except sqlite3.Error as exc:
            raise InvalidInput(
                f"receipt ledger {self.path} is unusable: {cause(exc, self.path)}"
            ) from None

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._guard(), writing(self._connect()) as db:
            yield db

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            db = connect(self.path, self._timeout)
            try:
                migrate(db, self.path, _SCHEMA, SCHEMA_VERSION, _not_ours, _UPGRADES)
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def _readable(self, rows: list[tuple[Any, ...]], damaged: list[Damaged]) -> Iterator[Receipt]:
        for row in rows:
            try:
                yield self._receipt(row)
            except InvalidInput as exc:
                damaged.append(Damaged(row[0], str(row[4]), str(exc.__cause__ or exc)))

    def _receipt(self, row: tuple[Any, ...]) -> Receipt:
        rid, session_id, host, workspace, created_at, verdict, decision, reason = row[:8]
        return Receipt(
            rid,
            session_id,
            host,
            workspace,
            created_at,
            verdict,
            decision,
            reason,
            claim=_loads(self.path, rid, row[8]),
            decision_doc=_loads(self.path, rid, row[9]),
            uuid=row[10],
            machine=row[11],
        )


def _uuid4_hex() -> str:
    """A random (version 4) UUID as 32 hex digits, as ``uuid.uuid4().hex`` gives it.

    Built here because importing uuid (and socket, for the host name) costs a stop hook 5 ms.
    """
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # the version
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    return raw.hex()


def _enqueue(db: sqlite3.Connection, receipt_id: int) -> None:
    # Closed again (an interrupted stop swept): one row, the team ledger's upsert takes the last.
    db.execute(
        "INSERT OR REPLACE INTO outbox (receipt_id, queued_at) VALUES (?, ?)",
        (receipt_id, _rfc3339(datetime.now(UTC))),
    )


def _filters(
    since: datetime | None, verdict: str | None, session: str | None
) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if since is not None:
        # A text that is not of _rfc3339's form (a date alone: '2026-11-30') compares as text
        # before the day's instants; the window keeps it, not drops it unseen.
        clauses.append("(created_at >= ? OR created_at NOT GLOB ?)")
        args.extend([_rfc3339(since), _STORED_INSTANT])
    if verdict is not None:
        clauses.append("verdict = ?")
        args.append(_one_of("verdict", verdict, _VERDICTS))
    if session is not None:
        clauses.append("session_id = ?")
        args.append(session)
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), args


def _not_ours(detail: str) -> InvalidInput:
    return InvalidInput(f"receipt ledger {detail} (not a donegate ledger, or from another version)")


def _one_of(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InvalidInput(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _storable(text: str) -> str:
    """``text`` as SQLite can store it: a lone surrogate (a file name that is not UTF-8, a
    payload's ``\\udc80``) is written as its escape instead of failing the whole receipt."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _dumps(name: str, value: Mapping[str, Any]) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"{name} is not JSON data: {exc}") from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # JSON's own escapes carry a lone surrogate faithfully: it reads back as the same text.
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text


def _loads(path: Path, receipt_id: int, text: str) -> dict[str, Any]:
    try:
        return _document(text)
    except ValueError as exc:  # kept as the cause: Ledger.query(damaged=...) says why alone
        raise InvalidInput(f"receipt {receipt_id} in {path} is damaged: {exc}") from exc


def _document(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except RecursionError:  # nested deeper than the parser's stack (record() writes no such)
        raise ValueError("nested too deep to read") from None
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def _rfc3339(value: datetime) -> str:
    try:
        return rfc3339(value)
    except ValueError:
        raise InvalidInput(
            "created_at must be an aware datetime (an instant), got a naive one"
        ) from None
