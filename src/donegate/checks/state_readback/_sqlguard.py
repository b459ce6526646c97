"""Which SQL a readback may send: one plain read, decided on the parsed statement.

This is the first of two locks (the second is a session the server itself keeps read-only). The
query is parsed with sqlglot in its server's dialect, and refused unless it is exactly one
``SELECT`` (or a set operation of them) with no part that writes, locks, copies out, changes the
session, or calls a function known to have side effects. Anything the parser cannot read is
refused: a query donegate does not understand is not run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from donegate.checks.state_readback._base import ReadError

if TYPE_CHECKING:
    from sqlglot import exp

DIALECTS = {"postgresql": "postgres", "mysql": "mysql", "mariadb": "mysql", "sqlite": "sqlite"}

# Parts of a tree that write, lock, leave the transaction or reach outside the database. Names,
# because not every sqlglot release defines every class; a missing one cannot appear in a tree.
_DENIED_NODES = (
    "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "TruncateTable",
    "Command", "Copy", "Into", "Lock", "Set", "Pragma", "Attach", "Detach", "Transaction",
    "Commit", "Rollback", "Use", "Analyze", "LoadData", "PropertyEQ", "NextValueFor",
    "Grant", "Revoke", "Kill", "Cache", "Uncache", "Refresh",
)  # fmt: skip

# Functions that write, take locks, open other connections, run SQL given as text, or change the
# session. Named where we know them; the read-only session and the role catch the rest.
DENIED_FUNCTIONS = frozenset(
    {
        # PostgreSQL
        "pg_write_file", "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_file_sync",
        "lo_export", "lo_import", "lo_create", "lo_creat", "lo_unlink", "lo_from_bytea",
        "lo_put", "lo_truncate", "lowrite", "lo_open",
        "dblink", "dblink_exec", "dblink_connect", "dblink_connect_u", "dblink_send_query",
        "dblink_open", "dblink_fetch",
        "nextval", "setval", "set_config", "txid_current", "pg_current_xact_id",
        "pg_advisory_lock", "pg_advisory_lock_shared", "pg_advisory_xact_lock",
        "pg_advisory_xact_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared",
        "pg_try_advisory_xact_lock", "pg_try_advisory_xact_lock_shared", "pg_advisory_unlock",
        "pg_advisory_unlock_shared", "pg_advisory_unlock_all",
        "pg_notify", "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf",
        "pg_rotate_logfile", "pg_switch_wal", "pg_create_restore_point", "pg_promote",
        "pg_logical_emit_message", "pg_create_logical_replication_slot",
        "pg_create_physical_replication_slot", "pg_drop_replication_slot", "pg_stat_reset",
        "pg_stat_reset_shared", "pg_backup_start", "pg_backup_stop",
        "pg_import_system_collations", "pg_log_backend_memory_contexts",
        "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema",
        # MariaDB / MySQL
        "get_lock", "release_lock", "release_all_locks", "lastval", "sys_exec", "sys_eval",
        "master_pos_wait", "master_gtid_wait",
        # SQLite
        "load_extension", "writefile", "edit", "fts3_tokenizer",
    }
)  # fmt: skip


# Families of PostgreSQL functions that write, signal or consume (replication slots, statistics
# resets, large objects, server files, other connections), whatever their members are named.
DENIED_PREFIXES = (
    "pg_stat_reset", "pg_stat_statements_reset", "pg_replication_", "pg_logical_",
    "pg_create_", "pg_drop_", "pg_copy_", "pg_advisory", "pg_try_advisory", "pg_file_",
    "pg_wal_replay", "pg_backup", "pg_signal", "lo_", "dblink",
)  # fmt: skip


def plain_read(query: str, backend: str) -> None:
    """Return when ``query`` is one plain read in ``backend``'s dialect; raise ReadError if not."""
    try:
        import sqlglot
        from sqlglot.errors import SqlglotError
    except ImportError:
        raise ReadError("SQL readbacks need sqlglot: pip install 'donegate[sql]'") from None

    dialect = DIALECTS.get(backend)
    if dialect is None:
        raise ReadError(f"no SQL dialect known for {backend}; refusing to query it")
    try:
        _no_comments(query, dialect, sqlglot.tokenize(query, read=dialect))
        with _quiet_parser():
            statements = [s for s in sqlglot.parse(query, read=dialect) if s is not None]
    except SqlglotError as exc:
        first = str(exc).strip().splitlines()
        raise ReadError(f"the query could not be parsed, so it is not run: {first[0]}") from None
    if len(statements) != 1:
        raise ReadError(f"the query holds {len(statements)} statements; a readback sends one")
    _only_reads(statements[0])  # type: ignore[arg-type]


@contextmanager
def _quiet_parser() -> Iterator[None]:
    # sqlglot warns when it falls back to an opaque command; the refusal says it better.
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _no_comments(query: str, dialect: str, tokens: Sequence[object]) -> None:
    # MySQL runs the text of /*! ... */ comments; a comment is where the parser and the server
    # can disagree, so a readback query holds none, nor the marks of one even inside a string
    # (text like that belongs in a bound parameter).
    marks = ("--", "/*", "#") if dialect == "mysql" else ("--", "/*")
    if any(mark in query for mark in marks) or any(getattr(t, "comments", None) for t in tokens):
        raise ReadError(
            f"the query holds a comment or its mark ({', '.join(marks)}); "
            "a readback query holds none (pass such text as a parameter)"
        )


def _only_reads(statement: exp.Expression) -> None:
    from sqlglot import exp

    roots = (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Subquery)
    if not isinstance(statement, roots):
        raise ReadError(f"{_shown(statement)} statement is not a plain read")
    nodes = tuple(getattr(exp, name) for name in _DENIED_NODES if hasattr(exp, name))
    for node in statement.walk():
        if isinstance(node, nodes):
            raise ReadError(f"the query holds {_shown(node)}, which is not a plain read")
        calls = sorted(name for name in _names(node) if _denied(name))
        if calls:
            raise ReadError(f"the query calls {calls[0]}(), which has side effects")


def _denied(function_name: str) -> bool:
    return function_name in DENIED_FUNCTIONS or function_name.startswith(DENIED_PREFIXES)


def _names(function: object) -> set[str]:
    from sqlglot import exp

    if isinstance(function, exp.Anonymous):
        return {function.name.lower()}
    if isinstance(function, exp.Func):
        return {name.lower() for name in function.sql_names()}
    return set()


def _shown(node: exp.Expression) -> str:
    from sqlglot import exp

    if isinstance(node, exp.Lock):
        return "a locking clause (FOR UPDATE / FOR SHARE)"
    if isinstance(node, exp.Into):
        return "INTO"
    if isinstance(node, exp.PropertyEQ):
        return "an assignment (:=)"
    if isinstance(node, exp.Command):
        return f"a {str(node.this).upper()}"
    return f"a {node.key.upper()}"
