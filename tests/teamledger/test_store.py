"""The team ledger against the real PostgreSQL: shipping, querying, migrating, settings."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from donegate.cli.app import run
from donegate.ledger import Ledger
from donegate.report.build import render
from donegate.report.summary import as_json
from donegate.teamledger import schema as ddl
from donegate.teamledger.settings import team_settings
from donegate.teamledger.ship import sync
from donegate.teamledger.store import TeamLedger, TeamLedgerUnreachable
from tests.report import week
from tests.teamledger.conftest import uuids


def _closed_port() -> str:
    with socket.socket() as s:  # a port nobody listens on: bound, then released
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"postgresql://postgres@127.0.0.1:{port}/test"


def test_a_week_ships_once_and_reports_the_same(pg: tuple[str, str], tmp_path: Path) -> None:
    url, schema = pg
    with Ledger(tmp_path) as local, TeamLedger(url, schema) as team:
        week.fill(local)
        local_report = as_json(render(local.query(), None, "local")[1])
        assert local.outbox_size() == week.EXPECTED["stops"] + 1
        assert sync(local, team).shipped == week.EXPECTED["stops"] + 1
        assert local.outbox_size() == 0
        assert sync(local, team).shipped == 0  # nothing twice
        team_report = as_json(render(team.query(), None, "team")[1])
        assert team_report == local_report
        assert sorted(r.uuid or "" for r in local.query()) == uuids(url, schema)
        machines = {r.machine for r in team.query(verdict="refuted")}
        assert machines == {"dev-alice"}


def test_pending_receipts_wait_until_closed(pg: tuple[str, str], tmp_path: Path) -> None:
    url, schema = pg
    with Ledger(tmp_path) as local, TeamLedger(url, schema) as team:
        rid = local.record(
            session_id="s",
            host="claude-code",
            workspace="/w",
            verdict="unverified",
            decision="allow",
            reason="pending",
            claim={},
        )
        assert sync(local, team).shipped == 0  # a stop still running is not shipped
        local.close_receipt(rid, verdict="verified", decision="allow", reason="ok", claim={})
        assert sync(local, team).shipped == 1
        assert [r.verdict for r in team.query()] == ["verified"]


def test_server_unreachable_midway_keeps_and_ships_later(
    pg: tuple[str, str], tmp_path: Path
) -> None:
    url, schema = pg
    with Ledger(tmp_path) as local:
        week.fill(local)
        with TeamLedger(url, schema) as team:  # a first batch goes through
            assert sync(local, team, batch=5).shipped == 19
        for i in range(7):  # then new stops while the server is gone
            local.record(
                session_id=f"later-{i}",
                host="codex",
                workspace="/w",
                verdict="verified",
                decision="allow",
                reason="verified_after_write",
                claim={},
            )
        with TeamLedger(_closed_port(), schema) as gone, pytest.raises(TeamLedgerUnreachable):
            sync(local, gone)
        assert local.outbox_size() == 7  # kept
        # A crash after the server's commit and before the outbox's: the batch goes again.
        with TeamLedger(url, schema) as team:
            team.ship(local.outbox(3))
            assert sync(local, team).shipped == 7
            assert local.outbox_size() == 0
        found = uuids(url, schema)
        assert len(found) == len(set(found)) == 26  # every receipt, none twice


def test_the_cli_says_unreachable_and_keeps(pg: tuple[str, str], tmp_path: Path) -> None:
    url, schema = pg
    state = ["--state-dir", str(tmp_path), "--schema", schema]
    with Ledger(tmp_path) as local:
        week.fill(local)
    assert run(["ledger", "sync", "--ledger", _closed_port(), *state]) == 4
    with Ledger(tmp_path) as local:
        assert local.outbox_size() == 19
    assert run(["ledger", "sync", "--ledger", url, *state]) == 0
    assert run(["ledger", "status", "--ledger", url, *state]) == 0
    assert len(uuids(url, schema)) == 19
    out = tmp_path / "team.html"
    assert run(["report", "--ledger", url, "--schema", schema, "-o", str(out)]) == 0
    assert "team ledger postgresql://127.0.0.1:5432/test" in out.read_text()


_STOPS = """
import sys
from donegate.ledger import Ledger
from donegate.teamledger.ship import sync
from donegate.teamledger.store import TeamLedger
state, url, schema, who = sys.argv[1:]
for i in range(15):
    with Ledger(state) as local:
        local.record(session_id=f"{who}-{i}", host="claude-code", workspace="/w",
                     verdict="verified", decision="allow", reason="verified_after_write", claim={})
        if i % 4 == 0:
            with TeamLedger(url, schema) as team:
                sync(local, team, batch=3)
"""


def test_concurrent_stops_from_several_processes(pg: tuple[str, str], tmp_path: Path) -> None:
    url, schema = pg
    procs = [
        subprocess.Popen([sys.executable, "-c", _STOPS, str(tmp_path), url, schema, f"p{n}"])
        for n in range(4)
    ]
    assert [p.wait() for p in procs] == [0, 0, 0, 0]
    with Ledger(tmp_path) as local, TeamLedger(url, schema) as team:
        sync(local, team)
        assert local.outbox_size() == 0
        assert team.count() == 60
    found = uuids(url, schema)
    assert len(found) == len(set(found)) == 60


def test_schema_migration_from_version_1(pg: tuple[str, str], tmp_path: Path) -> None:
    url, schema = pg
    with psycopg.connect(url, autocommit=True) as conn:
        assert ddl.migrate(conn, schema, upto=1) == 0
        conn.execute(
            f"INSERT INTO {schema}.receipts (uuid, local_id, session_id, host, workspace, "
            "created_at, verdict, decision, claim, decision_doc) VALUES ('u1', 1, 's', 'codex', "
            "'/w', now(), 'unverified', 'allow', '{}', '{\"on_unverified\": \"warn\"}')"
        )
        indexes = f"SELECT count(*) FROM pg_indexes WHERE schemaname = '{schema}'"
        before = conn.execute(indexes).fetchone()
    with TeamLedger(url, schema) as team:
        assert team.version() == ddl.VERSION == 2
        assert [r.uuid for r in team.query()] == ["u1"]
    with psycopg.connect(url) as conn:
        assert conn.execute(f"SELECT on_unverified FROM {schema}.receipts").fetchone() == ("warn",)
        after = conn.execute(indexes).fetchone()
    assert before is not None
    assert after is not None
    assert after[0] == before[0] + 4


def test_a_newer_schema_is_refused(pg: tuple[str, str]) -> None:
    url, schema = pg
    with TeamLedger(url, schema) as team:
        team.count()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"INSERT INTO {schema}.schema_version (version) VALUES (99)")
    with TeamLedger(url, schema) as team, pytest.raises(Exception, match="version 99"):
        team.count()


def test_local_ledger_of_version_2_is_carried_forward(tmp_path: Path) -> None:
    import sqlite3

    from donegate.ledger import _SCHEMA as V3  # noqa: F401 - the current schema, for contrast

    path = tmp_path / "receipts.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE receipts (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, "
        "host TEXT NOT NULL, workspace TEXT NOT NULL, created_at TEXT NOT NULL, verdict TEXT NOT "
        "NULL, decision TEXT NOT NULL, reason TEXT, claim_json TEXT NOT NULL, decision_json TEXT "
        "NOT NULL); CREATE INDEX receipts_by_session ON receipts (session_id, id);"
        "CREATE INDEX receipts_pending ON receipts (workspace, id) WHERE reason = 'pending';"
        "INSERT INTO receipts VALUES (NULL, 's', 'codex', '/w', '2026-11-01T00:00:00.000000Z', "
        "'verified', 'allow', 'ok', '{}', '{}');"
        "INSERT INTO receipts VALUES (NULL, 's', 'codex', '/w', '2026-11-01T00:01:00.000000Z', "
        "'unverified', 'allow', 'pending', '{}', '{}');"
        "PRAGMA user_version = 2;"
    )
    db.close()
    with Ledger(tmp_path) as local:
        found = local.query()
        assert len({r.uuid for r in found}) == 2
        assert all(found_uuid(r.uuid) for r in found)
        assert [r.reason for r in local.outbox()] == ["ok"]  # the pending one waits


def found_uuid(value: str | None) -> bool:
    return isinstance(value, str) and len(value) == 32


def test_settings_come_from_the_user_not_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DONEGATE_LEDGER_URL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "donegate.toml").write_text('[ledger]\nurl = "postgresql://evil/x"\n')
    assert team_settings() is None  # the agent's tree is not read
    config = tmp_path / "config" / "donegate" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[ledger]\nurl = "${TEAM_PG}"\nschema = "team_a"\n')
    assert team_settings() is None  # the variable is unset: nothing configured
    monkeypatch.setenv("TEAM_PG", "postgresql://db/team")
    assert team_settings() == ("postgresql://db/team", "team_a")
    monkeypatch.setenv("DONEGATE_LEDGER_URL", "postgresql://other/x")
    chosen = team_settings()
    assert chosen is not None
    assert chosen.url == "postgresql://other/x"
    with pytest.raises(Exception, match="schema"):
        team_settings(schema="x; DROP TABLE y")
    assert os.environ["TEAM_PG"]


def test_a_stop_ships_in_the_background(
    pg: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from donegate.teamledger.background import ship_in_background, sync_lock

    url, schema = pg
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    monkeypatch.delenv("DONEGATE_LEDGER_URL", raising=False)
    with Ledger(tmp_path) as local:
        week.fill(local)
    assert ship_in_background(tmp_path) is None  # no team ledger: nothing started
    monkeypatch.setenv("DONEGATE_LEDGER_URL", url)
    monkeypatch.setenv("DONEGATE_LEDGER_SCHEMA", schema)
    with sync_lock(tmp_path) as held:  # a sync already running: the new one leaves
        assert held
        child = ship_in_background(tmp_path)
        assert child is not None
        assert child.wait() == 0
    with Ledger(tmp_path) as local:
        assert local.outbox_size() == 19
    child = ship_in_background(tmp_path)
    assert child is not None
    assert child.wait() == 0
    assert len(uuids(url, schema)) == 19
    with Ledger(tmp_path) as local:
        assert local.outbox_size() == 0


def test_the_background_sync_never_imports_from_the_agents_tree(
    pg: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook runs in the agent's tree; the sync it starts must not import a module from it."""
    from donegate.teamledger.background import ship_in_background

    url, schema = pg
    tree = tmp_path / "tree"
    tree.mkdir()
    marker = tree / "RAN-AGENT-CODE"
    (tree / "fnmatch.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(tree)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    monkeypatch.setenv("DONEGATE_LEDGER_URL", url)
    monkeypatch.setenv("DONEGATE_LEDGER_SCHEMA", schema)
    state = tmp_path / "state"
    with Ledger(state) as local:
        week.fill(local)
    child = ship_in_background(state)
    assert child is not None
    assert child.wait() == 0
    assert not marker.exists()
    assert len(uuids(url, schema)) == 19  # and the sync itself did its work
