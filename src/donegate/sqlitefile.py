"""What donegate's SQLite files (gate state, receipts) share: creating a schema exactly once.

Both are opened by several hook processes at the same instant, so creating the schema is itself
a transaction, and a file whose schema is not ours is refused rather than read as empty.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path


def migrate(
    db: sqlite3.Connection,
    path: Path,
    schema: str,
    version: int,
    refuse: Callable[[str], Exception],
    upgrades: Mapping[int, str] | None = None,
) -> None:
    """Create ``schema`` (as ``user_version = version``) in a new file; refuse another's file.

    ``upgrades`` maps an older version to the statements that bring it to the next one, so a file
    written by an earlier donegate is carried forward in one transaction rather than refused.
    ``refuse`` builds the error raised for a file with another schema; the caller's own type.
    """
    if _version(db) == version:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        found = _version(db)  # again: another process may have created it meanwhile
        if found == 0 and _is_empty(db):
            _run(db, schema)
            db.execute(f"PRAGMA user_version = {version}")
        elif 0 < found < version and all(v in (upgrades or {}) for v in range(found, version)):
            for step in range(found, version):
                _run(db, (upgrades or {})[step])
            db.execute(f"PRAGMA user_version = {version}")
        elif found != version:
            raise refuse(f"{path}: schema version {found}, expected {version}")
        db.execute("COMMIT")
    except BaseException:
        rollback(db)
        raise


def rollback(db: sqlite3.Connection) -> None:
    """Roll back the open transaction, if SQLite has not already (it does on a full disk).

    A failing ROLLBACK must not replace the error that caused it: "cannot rollback - no
    transaction is active" would hide "database or disk is full".
    """
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):  # the original error is the one to report
            db.execute("ROLLBACK")


_CAUSES = {
    "SQLITE_FULL": "the disk is full",
    "SQLITE_READONLY": "the file or its file system is read-only",
    "SQLITE_READONLY_DIRECTORY": "the directory or its file system is read-only",
    "SQLITE_CANTOPEN": "it cannot be opened (permission denied, or no such directory)",
    "SQLITE_PERM": "permission denied",
    "SQLITE_AUTH": "permission denied",
    "SQLITE_BUSY": "another process held the lock for too long",
    "SQLITE_LOCKED": "another connection held the lock for too long",
    "SQLITE_CORRUPT": "the file is corrupt",
    "SQLITE_NOTADB": "it is not an SQLite database",
    "SQLITE_IOERR": "the file system failed a read or write (full, read-only or failing)",
}


def cause(exc: sqlite3.Error) -> str:
    """SQLite's error as a person reads it: the cause first (disk full, read-only, permission)."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    primary = "_".join(name.split("_")[:2])  # SQLITE_IOERR_WRITE -> SQLITE_IOERR
    known = _CAUSES.get(name) or _CAUSES.get(primary)
    if name and known:
        return f"{known} ({exc}; {name})"
    return f"{exc} ({name})" if name else str(exc)


def _run(db: sqlite3.Connection, script: str) -> None:
    # One statement at a time: executescript() would commit our transaction first.
    for statement in filter(str.strip, script.split(";")):
        db.execute(statement)


def _version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _is_empty(db: sqlite3.Connection) -> bool:
    return bool(db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0)
