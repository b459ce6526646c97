"""The settings of a ``state_readback`` table, and which backend its ``source`` names.

Apart from the collector, so that each backend can name the settings it reads without importing
the package that imports it."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, JsonValue, model_validator

from donegate.checks._http import DEFAULT_MAX_BODY_BYTES, MAX_BODY_BYTES_LIMIT
from donegate.checks.base import CheckSettings, PositiveSeconds

Backend = Literal["sql", "redis", "http", "file", "python"]
_SQL = re.compile(r"^(sqlite|postgresql|postgres|mysql|mariadb)(\+\w+)?://", re.IGNORECASE)
_PYTHON = re.compile(r"^python:[\w.]+:\w+$")
# Which optional keys each backend takes; the others must stay unset.
_KEYS: dict[Backend, tuple[str, ...]] = {
    "sql": ("query", "params"),
    "redis": ("key", "redis_type", "path"),
    "http": ("path", "headers", "max_body_bytes"),
    "file": ("path", "max_body_bytes"),
    "python": ("params",),
}
_OPTIONAL = ("query", "params", "key", "redis_type", "path", "headers", "max_body_bytes")


def backend_of(source: str) -> Backend | None:
    """Which backend reads ``source``, or None when none does."""
    if _SQL.match(source):
        return "sql"
    if source.startswith(("redis://", "rediss://", "unix://")):
        return "redis"
    if source.startswith(("http://", "https://")):
        return "http"
    if source.startswith("python:"):
        return "python" if _PYTHON.match(source) else None
    if source.removeprefix("file:").endswith((".json", ".toml")) and "://" not in source:
        return "file"
    return None


class StateReadbackSettings(CheckSettings):
    """A ``state_readback`` table. ``target`` names the record (data, for the evidence)."""

    target: str
    source: str
    query: str | None = None
    params: dict[str, JsonValue] = Field(default_factory=dict)
    key: str | None = None
    redis_type: Literal["auto", "string", "hash", "json"] = "auto"
    path: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_s: PositiveSeconds = 10.0
    max_body_bytes: Annotated[int, Field(gt=0, le=MAX_BODY_BYTES_LIMIT)] = DEFAULT_MAX_BODY_BYTES

    @model_validator(mode="after")
    def _fits_its_backend(self) -> StateReadbackSettings:
        backend = self.backend()
        if backend is None:
            raise ValueError(
                "source is not a sqlite/postgresql/mysql/mariadb URL, redis://, http(s)://, "
                "a .json or .toml file, or python:module:function"
            )
        if not self.expected:
            raise ValueError("expected is required: the fields the record must hold")
        extra = [k for k in _OPTIONAL if k in self.model_fields_set and k not in _KEYS[backend]]
        if extra:
            raise ValueError(f"{', '.join(extra)} not used by a {backend} source")
        if backend == "sql" and not self.query:
            raise ValueError("a SQL source needs a query (with :named bound parameters)")
        if backend == "redis" and not self.key:
            raise ValueError("a Redis source needs a key")
        return self

    def backend(self) -> Backend | None:
        """The backend ``source`` names."""
        return backend_of(self.source)
