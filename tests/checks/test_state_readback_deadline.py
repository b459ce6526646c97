"""Every readback ends by its deadline, and one that hits it is ``absent``, never verified.

The servers are real (PostgreSQL, MariaDB, SQLite, HTTP on loopback). What is asserted is the
recorded outcome and what the other side saw (the query gone from the server, the connection
closed); the only clock bound is a coarse one that proves the check ended at all.
"""

from __future__ import annotations

import itertools
import json
import socket
import sqlite3
import sys
import textwrap
import threading
import time
import tracemalloc
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.checks.httpserver import Reply, serving
from tests.checks.support import collect_one, detail, only, state

ENDED_S = 20  # a 2 s deadline that "never ends" fails this; one that ends passes by far
MARKERS = {
    "postgresql": (
        "postgresql+psycopg://postgres@127.0.0.1:5432/test",
        "SELECT pg_sleep(60) AS {marker}",
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%{marker}%' "
        "AND state = 'active' AND pid <> pg_backend_pid()",
    ),
    "mariadb": (
        "mysql+pymysql://root@127.0.0.1:3306/test",
        "SELECT SLEEP(60) AS {marker}",
        "SELECT count(*) FROM information_schema.processlist WHERE info LIKE '%{marker}%' "
        "AND id <> connection_id()",
    ),
}


def readback(source: str, extra: str, timeout_s: float = 2) -> str:
    return f"""
        [[checks]]
        check_type = "state_readback"
        target = "accounts/1"
        source = {json.dumps(source)}
        expected = {{ v = 1 }}
        timeout_s = {timeout_s}
        {extra}
    """


def ended(started: float) -> bool:
    return time.monotonic() - started < ENDED_S


@pytest.mark.parametrize("backend", sorted(MARKERS))
def test_sleeping_query_is_cancelled_at_the_server(backend: str, tmp_path: Path) -> None:
    admin, sleep, running = MARKERS[backend]
    marker = f"readonly_{uuid.uuid4().hex[:10]}"
    source = admin.replace("+psycopg", "").replace("+pymysql", "")
    toml = readback(source, f"query = {json.dumps(sleep.format(marker=marker))}")
    started = time.monotonic()
    done = collect_one(toml, tmp_path, "accounts/1")
    assert ended(started)
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "deadline of 2 s" in str(detail(item)["why_not_counted"])
    assert state(done) == "unverified"
    # Cancelled by the server, not only abandoned by the client: the statement is gone.
    engine = create_engine(admin)
    try:
        with engine.connect() as connection:
            left = connection.execute(text(running.format(marker=marker))).scalar()
    finally:
        engine.dispose()
    assert left == 0


def test_sqlite_query_that_never_ends_is_interrupted(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "app.db") as connection:
        connection.execute("CREATE TABLE t (id INTEGER)")
    connection.close()
    forever = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) AS v FROM c"
    )
    started = time.monotonic()
    done = collect_one(
        readback("sqlite:///app.db", f"query = {json.dumps(forever)}"), tmp_path, "a"
    )
    assert ended(started)
    assert "the query did not finish within its deadline of 2 s" in str(
        detail(only(done))["why_not_counted"]
    )
    assert state(done) == "unverified"


def test_trickling_http_resource_ends_by_its_deadline(tmp_path: Path) -> None:
    trickle = {"/r": lambda: Reply(stream=itertools.repeat(b" "), pause_s=0.5)}
    with serving(trickle) as server:
        started = time.monotonic()
        done = collect_one(readback(server.url + "/r", ""), tmp_path, "a")
        assert ended(started)
        assert server.hung_up.wait(ENDED_S)  # the server saw donegate close the connection
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "the request did not finish within its deadline of 2 s" in str(
        detail(item)["why_not_counted"]
    )


def test_trickling_http_head_ends_by_its_deadline(tmp_path: Path) -> None:
    trickle = {"/r": lambda: Reply(stream=iter([b"{}"]), pause_s=0.5, trickle_head=True)}
    with serving(trickle) as server:
        started = time.monotonic()
        done = collect_one(readback(server.url + "/r", ""), tmp_path, "a")
        assert ended(started)
        assert server.hung_up.wait(ENDED_S)
    assert "deadline of 2 s" in str(detail(only(done))["why_not_counted"])
    assert state(done) == "unverified"


def test_endless_http_resource_is_cut_at_the_cap(tmp_path: Path) -> None:
    endless = {"/r": lambda: Reply(stream=itertools.repeat(b"[" * 65536))}
    with serving(endless) as server:
        tracemalloc.start()
        try:
            done = collect_one(readback(server.url + "/r", "", timeout_s=30), tmp_path, "a")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert server.hung_up.wait(ENDED_S)
    assert peak < 16 * 1024 * 1024  # the default cap is 1 MiB; the body is endless
    why = str(detail(only(done))["why_not_counted"])
    assert "longer than max_body_bytes (1048576)" in why
    assert state(done) == "unverified"


def test_max_body_bytes_is_configurable(tmp_path: Path) -> None:
    routes = {"/r": lambda: Reply(body='{"v": 1}')}
    with serving(routes) as server:
        small = collect_one(readback(server.url + "/r", "max_body_bytes = 4"), tmp_path, "a")
        fits = collect_one(readback(server.url + "/r", "max_body_bytes = 8"), tmp_path, "a")
    assert "longer than max_body_bytes (4)" in str(detail(only(small))["why_not_counted"])
    assert state(fits) == "verified"


def test_file_that_never_ends_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "state.json").symlink_to("/dev/zero")
    done = collect_one(readback("file:state.json", ""), tmp_path, "a")
    assert "not a regular file" in str(detail(only(done))["why_not_counted"])
    assert state(done) == "unverified"


def test_python_callable_past_its_deadline_is_left_behind(tmp_path: Path) -> None:
    release = threading.Event()
    module = f"readonly_slow_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(
        textwrap.dedent(
            """
            import threading
            release = threading.Event()

            def read():
                release.wait()
                return {"v": 1}
            """
        )
    )
    sys.path.insert(0, str(tmp_path))
    try:
        setattr(__import__(module), "release", release)  # noqa: B010
        started = time.monotonic()
        done = collect_one(readback(f"python:{module}:read", ""), tmp_path, "a")
        assert ended(started)
        left = [t for t in threading.enumerate() if module in t.name]
        assert left
        assert all(t.daemon for t in left)  # never keeps the process alive
    finally:
        release.set()
        sys.path.remove(str(tmp_path))
    why = str(detail(only(done))["why_not_counted"])
    assert "deadline of 2 s (its thread is left behind)" in why
    assert state(done) == "unverified"


def test_silent_redis_ends_by_its_deadline(tmp_path: Path) -> None:
    """A server that accepts and never answers: every command waits only what is left."""
    listener = socket.create_server(("127.0.0.1", 0))
    closed = threading.Event()

    def accept_and_say_nothing() -> None:
        connection, _ = listener.accept()
        with connection:
            while connection.recv(4096):  # read the commands, answer none
                pass
        closed.set()  # donegate hung up

    threading.Thread(target=accept_and_say_nothing, daemon=True).start()
    try:
        source = f"redis://127.0.0.1:{listener.getsockname()[1]}/0"
        started = time.monotonic()
        done = collect_one(readback(source, 'key = "readonly:k"'), tmp_path, "a")
        assert ended(started)
        assert closed.wait(ENDED_S)
    finally:
        listener.close()
    assert "the Redis read did not finish within its deadline of 2 s" in str(
        detail(only(done))["why_not_counted"]
    )
    assert state(done) == "unverified"
