"""The team ledger's tests run against the real PostgreSQL on 127.0.0.1:5432 (database ``test``).

Each test gets its own schema (``report_<random>``), dropped afterwards.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import psycopg
import pytest

URL = "postgresql://postgres@127.0.0.1:5432/test"


def pg_url() -> str:
    """The URL the local server answers on (with or without a user name)."""
    for url in (URL, "postgresql://127.0.0.1:5432/test"):
        try:
            psycopg.connect(url, connect_timeout=3).close()
            return url
        except psycopg.OperationalError:
            continue
    pytest.fail("PostgreSQL at 127.0.0.1:5432 (db test) does not answer")


@pytest.fixture
def pg() -> Iterator[tuple[str, str]]:
    """The server's URL and a fresh schema name, dropped after the test."""
    url, name = pg_url(), f"report_{secrets.token_hex(5)}"
    yield url, name
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def uuids(url: str, schema: str) -> list[str]:
    """The uuids the team ledger holds, sorted (duplicates kept, to be counted)."""
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute(f"SELECT uuid FROM {schema}.receipts ORDER BY uuid")]
