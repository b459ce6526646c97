"""SQL readback through SQLAlchemy, with two locks against writing and one deadline.

1. The query is parsed and refused unless it is one plain read (:mod:`._sqlguard`).
2. The session cannot write, whatever reaches the server: PostgreSQL sessions start with
   ``default_transaction_read_only`` on (a ``COMMIT`` slipped in still leaves the next transaction
   read-only); MariaDB/MySQL sessions are set ``READ ONLY`` and the read runs in a read-only
   transaction; SQLite opens the file read-only (``mode=ro``), allows no attached database, and
   an authorizer allows only reading tables and calling harmless functions.
3. The server cancels the query at the deadline: PostgreSQL ``statement_timeout``, MariaDB
   ``max_statement_time``, SQLite a progress handler; the client's socket waits are bounded too.

Parameters are bound, never spliced; rows are streamed and at most one more than
:data:`MAX_RECORDS` is fetched; the transaction is always rolled back.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from donegate.checks.state_readback._base import MAX_RECORDS, ReadError, Records
from donegate.checks.state_readback._sqlguard import DENIED_FUNCTIONS, plain_read
from donegate.checks.state_readback._values import record

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine
    from sqlalchemy.engine import URL

    from donegate.checks._deadline import Deadline
    from donegate.checks.state_readback._settings import StateReadbackSettings

# A bare scheme would pick a driver this package does not install.
_DRIVERS = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg"}
_DRIVERS |= {"mysql": "mysql+pymysql", "mariadb": "mariadb+pymysql"}
# What a SQLite readback may do: read tables and call functions (minus the denied ones).
_SQLITE_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}
_SQLITE_ALLOWED |= {getattr(sqlite3, "SQLITE_RECURSIVE", 33)}
# Errors by which a server says it cancelled the statement at its timeout.
_CANCELLED = ("QueryCanceled", "max_statement_time", "interrupted")


def read(
    settings: StateReadbackSettings,
    base_dir: Path,
    deadline: Deadline,
    check_query: Callable[[str, str], None] = plain_read,
) -> Records:
    """The rows ``settings.query`` returns (at most one more than :data:`MAX_RECORDS`).

    ``check_query(query, backend)`` is the first lock; tests replace it to show the second holds
    on its own.
    """
    from sqlalchemy.exc import SQLAlchemyError

    assert settings.query is not None
    engine = engine_for(settings.source, base_dir, deadline)
    check_query(settings.query, _backend(engine))
    try:
        with engine.connect() as connection:
            return _read(connection, settings, deadline)
    except (SQLAlchemyError, sqlite3.Error) as exc:
        if deadline.expired() or any(word in _message(exc) for word in _CANCELLED):
            raise deadline.exceeded("the query") from None
        raise ReadError(_message(exc)) from None
    finally:
        engine.dispose()


def _read(connection: Connection, settings: StateReadbackSettings, deadline: Deadline) -> Records:
    from sqlalchemy import text

    _begin_read_only(connection, deadline)
    streamed = connection.execution_options(stream_results=True, max_row_buffer=MAX_RECORDS + 1)
    result = streamed.execute(text(settings.query or ""), settings.params)
    rows = [record(dict(row)) for row in result.mappings().fetchmany(MAX_RECORDS + 1)]
    if len(rows) > MAX_RECORDS:
        # More rows may follow, which closing the result would read to the end: drop the
        # connection instead (the server rolls back).
        connection.invalidate()
        return rows
    result.close()
    connection.rollback()
    return rows


def _backend(engine: Engine) -> str:
    name = engine.dialect.name
    return "mariadb" if name == "mysql" and engine.url.get_backend_name() == "mariadb" else name


def engine_for(source: str, base_dir: Path, deadline: Deadline) -> Engine:
    """An engine whose every connection is the read-only, deadline-bound session described above
    (for SQLite, the authorizer is added when the read begins)."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError
    from sqlalchemy.pool import NullPool

    try:
        url = make_url(source)
    except ArgumentError as exc:
        raise ReadError(f"not a database URL: {exc}") from None
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url, base_dir, deadline)
    url = url.set(drivername=_DRIVERS.get(url.drivername, url.drivername))
    args = _connect_args(url.get_backend_name(), deadline)
    return create_engine(url, poolclass=NullPool, connect_args=args)


def _connect_args(backend: str, deadline: Deadline) -> dict[str, Any]:
    seconds = max(1, math.ceil(deadline.remaining()))
    milliseconds = max(1, int(deadline.remaining() * 1000))
    if backend == "postgresql":
        # Session settings sent at connect: no statement in the session can turn them off
        # except SET or set_config(), which the parser refuses.
        # Strings are read as the query check read them (a backslash is not an escape).
        options = "-c default_transaction_read_only=on -c standard_conforming_strings=on"
        options += f" -c statement_timeout={milliseconds} -c lock_timeout={milliseconds}"
        return {"connect_timeout": seconds, "options": options}
    if backend in ("mysql", "mariadb"):
        return {"connect_timeout": seconds, "read_timeout": seconds, "write_timeout": seconds}
    raise ReadError(f"no read-only session known for {backend}; refusing to query it")


def _begin_read_only(connection: Connection, deadline: Deadline) -> None:
    from sqlalchemy import text

    backend = connection.dialect.name
    if backend == "postgresql":
        connection.execute(text("SET TRANSACTION READ ONLY"))
    elif backend == "sqlite":
        # Installed now, after SQLAlchemy's own set-up PRAGMAs: from here on, the connection may
        # only read tables and call harmless functions.
        raw = connection.connection.dbapi_connection
        assert isinstance(raw, sqlite3.Connection)
        raw.set_authorizer(_sqlite_authorizer)
    elif backend in ("mysql", "mariadb"):
        # Every transaction of the session is read-only, so a statement that commits implicitly
        # (DDL) lands in another read-only one instead of stepping out.
        connection.execute(text("SET SESSION TRANSACTION READ ONLY"))
        # Strings are read as the query check read them (a backslash escapes), whatever the
        # server's default mode.
        connection.execute(
            text("SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '')")
        )
        seconds = max(0.001, deadline.remaining())
        connection.execute(text(f"SET SESSION max_statement_time = {seconds:.3f}"))
        connection.execute(text("START TRANSACTION READ ONLY"))


def _sqlite_engine(url: URL, base_dir: Path, deadline: Deadline) -> Engine:
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    if not url.database or url.database == ":memory:":
        raise ReadError("a SQLite readback needs a database file")
    path = base_dir / url.database
    # mode=ro: the file is opened read-only by SQLite itself, whatever the query says.
    uri = f"file:{quote(str(path))}?mode=ro"

    def connect() -> sqlite3.Connection:
        connection = sqlite3.connect(
            uri, uri=True, timeout=deadline.remaining(), check_same_thread=False
        )
        # No database can be attached, not even by VACUUM INTO, which attaches its target.
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        # Checked every few thousand steps: a query that never ends is interrupted.
        connection.set_progress_handler(lambda: int(deadline.expired()), 10_000)
        return connection

    return create_engine("sqlite://", creator=connect, poolclass=NullPool)


def _sqlite_authorizer(
    action: int, first: str | None, second: str | None, database: str | None, trigger: str | None
) -> int:
    if action not in _SQLITE_ALLOWED:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (second or "").lower() in DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _message(exc: Exception) -> str:
    # SQLAlchemy appends the statement and a help link; the first line says what went wrong.
    orig = getattr(exc, "orig", None)
    first = str(orig if orig is not None else exc).strip().splitlines()
    return f"{type(orig or exc).__name__}: {first[0] if first else ''}"
