"""The team ledger's tables, created and carried forward by donegate (a versioned schema table).

Each entry of :data:`MIGRATIONS` brings the schema from the version before it; all run in one
transaction under an advisory lock, so two machines syncing for the first time create it once.
"""

from __future__ import annotations

from typing import Any

# Version 1: the receipts, one row per receipt uuid.
_V1 = """
CREATE TABLE {s}.receipts (
    id BIGSERIAL UNIQUE,
    uuid TEXT PRIMARY KEY,
    local_id BIGINT NOT NULL,
    session_id TEXT NOT NULL,
    host TEXT NOT NULL,
    workspace TEXT NOT NULL,
    machine TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    verdict TEXT NOT NULL,
    decision TEXT NOT NULL,
    reason TEXT,
    claim JSONB NOT NULL,
    decision_doc JSONB NOT NULL,
    shipped_at TIMESTAMPTZ NOT NULL DEFAULT now()
)
"""
# Version 2: the mode each stop was judged under, and indexes for the report's windows.
_V2 = """
ALTER TABLE {s}.receipts ADD COLUMN on_unverified TEXT;
UPDATE {s}.receipts SET on_unverified = decision_doc ->> 'on_unverified';
CREATE INDEX receipts_by_time ON {s}.receipts (created_at);
CREATE INDEX receipts_by_workspace ON {s}.receipts (workspace, created_at);
CREATE INDEX receipts_by_session ON {s}.receipts (session_id, created_at);
CREATE INDEX receipts_by_verdict ON {s}.receipts (verdict, created_at)
"""
MIGRATIONS = (_V1, _V2)
VERSION = len(MIGRATIONS)
_LOCK_KEY = 0x646F6E65  # "done": one advisory lock for every donegate migration


def migrate(conn: Any, schema: str, upto: int = VERSION) -> int:
    """Bring ``schema`` to version ``upto`` (creating it); the version found before."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {schema}.schema_version "
            "(version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        found = current(conn, schema)
        if found > VERSION:
            from donegate.errors import InvalidInput

            raise InvalidInput(
                f"team ledger schema {schema} is at version {found}, this donegate knows up to "
                f"{VERSION}: upgrade donegate"
            )
        for version in range(found + 1, upto + 1):
            for statement in filter(str.strip, MIGRATIONS[version - 1].split(";")):
                conn.execute(statement.format(s=schema))
            conn.execute(f"INSERT INTO {schema}.schema_version (version) VALUES (%s)", (version,))
    return found


def current(conn: Any, schema: str) -> int:
    """The schema's version (0: not created)."""
    row = conn.execute(f"SELECT coalesce(max(version), 0) FROM {schema}.schema_version").fetchone()
    return int(row[0])
