"""``state_readback``: read the record back from the system of record, not from the write.

Backends, by ``source``: SQL through SQLAlchemy (``sqlite:``, ``postgresql:``, ``mysql:``,
``mariadb:`` URLs), ``redis://``, an ``http(s)://`` JSON resource, a local ``.json``/``.toml``
file (``file:`` or a bare path), or ``python:pkg.mod:func``. Every backend only reads: a SQL
query must parse as one plain read, and runs in a session the server keeps read-only (see
:mod:`.sql`).

The whole read ends by ``timeout_s`` (a deadline, not a per-operation timeout): a read that
passes it is no observation (``absent``), never a pass. HTTP and file bodies are read up to
``max_body_bytes``.

Exactly one record counts. None found is an observation that the claimed state is not there: each
expected key is observed as null, which contradicts the claim. Several are ambiguous: no
observation, with the count.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import Field, JsonValue, model_validator

from donegate.checks._deadline import Deadline, DeadlineExceeded, call_by
from donegate.checks._http import DEFAULT_MAX_BODY_BYTES, MAX_BODY_BYTES_LIMIT
from donegate.checks.base import CheckContext, CheckSettings, Observation, PositiveSeconds
from donegate.checks.state_readback import files, http_json, python_callable, redisdb, sql
from donegate.checks.state_readback._base import MAX_RECORDS, ReadError, Records

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
# Each backend ends by the deadline on its own; this watch is for one that does not.
WATCH_GRACE_S = 1.0


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


class StateReadback:
    """The ``state_readback`` collector."""

    settings_model = StateReadbackSettings

    def collect(self, settings: StateReadbackSettings, context: CheckContext) -> Observation:
        """Read the record by the deadline and compare only what the expectation names."""
        deadline = Deadline(settings.timeout_s)
        read = _reader(settings, context, deadline)
        try:
            records = call_by(deadline, read, "the readback", grace_s=WATCH_GRACE_S)
        except DeadlineExceeded as exc:
            why = f"deadline: {exc}; no observation"
            return Observation.absent(context.redactor.text(why), timeout_s=settings.timeout_s)
        except ReadError as exc:
            return Observation.absent(context.redactor.text(f"could not read: {exc}"))
        return judge(records, settings.expected)


STATE_READBACK = StateReadback()


def _reader(
    settings: StateReadbackSettings, context: CheckContext, deadline: Deadline
) -> Callable[[], Records]:
    backend = settings.backend()
    if backend == "sql":
        return lambda: sql.read(settings, context.base_dir, deadline)
    if backend == "redis":
        return lambda: redisdb.read(settings, deadline)
    if backend == "http":
        return lambda: http_json.read(settings, deadline)
    if backend == "file":
        return lambda: files.read(settings, context.base_dir)
    return lambda: python_callable.read(settings, deadline)


def judge(records: Records, expected: dict[str, JsonValue]) -> Observation:
    """Exactly one record is an observation; none shows the state absent; several are ambiguous."""
    if len(records) > 1:
        shown = f"more than {len(records) - 1}" if len(records) > MAX_RECORDS else str(len(records))
        return Observation.absent(
            f"{shown} records matched; a readback needs exactly one", records=len(records)
        )
    if not records:
        return _nothing_there(expected)
    found = records[0]
    observed = {key: found[key] for key in expected if key in found}
    fields: list[JsonValue] = [*sorted(found)]
    return Observation.seen(observed, records=1, fields=fields)


def _nothing_there(expected: dict[str, JsonValue]) -> Observation:
    if any(value is None for value in expected.values()):
        # Observing null for every key would "match" an expected null: fail closed instead.
        return Observation.absent(
            "no record found, and the expectation names null values that absence cannot confirm",
            records=0,
        )
    observed: dict[str, JsonValue] = dict.fromkeys(expected)
    return Observation.seen(
        observed, records=0, why="no record found: the claimed state is not there"
    )
