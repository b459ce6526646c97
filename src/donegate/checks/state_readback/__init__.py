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

from collections.abc import Callable

from pydantic import JsonValue

from donegate.checks._deadline import Deadline, DeadlineExceeded, call_by
from donegate.checks.base import CheckContext, Observation
from donegate.checks.state_readback import files, http_json, python_callable, redisdb, sql
from donegate.checks.state_readback._base import MAX_RECORDS, ReadError, Records
from donegate.checks.state_readback._settings import StateReadbackSettings, backend_of

__all__ = ["StateReadback", "StateReadbackSettings", "backend_of", "judge"]

# Each backend ends by the deadline on its own; this watch is for one that does not.
WATCH_GRACE_S = 1.0


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
