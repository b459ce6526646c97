"""Readbacks cannot write: each attack plays against the real PostgreSQL, MariaDB and SQLite.

Every test first shows the statement really writes when run outside donegate (the control), then
that through a readback nothing changed: row counts, tables, files on the server's disk.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from donegate.checks._deadline import Deadline
from donegate.checks.state_readback import StateReadbackSettings, sql
from donegate.checks.state_readback._base import ReadError
from donegate.checks.state_readback._sqlguard import plain_read
from tests.checks.support import collect_one, detail, only, state

POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
MARIADB = "mysql+pymysql://root@127.0.0.1:3306/test"


@dataclass(frozen=True)
class Scratch:
    """A table with one row in a real server, and a unique name for anything an attack makes."""

    admin_url: str
    name: str

    @property
    def source(self) -> str:
        return self.admin_url.replace("+psycopg", "").replace("+pymysql", "")

    def run(self, *statements: str) -> None:
        """Run ``statements`` on one connection outside donegate (the control), in autocommit."""
        engine = create_engine(self.admin_url, isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as connection:
                for statement in statements:
                    connection.exec_driver_sql(statement)
        finally:
            engine.dispose()

    def scalar(self, query: str) -> object:
        engine = create_engine(self.admin_url)
        try:
            with engine.connect() as connection:
                return connection.execute(text(query)).scalar()
        finally:
            engine.dispose()

    def rows(self) -> object:
        return self.scalar(f"SELECT count(*) FROM {self.name}")

    def has_table(self, name: str) -> bool:
        found = self.scalar(
            f"SELECT count(*) FROM information_schema.tables WHERE table_name = '{name}'"
        )
        return found == 1


def scratch(admin_url: str) -> Iterator[Scratch]:
    table = Scratch(admin_url, f"readonly_{uuid.uuid4().hex[:10]}")
    table.run(f"CREATE TABLE {table.name} (id INTEGER PRIMARY KEY, zip VARCHAR(10))")
    table.run(f"INSERT INTO {table.name} VALUES (1, '94107')")
    try:
        yield table
    finally:
        for suffix in ("", "_made", "_control"):
            table.run(f"DROP TABLE IF EXISTS {table.name}{suffix}")


@pytest.fixture
def pg() -> Iterator[Scratch]:
    yield from scratch(POSTGRES)


@pytest.fixture
def maria() -> Iterator[Scratch]:
    yield from scratch(MARIADB)


@pytest.fixture
def server_file() -> Iterator[Path]:
    """A path in /tmp that the database servers on this machine can write to."""
    path = Path(f"/tmp/readonly_{uuid.uuid4().hex[:10]}.out")
    yield path
    path.unlink(missing_ok=True)


def readback(source: str, query: str, tmp_path: Path) -> tuple[str, str]:
    """Collect a readback of ``query``; its verdict state and why it did not count."""
    toml = f"""
        [[checks]]
        check_type = "state_readback"
        target = "accounts/1"
        source = {json.dumps(source)}
        query = {json.dumps(query)}
        expected = {{ zip = "94107" }}
        timeout_s = 10
    """
    done = collect_one(toml, tmp_path, "accounts/1")
    return state(done), str(detail(only(done)).get("why_not_counted"))


# PostgreSQL


def test_postgres_commit_then_insert_inserts_nothing(pg: Scratch, tmp_path: Path) -> None:
    attack = f"COMMIT; INSERT INTO {pg.name} VALUES (2, '00000')"
    # The control: a read-only transaction alone does not stop it.
    pg.run("BEGIN TRANSACTION READ ONLY; " + attack.replace("(2,", "(3,"))
    assert pg.rows() == 2
    outcome, why = readback(
        pg.source, f"SELECT zip FROM {pg.name} WHERE id = 1; {attack}", tmp_path
    )
    assert outcome == "unverified"
    assert "statements; a readback sends one" in why
    assert pg.rows() == 2


def test_postgres_commit_then_create_table_creates_nothing(pg: Scratch, tmp_path: Path) -> None:
    pg.run(f"BEGIN TRANSACTION READ ONLY; COMMIT; CREATE TABLE {pg.name}_control (id int)")
    assert pg.has_table(f"{pg.name}_control")
    attack = f"SELECT 1 AS zip; COMMIT; CREATE TABLE {pg.name}_made (id int)"
    outcome, _ = readback(pg.source, attack, tmp_path)
    assert outcome == "unverified"
    assert not pg.has_table(f"{pg.name}_made")


def test_postgres_copy_to_a_server_file_writes_nothing(
    pg: Scratch, tmp_path: Path, server_file: Path
) -> None:
    control = server_file.with_suffix(".control")
    pg.run(f"COPY (SELECT 1) TO '{control}'")
    assert control.exists()
    control.unlink()
    outcome, why = readback(
        pg.source, f"COPY (SELECT zip FROM {pg.name}) TO '{server_file}'", tmp_path
    )
    assert outcome == "unverified"
    assert "COPY" in why
    assert not server_file.exists()


@pytest.mark.parametrize(
    ("attack", "refusal"),
    [
        ("WITH gone AS (DELETE FROM {t} RETURNING zip) SELECT zip FROM gone", "DELETE"),
        ("SELECT zip FROM {t} WHERE id = 1 FOR UPDATE", "locking clause"),
        ("SELECT zip FROM {t} WHERE id = 1 AND nextval('{t}_seq') > 0", "nextval"),
    ],
)
def test_postgres_writes_inside_a_select_are_refused(
    pg: Scratch, tmp_path: Path, attack: str, refusal: str
) -> None:
    pg.run(f"CREATE SEQUENCE {pg.name}_seq")
    try:
        outcome, why = readback(pg.source, attack.format(t=pg.name), tmp_path)
        assert outcome == "unverified"
        assert refusal in why
        assert pg.rows() == 1
        assert pg.scalar(f"SELECT last_value FROM {pg.name}_seq") == 1
        assert pg.scalar(f"SELECT is_called FROM {pg.name}_seq") is False
    finally:
        pg.run(f"DROP SEQUENCE IF EXISTS {pg.name}_seq")


def test_postgres_session_stays_read_only_after_a_commit(pg: Scratch) -> None:
    """The second lock alone: the session donegate opens refuses the write a COMMIT frees."""
    engine = sql.engine_for(pg.source, Path("."), Deadline(10))
    try:
        with engine.connect() as connection, pytest.raises(Exception, match="read-only"):
            connection.exec_driver_sql(f"COMMIT; INSERT INTO {pg.name} VALUES (2, 'x')")
    finally:
        engine.dispose()
    assert pg.rows() == 1


def test_postgres_session_reads_strings_as_the_parser_does(pg: Scratch) -> None:
    engine = sql.engine_for(pg.source, Path("."), Deadline(10))
    try:
        with engine.connect() as connection:
            shown = {
                name: connection.exec_driver_sql(f"SHOW {name}").scalar()
                for name in ("default_transaction_read_only", "standard_conforming_strings")
            }
            timeout = connection.exec_driver_sql("SHOW statement_timeout").scalar()
    finally:
        engine.dispose()
    assert shown == {"default_transaction_read_only": "on", "standard_conforming_strings": "on"}
    assert timeout not in (None, "0")


# MariaDB


def test_mariadb_create_table_creates_nothing(maria: Scratch, tmp_path: Path) -> None:
    maria.run("START TRANSACTION READ ONLY")
    maria.run(f"CREATE TABLE {maria.name}_control (id int)")  # commits implicitly, and runs
    assert maria.has_table(f"{maria.name}_control")
    outcome, _ = readback(maria.source, f"CREATE TABLE {maria.name}_made (id int)", tmp_path)
    assert outcome == "unverified"
    assert not maria.has_table(f"{maria.name}_made")


def test_mariadb_truncate_empties_nothing(maria: Scratch, tmp_path: Path) -> None:
    maria.run(f"CREATE TABLE {maria.name}_control AS SELECT * FROM {maria.name}")
    maria.run("START TRANSACTION READ ONLY", f"TRUNCATE TABLE {maria.name}_control")
    assert maria.scalar(f"SELECT count(*) FROM {maria.name}_control") == 0
    outcome, _ = readback(maria.source, f"TRUNCATE TABLE {maria.name}", tmp_path)
    assert outcome == "unverified"
    assert maria.rows() == 1


@pytest.mark.parametrize("into", ["OUTFILE", "DUMPFILE"])
def test_mariadb_select_into_a_file_writes_nothing(
    maria: Scratch, tmp_path: Path, server_file: Path, into: str
) -> None:
    control = server_file.with_suffix(".control")
    maria.run(f"SELECT zip FROM {maria.name} INTO {into} '{control}'")
    assert control.exists()
    control.unlink()
    attack = f"SELECT zip FROM {maria.name} WHERE id = 1 INTO {into} '{server_file}'"
    outcome, _ = readback(maria.source, attack, tmp_path)
    assert outcome == "unverified"
    assert not server_file.exists()


def test_mariadb_executable_comment_writes_nothing(
    maria: Scratch, tmp_path: Path, server_file: Path
) -> None:
    # MariaDB runs the text of /*! ... */; a parser reads it as a comment.
    control = server_file.with_suffix(".control")
    maria.run(f"SELECT zip FROM {maria.name} /*! INTO OUTFILE '{control}' */")
    assert control.exists()
    control.unlink()
    attack = f"SELECT zip FROM {maria.name} WHERE id = 1 /*! INTO OUTFILE '{server_file}' */"
    outcome, why = readback(maria.source, attack, tmp_path)
    assert outcome == "unverified"
    assert "comment" in why
    assert not server_file.exists()


@pytest.mark.parametrize(
    "attack",
    ["CREATE TABLE {t}_made (id int)", "TRUNCATE TABLE {t}", "DELETE FROM {t}"],
)
def test_mariadb_session_is_read_only_without_the_parser(maria: Scratch, attack: str) -> None:
    """The second lock alone: with the query check skipped, the session still refuses."""
    settings = StateReadbackSettings(
        check_type="state_readback",
        target="t",
        source=maria.source,
        query=attack.format(t=maria.name),
        expected={"zip": "94107"},
    )
    with pytest.raises(ReadError, match="READ ONLY"):
        sql.read(settings, Path("."), Deadline(10), check_query=lambda query, backend: None)
    assert maria.rows() == 1
    assert not maria.has_table(f"{maria.name}_made")


def test_mariadb_session_escapes_backslashes_whatever_the_server_mode(maria: Scratch) -> None:
    """With NO_BACKSLASH_ESCAPES, 'a\\' INTO OUTFILE ... -- ' would hide code from the parser."""
    engine = sql.engine_for(maria.source, Path("."), Deadline(10))
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'")
            sql._begin_read_only(connection, Deadline(10))
            mode = connection.exec_driver_sql("SELECT @@SESSION.sql_mode").scalar()
    finally:
        engine.dispose()
    assert "NO_BACKSLASH_ESCAPES" not in str(mode)


# SQLite


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Path:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, zip TEXT)")
        connection.execute("INSERT INTO accounts VALUES (1, '94107')")
    connection.close()
    return path


def sqlite_control(path: Path, statement: str) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute(statement)
    finally:
        connection.close()


@pytest.mark.parametrize(
    "attack",
    ["ATTACH 'file:{made}?mode=rwc' AS other", "VACUUM INTO '{made}'"],
)
def test_sqlite_attach_and_vacuum_into_write_no_file(
    sqlite_db: Path, tmp_path: Path, attack: str
) -> None:
    control = tmp_path / "control.db"
    sqlite_control(sqlite_db, attack.format(made=control))
    assert control.exists()
    made = tmp_path / "made.db"
    outcome, _ = readback("sqlite:///app.db", attack.format(made=made), tmp_path)
    assert outcome == "unverified"
    assert not made.exists()


@pytest.mark.parametrize(
    "attack",
    [
        "ATTACH 'file:{made}?mode=rwc' AS other",
        "VACUUM INTO '{made}'",
        "PRAGMA user_version = 7",
        "DELETE FROM accounts",
        "CREATE TABLE made (id int)",
    ],
)
def test_sqlite_session_is_read_only_without_the_parser(
    sqlite_db: Path, tmp_path: Path, attack: str
) -> None:
    """The second lock alone: mode=ro, no attached databases, and the authorizer."""
    made = tmp_path / "made.db"
    settings = StateReadbackSettings(
        check_type="state_readback",
        target="t",
        source="sqlite:///app.db",
        query=attack.format(made=made),
        expected={"zip": "94107"},
    )
    before = sqlite_db.read_bytes()
    with pytest.raises(ReadError):
        sql.read(settings, tmp_path, Deadline(10), check_query=lambda query, backend: None)
    assert not made.exists()
    assert sqlite_db.read_bytes() == before


# The parser, statement by statement


@pytest.mark.parametrize(
    ("backend", "query"),
    [
        ("postgresql", "SELECT zip FROM accounts WHERE id = :id"),
        ("postgresql", "SELECT zip::text FROM accounts WHERE id = :id UNION SELECT 'x'"),
        ("postgresql", "WITH a AS (SELECT 1 AS n) SELECT n FROM a"),
        ("postgresql", "SELECT pg_sleep(0)"),
        ("postgresql", "SELECT lower(zip), log(2, 8) FROM accounts"),
        ("mariadb", "SELECT `zip` FROM accounts WHERE id = :id"),
        ("sqlite", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT 1"),
    ],
)
def test_plain_reads_pass(backend: str, query: str) -> None:
    plain_read(query, backend)


@pytest.mark.parametrize(
    ("backend", "query"),
    [
        ("postgresql", "SELECT 1; SELECT 2"),
        ("postgresql", "SELECT 1 INTO made"),
        ("postgresql", "SELECT pg_catalog.lo_export(1, '/tmp/x')"),
        ("postgresql", "SELECT set_config('default_transaction_read_only', 'off', false)"),
        ("postgresql", "SELECT dblink_exec('host=x', 'DELETE FROM t')"),
        ("postgresql", "SELECT setval('s', 1)"),
        ("postgresql", "SELECT * FROM pg_logical_slot_get_changes('slot', NULL, NULL)"),
        ("postgresql", "SELECT pg_stat_reset_single_table_counters(1)"),
        ("postgresql", "SELECT * FROM t FOR SHARE"),
        ("postgresql", "SET default_transaction_read_only = off"),
        ("postgresql", "DO $$ BEGIN DELETE FROM t; END $$"),
        ("postgresql", "CALL p()"),
        ("postgresql", "LOCK TABLE t"),
        ("postgresql", "EXPLAIN ANALYZE DELETE FROM t"),
        ("postgresql", "SELECT 1 -- a comment"),
        ("postgresql", "SELECT ((("),
        ("mariadb", "SELECT 1 INTO @v"),
        ("mariadb", "SELECT @v := 1"),
        ("mariadb", "SELECT GET_LOCK('x', 1)"),
        ("mariadb", "SELECT * FROM t LOCK IN SHARE MODE"),
        ("mariadb", "SELECT 1 # comment"),
        ("mariadb", "SELECT zip FROM t WHERE tag = '#1'"),
        ("postgresql", "SELECT zip FROM t WHERE note = 'a -- b'"),
        ("mariadb", "HANDLER t OPEN"),
        ("sqlite", "PRAGMA user_version"),
        ("sqlite", "SELECT load_extension('x')"),
        ("sqlite", "REINDEX"),
        ("sqlite", "WITH a AS (SELECT 1) INSERT INTO t SELECT * FROM a"),
        ("mssql", "SELECT 1"),
    ],
)
def test_everything_else_is_refused(backend: str, query: str) -> None:
    with pytest.raises(ReadError):
        plain_read(query, backend)
