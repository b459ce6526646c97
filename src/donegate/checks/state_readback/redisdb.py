"""Redis readback: a string, a hash, or a JSON document at one key; only read commands, each
bounded by what is left of the check's deadline."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from donegate.checks.state_readback._base import ReadError, Records, records_at

if TYPE_CHECKING:
    from donegate.checks._deadline import Deadline
    from donegate.checks.state_readback._settings import StateReadbackSettings

_JSON_TYPE = "ReJSON-RL"  # the RedisJSON module's type name


def read(settings: StateReadbackSettings, deadline: Deadline) -> Records:
    """The record at ``settings.key``: none when the key does not exist."""
    import redis

    assert settings.key is not None
    client = redis.Redis.from_url(
        settings.source,
        socket_timeout=max(deadline.remaining(), 0.001),
        socket_connect_timeout=max(deadline.remaining(), 0.001),
        decode_responses=True,
    )
    try:
        return _read(client, settings.key, settings.redis_type, settings.path)
    except redis.RedisError as exc:
        if deadline.expired():
            raise deadline.exceeded("the Redis read") from None
        raise ReadError(f"{type(exc).__name__}: {exc}") from None
    finally:
        client.close()


def _read(client: Any, key: str, wanted: str, path: str | None) -> Records:
    kind = client.type(key)
    if kind == "none":
        return []
    if kind == "hash" and wanted in ("auto", "hash"):
        return records_at(client.hgetall(key), path)
    if kind == _JSON_TYPE and wanted in ("auto", "json"):
        return records_at(json.loads(client.execute_command("JSON.GET", key)), path)
    if kind == "string" and wanted in ("auto", "string"):
        return [{"value": client.get(key)}]
    if kind == "string" and wanted == "json":
        return records_at(_parse(client.get(key), key), path)
    raise ReadError(f"key {key!r} holds a Redis {kind}, not the configured {wanted}")


def _parse(text: str, key: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        raise ReadError(f"key {key!r} does not hold JSON") from None
