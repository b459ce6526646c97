"""The team ledger on PostgreSQL: shipping receipts in (idempotent on uuid), querying them out."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

from donegate.errors import InvalidInput
from donegate.ledger import Receipt
from donegate.teamledger import schema as ddl
from donegate.teamledger.settings import DEFAULT_SCHEMA, check_schema

CONNECT_TIMEOUT_S = 5
_COLUMNS = (
    "id, session_id, host, workspace, created_at, verdict, decision, reason, claim, "
    "decision_doc, uuid, machine"
)


class TeamLedgerUnreachable(InvalidInput):
    """The team ledger's server could not be reached or failed; nothing was lost locally."""


class TeamLedger:
    """One connection to a team ledger. Use as a context manager."""

    def __init__(self, url: str, schema: str = DEFAULT_SCHEMA) -> None:
        self.url = url
        self.schema = check_schema(schema)
        self._conn: Any = None

    @property
    def name(self) -> str:
        """A name for people: the URL without its password, and the schema."""
        from psycopg.conninfo import conninfo_to_dict

        try:
            info = conninfo_to_dict(self.url)
        except Exception:
            return f"a team ledger (schema {self.schema})"
        where = f"{info.get('host', '')}:{info.get('port', 5432)}/{info.get('dbname', '')}"
        return f"team ledger postgresql://{where} (schema {self.schema})"

    def ship(self, receipts: Sequence[Receipt]) -> None:
        """Upsert ``receipts`` in one transaction: a receipt already there is one row still."""
        rows = [_row(r) for r in receipts]
        with self._errors():
            conn = self._connect()
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(_UPSERT.format(s=self.schema), rows)

    def query(
        self,
        *,
        since: datetime | None = None,
        verdict: str | None = None,
        session: str | None = None,
        limit: int | None = None,
    ) -> list[Receipt]:
        """The receipts matching every filter given, newest first (as the local ledger's)."""
        filters = (("created_at >=", since), ("verdict =", verdict), ("session_id =", session))
        clauses = [f"{column} %s" for column, value in filters if value is not None]
        args: list[Any] = [value for _, value in filters if value is not None]
        where = "WHERE " + " AND ".join(clauses) if clauses else ""
        table = f"{self.schema}.receipts"
        sql = f"SELECT {_COLUMNS} FROM {table} {where} ORDER BY created_at DESC, id DESC"
        if limit is not None:
            sql, args = sql + " LIMIT %s", [*args, limit]
        with self._errors():
            rows = self._connect().execute(sql, args).fetchall()
        return [_receipt(row) for row in rows]

    def count(self) -> int:
        """How many receipts the team ledger holds."""
        with self._errors():
            row = self._connect().execute(f"SELECT count(*) FROM {self.schema}.receipts").fetchone()
        return int(row[0])

    def version(self) -> int:
        """The schema version found on the server."""
        with self._errors():
            return ddl.current(self._connect(), self.schema)

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

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
    def _errors(self) -> Iterator[None]:
        import psycopg

        try:
            yield
        except psycopg.Error as exc:
            self.close()
            detail = " ".join(str(exc).split())
            raise TeamLedgerUnreachable(f"{self.name}: {type(exc).__name__}: {detail}") from None

    def _connect(self) -> Any:
        if self._conn is None:
            import psycopg

            with self._errors():
                conn = psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True)
                try:
                    ddl.migrate(conn, self.schema)
                except BaseException:
                    conn.close()
                    raise
                self._conn = conn
        return self._conn


_UPSERT = """
INSERT INTO {s}.receipts (uuid, local_id, session_id, host, workspace, machine, created_at,
    verdict, decision, reason, claim, decision_doc, on_unverified)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (uuid) DO UPDATE SET verdict = EXCLUDED.verdict, decision = EXCLUDED.decision,
    reason = EXCLUDED.reason, claim = EXCLUDED.claim, decision_doc = EXCLUDED.decision_doc,
    on_unverified = EXCLUDED.on_unverified, shipped_at = now()
"""


def _row(r: Receipt) -> tuple[Any, ...]:
    if not r.uuid:
        raise InvalidInput(f"receipt {r.id} has no uuid: it cannot be shipped idempotently")
    mode = r.decision_doc.get("on_unverified")
    return (
        r.uuid,
        r.id,
        r.session_id,
        r.host,
        r.workspace,
        r.machine or socket.gethostname(),
        datetime.fromisoformat(r.created_at),
        r.verdict,
        r.decision,
        r.reason,
        json.dumps(r.claim),
        json.dumps(r.decision_doc),
        mode if isinstance(mode, str) else None,
    )


def _receipt(row: tuple[Any, ...]) -> Receipt:
    rid, session_id, host, workspace, created_at, verdict, decision, reason = row[:8]
    stamp = created_at.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    return Receipt(
        rid,
        session_id,
        host,
        workspace,
        stamp,
        verdict,
        decision,
        reason,
        claim=row[8],
        decision_doc=row[9],
        uuid=row[10],
        machine=row[11],
    )
