"""``state_readback`` against the real PostgreSQL, MariaDB and Redis on this machine.

Each test uses its own table or key, so parallel runs do not collide.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import create_engine, text

from donegate.claim import Claim
from donegate.collect import collect
from tests.checks.support import claim_with, config_from, detail, only, state

DATABASES = {
    "postgresql": "postgresql+psycopg://postgres@127.0.0.1:5432/test",
    "mariadb": "mysql+pymysql://root@127.0.0.1:3306/test",
}
REDIS_URL = "redis://127.0.0.1:6379/0"


@dataclass(frozen=True)
class Table:
    """A fresh accounts table in one real database."""

    name: str
    url: str  # the URL the readback is configured with
    admin_url: str  # how the test itself writes and inspects

    def rows(self) -> list[dict[str, Any]]:
        engine = create_engine(self.admin_url)
        try:
            with engine.connect() as connection:
                result = connection.execute(text(f"SELECT * FROM {self.name} ORDER BY id"))
                return [dict(row) for row in result.mappings()]
        finally:
            engine.dispose()


@pytest.fixture(params=sorted(DATABASES))
def table(request: pytest.FixtureRequest) -> Iterator[Table]:
    backend: str = request.param
    admin = DATABASES[backend]
    name = f"dg_accounts_{uuid.uuid4().hex[:12]}"
    engine = create_engine(admin)
    with engine.begin() as connection:
        connection.execute(
            text(
                f"CREATE TABLE {name} (id INTEGER PRIMARY KEY, owner INTEGER, "
                "billing_zip VARCHAR(10), balance NUMERIC(10, 2), updated_at TIMESTAMP NULL)"
            )
        )
        connection.execute(
            text(
                f"INSERT INTO {name} VALUES (4471, 7, '94107', 12.50, '2026-08-27 18:04:02'), "
                "(4472, 7, '10001', 3.00, NULL)"
            )
        )
    try:
        yield Table(name, admin.replace("+psycopg", "").replace("+pymysql", ""), admin)
    finally:
        with engine.begin() as connection:
            connection.execute(text(f"DROP TABLE IF EXISTS {name}"))
        engine.dispose()


def readback(source: str, query: str, expected: str, params: str = "{ id = 4471 }") -> str:
    return f"""
        [[checks]]
        check_type = "state_readback"
        target = "accounts/4471"
        source = {json.dumps(source)}
        query = {json.dumps(query)}
        params = {params}
        expected = {expected}
    """


def run(toml: str, environ: dict[str, str] | None = None) -> Claim:
    return collect(
        claim_with("accounts/4471", kind="state_write"), config_from(toml, Path.cwd(), environ)
    )


def select(table: Table, where: str = "id = :id") -> str:
    return f"SELECT billing_zip, balance, updated_at FROM {table.name} WHERE {where}"


def test_matching_row_verifies_with_json_types(table: Table) -> None:
    expected = '{ billing_zip = "94107", balance = 12.5, updated_at = "2026-08-27T18:04:02" }'
    done = run(readback(table.url, select(table), expected))
    item = only(done)
    assert item.verifier.kind == "independent"
    assert item.observed_value == {
        "billing_zip": "94107",
        "balance": 12.5,
        "updated_at": "2026-08-27T18:04:02",
    }
    assert state(done) == "verified"


def test_wrong_value_refutes(table: Table) -> None:
    done = run(readback(table.url, select(table), '{ billing_zip = "94108" }'))
    assert only(done).observed_value == {"billing_zip": "94107"}
    assert state(done) == "refuted"


def test_number_is_not_text(table: Table) -> None:
    done = run(readback(table.url, select(table), '{ balance = "12.50" }'))
    assert state(done) == "refuted"


def test_missing_row_refutes(table: Table) -> None:
    done = run(readback(table.url, select(table), '{ billing_zip = "94107" }', "{ id = 9999 }"))
    item = only(done)
    assert item.observed_value == {"billing_zip": None}
    assert detail(item)["records"] == 0
    assert state(done) == "refuted"


def test_two_rows_are_unverified_with_the_count(table: Table) -> None:
    query = select(table, "owner = :owner")
    done = run(readback(table.url, query, '{ billing_zip = "94107" }', "{ owner = 7 }"))
    item = only(done)
    assert item.verifier.kind == "absent"
    assert detail(item)["records"] == 2
    assert "2 records matched" in str(detail(item)["why_not_counted"])
    assert state(done) == "unverified"


@pytest.mark.parametrize(
    "write",
    [
        "UPDATE {t} SET billing_zip = '00000' WHERE id = :id",
        "DELETE FROM {t} WHERE id = :id",
        "SELECT billing_zip FROM {t} WHERE id = :id; DELETE FROM {t}",
    ],
)
def test_write_through_the_readback_fails_and_changes_nothing(table: Table, write: str) -> None:
    before = table.rows()
    done = run(readback(table.url, write.format(t=table.name), '{ billing_zip = "00000" }'))
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "could not read" in str(detail(item)["why_not_counted"])
    assert state(done) == "unverified"
    assert table.rows() == before


def test_params_are_bound_not_spliced(table: Table) -> None:
    before = table.rows()
    # Spliced into the SQL this would select both rows; bound, it is one (odd) value.
    params = '{ id = "0 OR 1=1" }'
    done = run(readback(table.url, select(table), '{ billing_zip = "94107" }', params))
    assert state(done) != "verified"
    assert detail(only(done)).get("records") != 2
    assert table.rows() == before


def test_password_in_the_url_never_leaks(table: Table) -> None:
    secret_url = table.url.replace("@127.0.0.1", ":hunter2-not-leaked@127.0.0.1")
    toml = readback("${DATABASE_URL}", select(table), '{ billing_zip = "94107" }')
    done = run(toml, {"DATABASE_URL": secret_url})
    assert "hunter2-not-leaked" not in json.dumps(done.to_json_dict())


def test_unreachable_database_is_absent_without_leaking(table: Table) -> None:
    url = table.url.replace("@127.0.0.1", ":hunter2-not-leaked@127.0.0.1").replace(
        "/test", "/nope_db"
    )
    toml = readback("${DATABASE_URL}", select(table), '{ billing_zip = "94107" }')
    done = run(toml, {"DATABASE_URL": url})
    assert only(done).verifier.kind == "absent"
    assert state(done) == "unverified"
    assert "hunter2-not-leaked" not in json.dumps(done.to_json_dict())


@pytest.fixture
def redis_key() -> Iterator[tuple[redis.Redis, str]]:
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    key = f"dg:test:{uuid.uuid4().hex}"
    try:
        yield client, key
    finally:
        client.delete(key)
        client.close()


def redis_check(key: str, expected: str, extra: str = "", source: str = REDIS_URL) -> str:
    return f"""
        [[checks]]
        check_type = "state_readback"
        target = "accounts/4471"
        source = {json.dumps(source)}
        key = {json.dumps(key)}
        expected = {expected}
        {extra}
    """


def test_redis_string_hash_and_json(redis_key: tuple[redis.Redis, str]) -> None:
    client, key = redis_key
    client.set(key, "94107")
    assert state(run(redis_check(key, '{ value = "94107" }'))) == "verified"
    assert state(run(redis_check(key, '{ value = "94108" }'))) == "refuted"
    client.delete(key)
    client.hset(key, mapping={"billing_zip": "94107", "owner": "7"})
    assert only(run(redis_check(key, '{ billing_zip = "94107" }'))).observed_value == {
        "billing_zip": "94107"
    }
    client.delete(key)
    client.set(key, json.dumps({"account": {"billing_zip": "94107", "owner": 7}}))
    toml = redis_check(
        key, '{ billing_zip = "94107", owner = 7 }', 'redis_type = "json"\npath = "account"'
    )
    assert state(run(toml)) == "verified"


def test_redis_missing_key_refutes(redis_key: tuple[redis.Redis, str]) -> None:
    _, key = redis_key
    done = run(redis_check(key, '{ value = "94107" }'))
    assert only(done).observed_value == {"value": None}
    assert state(done) == "refuted"


def test_redis_wrong_type_is_absent(redis_key: tuple[redis.Redis, str]) -> None:
    client, key = redis_key
    client.rpush(key, "a", "b")
    done = run(redis_check(key, '{ value = "a" }'))
    assert only(done).verifier.kind == "absent"
    assert state(done) == "unverified"


def test_redis_password_never_leaks(redis_key: tuple[redis.Redis, str]) -> None:
    client, key = redis_key
    client.set(key, "94107")
    source = "redis://:hunter2-not-leaked@127.0.0.1:6379/0"
    done = run(
        redis_check(key, '{ value = "94107" }', source="${REDIS_URL}"), {"REDIS_URL": source}
    )
    assert "hunter2-not-leaked" not in json.dumps(done.to_json_dict())
    assert state(done) in ("verified", "unverified")
