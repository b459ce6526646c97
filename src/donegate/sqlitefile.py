"""What donegate's SQLite files (gate state, receipts) share: creating a schema exactly once.

Both are opened by several hook processes at the same instant, so creating the schema is itself
a transaction, and a file whose schema is not ours is refused rather than read as empty.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path


def connect(path: Path, timeout_s: float) -> sqlite3.Connection:
    """A connection in autocommit mode, write-ahead logged, with a busy timeout.

    In WAL mode ``synchronous = NORMAL`` keeps every commit through a killed process (what a
    receipt opened before the checks, or a veto counted before it is told, must survive) and
    spares the ``fsync`` of a rollback journal at every commit: two on every agent stop.
    """
    db = sqlite3.connect(path, timeout=timeout_s, isolation_level=None)
    try:
        db.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
        _to_wal(db, timeout_s)
        db.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        db.close()
        raise
    return db


def _to_wal(db: sqlite3.Connection, timeout_s: float) -> None:
    """Put the file in write-ahead-log mode, waiting up to ``timeout_s`` for others.

    A new file is in rollback mode until the first process switches it. Switching needs the file
    to itself, and while another process holds a write transaction on it SQLite answers "busy"
    at once, whatever the busy timeout (waiting could deadlock): twenty hooks starting one
    session together met that, and one failed. The switch is tried again until the timeout.
    """
    deadline = time.monotonic() + timeout_s
    pause = 0.002
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            busy = str(getattr(exc, "sqlite_errorname", "")).startswith("SQLITE_BUSY")
            if not busy or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.05)


_held: list[sqlite3.Connection] = []


def hold(paths: Iterable[Path]) -> None:
    """Keep a connection to each existing database of ``paths`` open until this process ends.

    SQLite checkpoints the write-ahead log when the last connection to a database closes: two
    ``fsync`` s, then the next process creates the log again and syncs it and its directory,
    four more. A stop hook, which ends right after its few commits, holds one connection more
    than it closes and ends with ``os._exit`` (:func:`donegate.cli.main`): its commits stay in
    the log, as durable as every commit under ``synchronous = NORMAL`` (a killed process loses
    none), and a later commit checkpoints them once the log has grown (SQLite's automatic
    checkpoint). Best effort: a database that cannot be opened is just closed as before.
    """
    for path in paths:
        if not path.is_file():
            continue  # a new database is created, and checkpointed, the usual way
        try:
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA user_version").fetchone()  # opened, and so counted as open
        except sqlite3.Error:
            continue
        _held.append(db)


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
    with writing(db):
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


@contextlib.contextmanager
def writing(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction on ``db``, committed at the end, rolled back on any exception.

    ``BEGIN IMMEDIATE`` takes the write lock first: hooks running in parallel queue for it,
    instead of each reading, then failing to upgrade to a write.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
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
    # A write-ahead-logged file that cannot grow its shared-memory index: a full disk, mostly.
    "SQLITE_IOERR_SHMSIZE": "the disk is full, or refused to grow SQLite's shared-memory file",
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


def cause(exc: sqlite3.Error, path: Path | None = None) -> str:
    """SQLite's error as a person reads it: the cause first (disk full, read-only, permission).

    ``path`` is the database file: a write-ahead-logged file on a read-only file system cannot
    be opened at all (its shared-memory file cannot be made), and the file system says why.
    """
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    primary = "_".join(name.split("_")[:2])  # SQLITE_IOERR_WRITE -> SQLITE_IOERR
    if primary == "SQLITE_CANTOPEN" and path is not None and _read_only(path.parent):
        return f"{_CAUSES['SQLITE_READONLY']} ({exc}; {name})"
    known = _CAUSES.get(name) or _CAUSES.get(primary)
    if name and known:
        return f"{known} ({exc}; {name})"
    return f"{exc} ({name})" if name else str(exc)


def _read_only(directory: Path) -> bool:
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _run(db: sqlite3.Connection, script: str) -> None:
    # One statement at a time: executescript() would commit our transaction first.
    for statement in filter(str.strip, script.split(";")):
        db.execute(statement)


def _version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _is_empty(db: sqlite3.Connection) -> bool:
    return bool(db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0)
