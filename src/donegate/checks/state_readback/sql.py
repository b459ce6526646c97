"""SQL readback through SQLAlchemy: SQLite opened read-only, PostgreSQL and MySQL/MariaDB in
read-only transactions, bound parameters only, always rolled back."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from donegate.checks.state_readback._base import MAX_RECORDS, ReadError, Records
from donegate.checks.state_readback._values import record

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine
    from sqlalchemy.engine import URL

    from donegate.checks.state_readback import StateReadbackSettings

# A bare scheme would pick a driver this package does not install.
_DRIVERS = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg"}
_DRIVERS |= {"mysql": "mysql+pymysql", "mariadb": "mariadb+pymysql"}


def read(settings: StateReadbackSettings, base_dir: Path) -> Records:
    """The rows ``settings.query`` returns (at most one more than :data:`MAX_RECORDS`)."""
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    assert settings.query is not None
    engine = _engine(settings.source, base_dir, settings.timeout_s)
    try:
        with engine.connect() as connection:
            _begin_read_only(connection, settings.timeout_s)
            result = connection.execute(text(settings.query), settings.params)
            rows = [record(dict(row)) for row in result.mappings().fetchmany(MAX_RECORDS + 1)]
            connection.rollback()
            return rows
    except (SQLAlchemyError, sqlite3.Error) as exc:
        raise ReadError(_message(exc)) from None
    finally:
        engine.dispose()


def _engine(source: str, base_dir: Path, timeout_s: float) -> Engine:
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError
    from sqlalchemy.pool import NullPool

    try:
        url = make_url(source)
    except ArgumentError as exc:
        raise ReadError(f"not a database URL: {exc}") from None
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url, base_dir, timeout_s)
    url = url.set(drivername=_DRIVERS.get(url.drivername, url.drivername))
    args = _connect_args(url.get_backend_name(), timeout_s)
    return create_engine(url, poolclass=NullPool, connect_args=args)


def _sqlite_engine(url: URL, base_dir: Path, timeout_s: float) -> Engine:
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    if not url.database or url.database == ":memory:":
        raise ReadError("a SQLite readback needs a database file")
    path = base_dir / url.database
    # mode=ro: the file is opened read-only by SQLite itself, whatever the query says.
    uri = f"file:{quote(str(path))}?mode=ro"

    def connect() -> sqlite3.Connection:
        return sqlite3.connect(uri, uri=True, timeout=timeout_s, check_same_thread=False)

    return create_engine("sqlite://", creator=connect, poolclass=NullPool)


def _connect_args(backend: str, timeout_s: float) -> dict[str, Any]:
    seconds = max(1, math.ceil(timeout_s))
    if backend == "postgresql":
        return {"connect_timeout": seconds}
    if backend in ("mysql", "mariadb"):
        return {"connect_timeout": seconds, "read_timeout": seconds, "write_timeout": seconds}
    return {}


def _begin_read_only(connection: Connection, timeout_s: float) -> None:
    from sqlalchemy import text

    backend = connection.dialect.name
    if backend == "postgresql":
        connection.execute(text("SET TRANSACTION READ ONLY"))
        milliseconds = max(1, int(timeout_s * 1000))
        connection.execute(text(f"SET LOCAL statement_timeout = {milliseconds}"))
    elif backend in ("mysql", "mariadb"):
        connection.execute(text("START TRANSACTION READ ONLY"))
    elif backend != "sqlite":
        raise ReadError(f"no read-only transaction known for {backend}; refusing to query it")


def _message(exc: Exception) -> str:
    # SQLAlchemy appends the statement and a help link; the first line says what went wrong.
    orig = getattr(exc, "orig", None)
    first = str(orig if orig is not None else exc).strip().splitlines()
    return f"{type(orig or exc).__name__}: {first[0] if first else ''}"
