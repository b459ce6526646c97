"""The team ledger under faults: a receipt the server refuses, a server that stops answering, a
sync stuck holding the lock, a state directory it cannot write. Against the real PostgreSQL.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from donegate.cli.app import run
from donegate.ledger import Ledger
from donegate.teamledger.setaside import SetAside
from donegate.teamledger.ship import sync
from donegate.teamledger.store import TeamLedger
from tests.teamledger.conftest import uuids

DONEGATE = str(Path(sys.executable).with_name("donegate"))
PROXY = str(Path(__file__).with_name("tcpproxy.py"))
# Only a hang takes this long: every wait below is bounded by the command's own --timeout 1.
HANG_S = 120


def _record(local: Ledger, n: int, **content: object) -> int:
    fields: dict[str, object] = {"host": "codex", "claim": {"n": n}} | content
    return local.record(
        session_id=f"s-{n}",
        workspace="/w",
        verdict="verified",
        decision="allow",
        reason="verified_after_write",
        **fields,  # type: ignore[arg-type]
    )


def _shipped_in_order(url: str, schema: str) -> list[int]:
    """The local ids the team ledger holds, in the order it first received them."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(f"SELECT local_id FROM {schema}.receipts ORDER BY id").fetchall()
    return [r[0] for r in rows]


def test_a_refused_receipt_is_set_aside_and_the_rest_ship_in_order(
    pg: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, schema = pg
    with Ledger(tmp_path) as local:
        _record(local, 1)
        _record(local, 2, claim={"summary": "done\x00"})  # PostgreSQL's jsonb refuses \u0000
        _record(local, 3)
        _record(local, 4, host="co\x00dex")  # and so does text: psycopg refuses before sending
        _record(local, 5)
    args = ["--ledger", url, "--schema", schema, "--state-dir", str(tmp_path)]
    assert run(["ledger", "sync", *args]) == 0
    assert _shipped_in_order(url, schema) == [1, 3, 5]
    assert "2 receipts refused by the server and set aside" in capsys.readouterr().err
    assert run(["ledger", "status", *args]) == 0
    said = capsys.readouterr().err
    assert "set aside: 2 receipts" in said
    assert "receipt 2 (" in said
    assert "UntranslatableCharacter" in said  # the server's reason
    assert "receipt 4 (" in said
    assert "NUL" in said  # psycopg's
    with Ledger(tmp_path) as local:
        assert [r.id for r in local.outbox()] == [2, 4]  # kept, not lost
        _record(local, 6)
    assert run(["ledger", "sync", *args]) == 0  # the set-aside ones are skipped, quietly
    assert run(["ledger", "sync", "--retry-set-aside", *args]) == 0  # refused again
    assert _shipped_in_order(url, schema) == [1, 3, 5, 6]
    assert [e.receipt_id for e in SetAside(tmp_path).entries()] == [2, 4]


def test_a_set_aside_receipt_ships_when_the_server_takes_it_again(
    pg: tuple[str, str], tmp_path: Path
) -> None:
    url, schema = pg
    with Ledger(tmp_path) as local, TeamLedger(url, schema) as team:
        team.count()  # creates the schema, to add a constraint the receipts meet but one
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                f"ALTER TABLE {schema}.receipts ADD CONSTRAINT no_b CHECK (session_id <> 's-2')"
            )
        for n in (1, 2, 3):
            _record(local, n)
        assert sync(local, team, batch=2) == (2, 1)
        assert sync(local, team) == (0, 0)  # skipped, not refused again
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"ALTER TABLE {schema}.receipts DROP CONSTRAINT no_b")
    args = ["--ledger", url, "--schema", schema, "--state-dir", str(tmp_path)]
    assert run(["ledger", "sync", "--retry-set-aside", *args]) == 0
    assert _shipped_in_order(url, schema) == [1, 3, 2]
    with Ledger(tmp_path) as local:
        assert local.outbox_size() == 0
    assert SetAside(tmp_path).count() == 0


def test_a_set_aside_receipt_closed_again_with_other_content_ships(
    pg: tuple[str, str], tmp_path: Path
) -> None:
    url, schema = pg
    with Ledger(tmp_path) as local, TeamLedger(url, schema) as team:
        rid = _record(local, 1, claim={"summary": "\x00"})
        assert sync(local, team) == (0, 1)
        local.close_receipt(rid, verdict="refuted", decision="veto", reason="swept", claim={})
        assert sync(local, team) == (1, 0)
        assert [r.verdict for r in team.query()] == ["refuted"]
    assert SetAside(tmp_path).count() == 0  # shipped: no longer set aside


@pytest.fixture
def proxy() -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A TCP proxy to PostgreSQL that freezes itself when a client sends an INSERT."""
    child = subprocess.Popen(
        [sys.executable, PROXY, "5432", "INSERT INTO"], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    yield child, int(child.stdout.readline())
    child.kill()
    child.wait()


def _donegate(*argv: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    command = [*prefix, DONEGATE, *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=HANG_S, check=False)


def _sync(url: str, schema: str, state: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return _donegate(
        "ledger", "sync", "--ledger", url, "--schema", schema, "--state-dir", str(state), *more
    )


def test_a_server_that_stops_answering_midway_ends_the_sync_and_keeps_every_receipt(
    pg: tuple[str, str], tmp_path: Path, proxy: tuple[subprocess.Popen[str], int]
) -> None:
    url, schema = pg
    child, port = proxy
    with Ledger(tmp_path) as local, TeamLedger(url, schema) as team:
        for n in range(5):
            _record(local, n)
        team.count()  # the schema made: the proxy freezes at the receipts' INSERT, not its own
    frozen = f"postgresql://postgres@127.0.0.1:{port}/test"
    done = _sync(frozen, schema, tmp_path, "--timeout", "1")
    assert _state(child.pid) == "T"  # the proxy did freeze at the INSERT
    assert done.returncode == 4, done.stderr
    assert "no answer within 1 s" in done.stderr
    assert "5 receipts kept in the outbox" in done.stderr
    child.kill()
    again = _sync(url, schema, tmp_path)  # not "another sync is shipping"
    assert again.returncode == 0, again.stderr
    assert "shipped 5 receipts" in again.stderr
    found = uuids(url, schema)
    assert len(found) == len(set(found)) == 5


def test_a_server_frozen_before_the_connect_ends_the_sync(
    pg: tuple[str, str], tmp_path: Path, proxy: tuple[subprocess.Popen[str], int]
) -> None:
    _, schema = pg
    child, port = proxy
    with Ledger(tmp_path) as local:
        _record(local, 1)
    child.send_signal(signal.SIGSTOP)
    done = _sync(f"postgresql://postgres@127.0.0.1:{port}/test", schema, tmp_path, "--timeout", "1")
    assert done.returncode == 4, done.stderr
    assert "connection timeout expired" in done.stderr
    assert "1 receipts kept in the outbox" in done.stderr


_HOLDER = """
import sys, time
from pathlib import Path
from donegate.teamledger.background import sync_lock
with sync_lock(Path(sys.argv[1]), budget_s=float(sys.argv[2])) as lock:
    assert lock.held
    print("held", flush=True)
    time.sleep(600)
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[object]:
    """Start a process holding the state directory's sync lock with a given budget."""
    started: list[subprocess.Popen[str]] = []

    def start(budget_s: float) -> subprocess.Popen[str]:
        argv = [sys.executable, "-c", _HOLDER, str(tmp_path), str(budget_s)]
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        started.append(child)
        assert child.stdout is not None
        assert child.stdout.readline() == "held\n"
        return child

    yield start
    for child in started:
        child.kill()
        child.wait()


def test_a_stuck_sync_is_told_from_a_live_one(
    pg: tuple[str, str], tmp_path: Path, holder: object
) -> None:
    url, schema = pg
    with Ledger(tmp_path) as local:
        _record(local, 1)
    assert callable(holder)
    live = holder(600.0)
    done = _sync(url, schema, tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"another sync (pid {live.pid}) is shipping these receipts" in done.stderr
    live.kill()
    live.wait()
    stuck = holder(0.0)  # its deadline is already behind it: it never moves on
    done = _sync(url, schema, tmp_path)
    assert done.returncode == 4, done.stderr
    assert f"another sync (pid {stuck.pid}) holds the lock but is stuck" in done.stderr
    assert f"kill {stuck.pid}" in done.stderr
    status = _donegate(
        "ledger", "status", "--ledger", url, "--schema", schema, "--state-dir", str(tmp_path)
    )
    assert f"sync: another sync (pid {stuck.pid}) holds the lock but is stuck" in status.stderr
    assert uuids(url, schema) == []  # neither shipped past the lock
    stuck.kill()  # a holder that died holds nothing: the next sync ships
    stuck.wait()
    done = _sync(url, schema, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "shipped 1 receipts" in done.stderr


def _state(pid: int) -> str:
    # /proc/PID/stat: "pid (comm) S ...": the state letter follows the command's closing paren.
    deadline = time.monotonic() + HANG_S
    while True:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "T" or time.monotonic() > deadline:
            return state
        time.sleep(0.05)


def _without_root_powers() -> tuple[str, ...]:
    """A prefix that runs a command as root would run without bypassing file permissions."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a directory cannot be made unwritable")
    caps = "-dac_override,-dac_read_search"
    return ("setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}")


def test_an_unwritable_state_directory_is_a_clear_error(
    pg: tuple[str, str], tmp_path: Path
) -> None:
    url, schema = pg
    state = tmp_path / "state"
    state.mkdir(mode=0o555)
    argv = ("ledger", "sync", "--ledger", url, "--schema", schema, "--state-dir", str(state))
    done = _donegate(*argv, prefix=_without_root_powers())
    assert done.returncode == 4, done.stderr
    assert f"state directory {state} cannot be used" in done.stderr
    assert "internal error" not in done.stderr
    assert "Traceback" not in done.stderr
