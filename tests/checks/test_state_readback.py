"""``state_readback`` against SQLite (opened read-only), JSON/TOML files, an HTTP JSON resource and
a Python callable; and the value conversion every backend shares."""

from __future__ import annotations

import json
import sqlite3
import sys
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from donegate.checks.state_readback import backend_of, judge
from donegate.checks.state_readback._values import to_json
from donegate.claim import Claim
from donegate.collect import collect
from donegate.errors import InvalidInput
from tests.checks.httpserver import Reply, serving
from tests.checks.support import claim_with, config_from, detail, only, state, write


def readback(source: str, expected: str, extra: str = "") -> str:
    return f"""
        [[checks]]
        check_type = "state_readback"
        target = "accounts/4471"
        source = {json.dumps(source)}
        expected = {expected}
        {extra}
    """


def run(toml: str, base_dir: Path) -> Claim:
    return collect(claim_with("accounts/4471", kind="state_write"), config_from(toml, base_dir))


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Path:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner INT, billing_zip TEXT)")
        db.execute("INSERT INTO accounts VALUES (4471, 7, '94107'), (4472, 7, '10001')")
    return path


def sql(query: str, params: str = "{ id = 4471 }") -> str:
    return f"query = {json.dumps(query)}\nparams = {params}"


SELECT = "SELECT billing_zip FROM accounts WHERE id = :id"


def test_sqlite_matching_row_verifies(tmp_path: Path, sqlite_db: Path) -> None:
    done = run(readback("sqlite:///app.db", '{ billing_zip = "94107" }', sql(SELECT)), tmp_path)
    assert only(done).observed_value == {"billing_zip": "94107"}
    assert state(done) == "verified"


def test_sqlite_wrong_missing_and_ambiguous(tmp_path: Path, sqlite_db: Path) -> None:
    wrong = run(readback("sqlite:///app.db", '{ billing_zip = "1" }', sql(SELECT)), tmp_path)
    missing = readback("sqlite:///app.db", '{ billing_zip = "94107" }', sql(SELECT, "{ id = 1 }"))
    by_owner = sql("SELECT billing_zip FROM accounts WHERE owner = :o", "{ o = 7 }")
    several = readback("sqlite:///app.db", '{ billing_zip = "94107" }', by_owner)
    assert state(wrong) == "refuted"
    assert state(run(missing, tmp_path)) == "refuted"
    ambiguous = run(several, tmp_path)
    assert detail(only(ambiguous))["records"] == 2
    assert state(ambiguous) == "unverified"


@pytest.mark.parametrize(
    "query",
    [
        "UPDATE accounts SET billing_zip = '0' WHERE id = :id RETURNING billing_zip",
        "INSERT INTO accounts VALUES (:id + 10, 1, '0') RETURNING billing_zip",
        "SELECT billing_zip FROM accounts WHERE id = :id; DELETE FROM accounts",
    ],
)
def test_sqlite_is_opened_read_only(tmp_path: Path, sqlite_db: Path, query: str) -> None:
    done = run(readback("sqlite:///app.db", '{ billing_zip = "0" }', sql(query)), tmp_path)
    assert only(done).verifier.kind == "absent"
    assert state(done) == "unverified"
    with sqlite3.connect(sqlite_db) as db:
        rows = db.execute("SELECT * FROM accounts ORDER BY id").fetchall()
    assert rows == [(4471, 7, "94107"), (4472, 7, "10001")]


def test_sqlite_missing_file_is_absent_and_not_created(tmp_path: Path) -> None:
    done = run(readback("sqlite:///nope.db", '{ billing_zip = "94107" }', sql(SELECT)), tmp_path)
    assert only(done).verifier.kind == "absent"
    assert not (tmp_path / "nope.db").exists()


@pytest.mark.parametrize("name", ["state.json", "state.toml"])
def test_files_at_a_key_path(tmp_path: Path, name: str) -> None:
    if name.endswith(".json"):
        text = json.dumps({"accounts": {"4471": {"billing_zip": "94107", "owner": 7}}})
    else:
        text = '[accounts.4471]\nbilling_zip = "94107"\nowner = 7\n'
    write(tmp_path, {name: text})
    path = 'path = "accounts.4471"'
    good = run(readback(f"file:{name}", '{ billing_zip = "94107", owner = 7 }', path), tmp_path)
    typed = run(readback(name, '{ owner = "7" }', path), tmp_path)
    gone = run(readback(name, "{ owner = 7 }", 'path = "accounts.4472"'), tmp_path)
    assert state(good) == "verified"
    assert state(typed) == "refuted"
    assert state(gone) == "refuted"


def test_missing_file_refutes_and_broken_file_is_absent(tmp_path: Path) -> None:
    write(tmp_path, {"broken.json": "{not json"})
    assert state(run(readback("missing.json", "{ a = 1 }"), tmp_path)) == "refuted"
    broken = run(readback("broken.json", "{ a = 1 }"), tmp_path)
    assert only(broken).verifier.kind == "absent"


def test_http_json_resource(tmp_path: Path) -> None:
    body = json.dumps({"data": {"id": 4471, "billing_zip": "94107"}})
    routes = {
        "/accounts/4471": lambda: Reply(body=body),
        "/accounts/9": lambda: Reply(404, "{}"),
        "/accounts/err": lambda: Reply(500, "oops"),
    }
    with serving(routes) as server:
        good = readback(server.url + "/accounts/4471", '{ billing_zip = "94107" }', 'path="data"')
        gone = readback(server.url + "/accounts/9", '{ billing_zip = "94107" }')
        broken = readback(server.url + "/accounts/err", '{ billing_zip = "94107" }')
        assert state(run(good, tmp_path)) == "verified"
        assert state(run(gone, tmp_path)) == "refuted"
        assert only(run(broken, tmp_path)).verifier.kind == "absent"


def test_python_callable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = f"dg_state_{tmp_path.name.replace('-', '_')}"
    write(
        tmp_path,
        {
            f"{module}.py": """
                import time
                STORE = {4471: {"billing_zip": "94107"}, 1: [{"a": 1}, {"a": 2}]}

                def account(id):
                    return STORE.get(id)

                def slow(id):
                    time.sleep(5)

                def broken(id):
                    raise RuntimeError("no db")
            """
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    expected = '{ billing_zip = "94107" }'

    def check(func: str, id_: int, extra: str = "") -> Claim:
        toml = readback(f"python:{module}:{func}", expected, f"params = {{ id = {id_} }}\n{extra}")
        return run(toml, tmp_path)

    assert state(check("account", 4471)) == "verified"
    assert state(check("account", 9)) == "refuted"
    assert detail(only(check("account", 1)))["records"] == 2
    assert "RuntimeError: no db" in str(detail(only(check("broken", 1)))["why_not_counted"])
    assert "did not finish within its deadline of 0.2 s" in str(
        detail(only(check("slow", 1, "timeout_s = 0.2")))["why_not_counted"]
    )
    sys.modules.pop(module, None)


def test_expected_null_cannot_be_confirmed_by_absence() -> None:
    # TOML has no null, but a plugin or the Python API can expect one: absence must not match it.
    assert judge([], {"deleted_at": None}).observed is None
    assert judge([], {"deleted_at": "x"}).observed == {"deleted_at": None}


@pytest.mark.parametrize(
    ("table", "why"),
    [
        ('source = "ftp://x/y"\nexpected = { a = 1 }', "source is not"),
        ('source = "sqlite:///a.db"\nexpected = { a = 1 }', "needs a query"),
        ('source = "redis://127.0.0.1/0"\nexpected = { a = 1 }', "needs a key"),
        ('source = "a.json"\nquery = "SELECT 1"\nexpected = { a = 1 }', "query not used"),
        ('source = "a.json"', "expected is required"),
        ('source = "python:os.system"\nexpected = { a = 1 }', "source is not"),
    ],
)
def test_bad_readback_configuration(tmp_path: Path, table: str, why: str) -> None:
    toml = f'[[checks]]\ncheck_type = "state_readback"\ntarget = "x"\n{table}\n'
    with pytest.raises(InvalidInput, match=why):
        config_from(toml, tmp_path)


def test_backend_of() -> None:
    assert backend_of("postgresql+psycopg://u@h/db") == "sql"
    assert backend_of("MYSQL://u@h/db") == "sql"
    assert backend_of("rediss://h:6380/0") == "redis"
    assert backend_of("https://api/x") == "http"
    assert backend_of("data/state.toml") == "file"
    assert backend_of("python:pkg.mod:func") == "python"
    assert backend_of("s3://bucket/key.json") is None


def test_values_keep_json_types() -> None:
    pst = timezone(timedelta(hours=-8))
    assert to_json(Decimal("12.50")) == 12.5
    assert to_json(Decimal("5")) == 5
    assert isinstance(to_json(Decimal("5")), int)
    assert to_json(Decimal("NaN")) == "NaN"
    assert to_json(datetime(2026, 8, 27, 10, 4, 2, tzinfo=pst)) == "2026-08-27T18:04:02Z"
    assert to_json(datetime(2026, 8, 27, 18, 4, 2, 5, tzinfo=UTC)) == "2026-08-27T18:04:02.000005Z"
    assert to_json(datetime(2026, 8, 27, 18, 4, 2)) == "2026-08-27T18:04:02"
    assert to_json(date(2026, 8, 27)) == "2026-08-27"
    assert to_json(b"abc") == "abc"
    assert to_json(b"\xff") == "ff"
    assert to_json(True) is True
    assert to_json({"a": (1, Decimal("2.5"))}) == {"a": [1, 2.5]}
