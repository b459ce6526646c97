"""The team ledger on PostgreSQL: shipping receipts in (idempotent on uuid), querying them out.

Every exchange with the server has a deadline, ``timeout_s``: the connect (psycopg's
``connect_timeout``) and each step after it, on the server (``statement_timeout``: a server
that answers but is slow, or waits on a lock) and on this side (a watchdog that cuts the
connection: a frozen server's kernel still acknowledges every packet, so neither the server's
timeouts nor TCP's ever fire).

A receipt whose content the server refuses (a NUL in its claim, say) is returned as
:class:`Refused`, and the receipts beside it still ship.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from donegate.errors import InvalidInput
from donegate.ledger import Receipt
from donegate.record import Record
from donegate.teamledger import schema as ddl
from donegate.teamledger.settings import DEFAULT_SCHEMA, check_schema
from donegate.timefmt import parse_rfc3339, rfc3339

if TYPE_CHECKING:
    import psycopg

TIMEOUT_S = 30.0
_COLUMNS = (
    "id, session_id, host, workspace, created_at, verdict, decision, reason, claim, "
    "decision_doc, uuid, machine"
)
# SQLSTATE classes that refuse what was sent, not the sending: 22 data exception (a NUL in a
# JSON string is 22P05), 23 integrity constraint violation, 54 program limit exceeded.
_REFUSING_CLASSES = ("22", "23", "54")


class TeamLedgerUnreachable(InvalidInput):
    """The team ledger's server could not be reached or failed; nothing was lost locally."""


class Refused(Record):
    """A receipt the server refused for its content, and the reason it gave."""

    receipt: Receipt
    reason: str


class _ContentRefused(Exception):
    """One receipt's content was refused (by the server, or by psycopg before sending it)."""


class TeamLedger:
    """One connection to a team ledger. Use as a context manager.

    ``timeout_s`` bounds the connect and each step after it (one batch shipped, one query).
    """

    def __init__(
        self, url: str, schema: str = DEFAULT_SCHEMA, timeout_s: float = TIMEOUT_S
    ) -> None:
        self.url = url
        self.schema = check_schema(schema)
        self.timeout_s = timeout_s
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

    def ship(self, receipts: Sequence[Receipt]) -> list[Refused]:
        """Upsert ``receipts`` in one transaction; those refused for their content are returned.

        A receipt already there is one row still. When the server refuses a receipt's content,
        the batch is shipped again a receipt at a time, so the others still ship, in order. Any
        other failure raises :class:`TeamLedgerUnreachable`, with nothing of the batch shipped.
        """
        try:
            with self._errors():
                conn = self._connect()
                with self._refusals(), conn.transaction(), conn.cursor() as cur:
                    cur.executemany(_UPSERT.format(s=self.schema), [_row(r) for r in receipts])
            return []
        except _ContentRefused:
            pass
        with self._errors():
            return self._ship_each(self._connect(), receipts)

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

    def _ship_each(self, conn: Any, receipts: Sequence[Receipt]) -> list[Refused]:
        # A savepoint per receipt: a refused one is rolled back alone, the rest commit together.
        refused: list[Refused] = []
        with conn.transaction():
            for receipt in receipts:
                try:
                    with self._refusals(), conn.transaction():
                        conn.execute(_UPSERT.format(s=self.schema), _row(receipt))
                except _ContentRefused as exc:
                    refused.append(Refused(receipt, str(exc)))
        return refused

    @contextmanager
    def _refusals(self) -> Iterator[None]:
        """A refusal of what was sent becomes :class:`_ContentRefused`; the connection stays."""
        import psycopg

        try:
            yield
        except psycopg.Error as exc:
            reason = _refusal(exc)
            if reason is None:
                raise
            raise _ContentRefused(reason) from None

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """One step with the server, under the watchdog; its failures translated here."""
        import psycopg

        with _watchdog(self.timeout_s, self._cut) as fired:
            try:
                yield
            except psycopg.Error as exc:
                raise self._unreachable(None if fired() else exc) from None

    def _unreachable(self, exc: BaseException | None) -> TeamLedgerUnreachable:
        self.close()
        if exc is None:  # the watchdog cut the connection
            return TeamLedgerUnreachable(
                f"{self.name}: no answer within {self.timeout_s:g} s (the server stopped answering)"
            )
        detail = " ".join(str(exc).split())
        return TeamLedgerUnreachable(f"{self.name}: {type(exc).__name__}: {detail}")

    def _cut(self) -> bool:
        # From the watchdog's thread: shutting the socket down wakes the step blocked on it with
        # an error; closing the connection here would race with that step. A connect still
        # under way has no connection yet: it ends on its own timeout.
        conn = self._conn
        if conn is None:
            return False
        with contextlib.suppress(OSError), socket.socket(fileno=os.dup(conn.fileno())) as s:
            s.shutdown(socket.SHUT_RDWR)
        return True

    def _connect(self) -> Any:
        if self._conn is None:
            import psycopg

            # libpq counts connect_timeout in whole seconds, and reads below 2 as 2.
            wait = max(2, math.ceil(self.timeout_s))
            # Held before it is ready, so that the watchdog can cut it while it is set up.
            self._conn = psycopg.connect(self.url, connect_timeout=wait, autocommit=True)
            ms = max(1, math.ceil(self.timeout_s * 1000))
            try:
                self._conn.execute("SELECT set_config('statement_timeout', %s, false)", (str(ms),))
                ddl.migrate(self._conn, self.schema)
            except BaseException:
                self.close()  # not migrated: the next step must not take it as ready
                raise
        return self._conn


def _refusal(exc: psycopg.Error) -> str | None:
    """The reason when ``exc`` refuses a receipt's content; None for any other failure."""
    import psycopg

    state = exc.sqlstate or ""
    # psycopg refuses a NUL in a text value before sending it: a DataError with no SQLSTATE.
    before_sending = not state and isinstance(exc, psycopg.DataError)
    if before_sending or state[:2] in _REFUSING_CLASSES:
        return f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    return None


@contextmanager
def _watchdog(timeout_s: float, cut: Callable[[], bool]) -> Iterator[Callable[[], bool]]:
    """Call ``cut`` if the body still runs after ``timeout_s``; yields "did it cut?"."""
    import threading  # only a sync or a report pays for it, never a stop

    lock = threading.Lock()
    state = {"done": False, "fired": False}

    def expire() -> None:
        with lock:  # a body that has just ended is not cut: its connection is still good
            if not state["done"]:
                # Said before cutting: the cut wakes the body at once, and it asks at once
                # whether this was the watchdog (asked after, it read the socket's error instead).
                state["fired"] = True
                state["fired"] = cut()

    timer = threading.Timer(timeout_s, expire)
    timer.daemon = True
    timer.start()
    try:
        yield lambda: state["fired"]
    finally:
        with lock:
            state["done"] = True
        timer.cancel()


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
        raise _ContentRefused(f"receipt {r.id} has no uuid: it cannot be shipped idempotently")
    mode = r.decision_doc.get("on_unverified")
    return (
        r.uuid,
        r.id,
        r.session_id,
        r.host,
        r.workspace,
        r.machine or socket.gethostname(),
        parse_rfc3339(r.created_at),
        r.verdict,
        r.decision,
        r.reason,
        json.dumps(r.claim),
        json.dumps(r.decision_doc),
        mode if isinstance(mode, str) else None,
    )


def _receipt(row: tuple[Any, ...]) -> Receipt:
    rid, session_id, host, workspace, created_at, verdict, decision, reason = row[:8]
    stamp = rfc3339(created_at)
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
