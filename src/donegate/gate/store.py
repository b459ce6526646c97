"""Per-session gate state in SQLite, in the state directory (never the agent's working tree).

Hosts run hooks in parallel, so every decision is one ``BEGIN IMMEDIATE`` transaction (read the
counts, write the counts, append the event) under a busy timeout: concurrent processes queue for
the write lock instead of racing a read-modify-write. A state file that cannot be read is a
:class:`StateError`, never "no vetoes yet".
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType

from donegate import statedir
from donegate.errors import InternalError
from donegate.gate.budget import Outcome, VetoCounts
from donegate.gate.ladder import VETO_REASONS
from donegate.record import Record
from donegate.sqlitefile import cause, connect, migrate, writing

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FILE_NAME = "gate.sqlite3"
SCHEMA_VERSION = 3
DEFAULT_BUSY_TIMEOUT_S = 30.0

_SCHEMA = """
CREATE TABLE gate_sessions (
    session_id TEXT PRIMARY KEY,
    by_reason TEXT NOT NULL,
    soft INTEGER NOT NULL,
    strict INTEGER NOT NULL,
    strict_since_allow INTEGER NOT NULL,
    outcome TEXT,
    blocks_in_a_row INTEGER NOT NULL DEFAULT 0,
    failed_in_a_row INTEGER NOT NULL DEFAULT 0,
    last_failing INTEGER,
    judge_invocations INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE gate_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    event TEXT NOT NULL
);
CREATE INDEX gate_events_by_session ON gate_events (session_id, seq);
"""
# Version 1 kept no session history beyond the veto counts.
_UPGRADES = {
    1: """
ALTER TABLE gate_sessions ADD COLUMN blocks_in_a_row INTEGER NOT NULL DEFAULT 0;
ALTER TABLE gate_sessions ADD COLUMN failed_in_a_row INTEGER NOT NULL DEFAULT 0;
ALTER TABLE gate_sessions ADD COLUMN last_failing INTEGER
""",
    # Version 2 had no bounded judge: no session had spent a judge call.
    2: """
ALTER TABLE gate_sessions ADD COLUMN judge_invocations INTEGER NOT NULL DEFAULT 0
""",
}


class SessionHistory(Record):
    """What a session's past stops say about the next one.

    ``failed_in_a_row``: red verifier readings since the last green one; ``last_failing``: how
    many checks or tests failed at the last red reading, when known; ``blocks_in_a_row``: vetoes
    delivered since the last allow.
    """

    failed_in_a_row: int = 0
    last_failing: int | None = None
    blocks_in_a_row: int = 0


def _not_ours(detail: str) -> StateError:
    return StateError(f"gate state {detail} (not a donegate gate file, or from another version)")


class StateError(InternalError):
    """The gate's state file is unreadable, foreign or locked for too long (exit 5)."""


class SessionTx:
    """One session inside an open write transaction."""

    def __init__(self, db: sqlite3.Connection, session_id: str, store: GateStore) -> None:
        self._db = db
        self.session_id = session_id
        self._store = store

    def counts(self) -> VetoCounts:
        return _read_counts(self._db, self.session_id)

    def save(self, counts: VetoCounts, outcome: Outcome | None) -> None:
        """Store the counts; ``outcome`` None keeps the session's previous outcome."""
        self._db.execute(
            "INSERT INTO gate_sessions (session_id, by_reason, soft, strict, strict_since_allow, "
            "outcome, blocks_in_a_row) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO "
            "UPDATE SET by_reason = excluded.by_reason, soft = excluded.soft, "
            "strict = excluded.strict, strict_since_allow = excluded.strict_since_allow, "
            "outcome = coalesce(excluded.outcome, outcome), "
            "blocks_in_a_row = excluded.blocks_in_a_row",
            (
                self.session_id,
                json.dumps(dict(counts.by_reason), sort_keys=True),
                counts.soft,
                counts.strict,
                counts.strict_since_allow,
                outcome,
                counts.blocks_in_a_row,
            ),
        )

    def record_reading(self, observed: str, failing: int | None) -> None:
        """Extend or end the failure streak: a red reading adds one, a green one ends it."""
        if observed == "failed":
            self._db.execute(
                "UPDATE gate_sessions SET failed_in_a_row = failed_in_a_row + 1, "
                "last_failing = ? WHERE session_id = ?",
                (failing, self.session_id),
            )
        elif observed == "passed":
            self._db.execute(
                "UPDATE gate_sessions SET failed_in_a_row = 0, last_failing = NULL "
                "WHERE session_id = ?",
                (self.session_id,),
            )

    def judge_invocations(self) -> int:
        """How many judge calls the session has spent."""
        return _read_invocations(self._db, self.session_id)

    def spend_judge_call(self) -> None:
        """Count one judge call against the session's cap."""
        self._db.execute(
            "INSERT INTO gate_sessions (session_id, by_reason, soft, strict, strict_since_allow, "
            "judge_invocations) VALUES (?, '{}', 0, 0, 0, 1) ON CONFLICT (session_id) DO UPDATE "
            "SET judge_invocations = judge_invocations + 1",
            (self.session_id,),
        )

    def append(self, event: Mapping[str, Any]) -> int:
        """Append an event; returns its sequence number in the store."""
        if self._store.track_reports:
            event = {**event, "reported": False}
        cursor = self._db.execute(
            "INSERT INTO gate_events (session_id, event) VALUES (?, ?)",
            (self.session_id, json.dumps(event, sort_keys=True)),
        )
        assert cursor.lastrowid is not None
        self._store.last_event = cursor.lastrowid
        return cursor.lastrowid


class GateStore:
    """The gate's SQLite file. Open it with :meth:`in_state_dir` or a path.

    With ``track_reports``, every event is stored with ``"reported": false`` and flipped to true
    by :meth:`mark_reported` once the caller has delivered the decision: a process killed between
    its commit and its output leaves a decision counted that nobody was told about, and the
    record says so. ``last_event`` is the sequence number of the last event this store appended.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        track_reports: bool = False,
    ) -> None:
        self.path = Path(path)
        self._timeout = busy_timeout_s
        self._db: sqlite3.Connection | None = None
        self.track_reports = track_reports
        self.last_event: int | None = None

    @classmethod
    def in_state_dir(
        cls, state_dir: str | Path | None = None, *, track_reports: bool = False
    ) -> GateStore:
        """The store in ``state_dir``, else ``$DONEGATE_STATE_DIR``, else the user's state dir."""
        return cls(statedir.ensure(state_dir) / FILE_NAME, track_reports=track_reports)

    def mark_reported(self, seq: int) -> None:
        """Record that event ``seq``'s decision reached its caller (``"reported": true``)."""
        with self._transaction() as db:
            row = db.execute("SELECT event FROM gate_events WHERE seq = ?", (seq,)).fetchone()
            event = _load(row[0]) if row else None
            if isinstance(event, dict):
                event["reported"] = True
                db.execute(
                    "UPDATE gate_events SET event = ? WHERE seq = ?",
                    (json.dumps(event, sort_keys=True), seq),
                )

    @contextmanager
    def session(self, session_id: str) -> Iterator[SessionTx]:
        """A write transaction on one session: committed on exit, rolled back on error."""
        with self._transaction() as db:
            yield SessionTx(db, session_id, self)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._guard(), writing(self._connect()) as db:
            yield db

    def counts(self, session_id: str) -> VetoCounts:
        """The session's veto counts, zero-filled (a session never seen has all zeros)."""
        with self._guard():
            return _read_counts(self._connect(), session_id)

    def history(self, session_id: str) -> SessionHistory:
        """The session's failure streak and blocks in a row (all zero for a new session)."""
        with self._guard():
            row = (
                self._connect()
                .execute(
                    "SELECT failed_in_a_row, last_failing, blocks_in_a_row FROM gate_sessions "
                    "WHERE session_id = ?",
                    (session_id,),
                )
                .fetchone()
            )
        if row is None:
            return SessionHistory()
        if not (_is_count(row[0]) and _is_count(row[2]) and (row[1] is None or _is_count(row[1]))):
            raise StateError(f"session {session_id!r}: history is corrupt: {row!r}")
        return SessionHistory(row[0], row[1], row[2])

    def outcome(self, session_id: str) -> Outcome | None:
        """The outcome recorded at the session's last allow, if any."""
        with self._guard():
            row = (
                self._connect()
                .execute("SELECT outcome FROM gate_sessions WHERE session_id = ?", (session_id,))
                .fetchone()
            )
        return None if row is None else row[0]

    def judge_invocations(self, session_id: str) -> int:
        """How many judge calls the session has spent (0 for a new session)."""
        with self._guard():
            return _read_invocations(self._connect(), session_id)

    def conversions(self, session_id: str) -> dict[str, int]:
        """The session's decisions counted by ``converted_from`` (budget, cap and judge)."""
        found: dict[str, int] = {}
        for event in self.events(session_id):
            origin = event.get("converted_from")
            if event.get("type") == "judge_decision" and isinstance(origin, str):
                found[origin] = found.get(origin, 0) + 1
        return found

    def events(self, session_id: str) -> list[dict[str, Any]]:
        """The session's decision events, oldest first."""
        with self._guard():
            rows = self._connect().execute(
                "SELECT seq, event FROM gate_events WHERE session_id = ? ORDER BY seq",
                (session_id,),
            )
            return [_event(seq, text) for seq, text in rows]

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @contextmanager
    def _guard(self) -> Iterator[None]:
        # The one place where SQLite's errors become ours: corrupt, foreign, locked, unwritable.
        try:
            yield
        except sqlite3.Error as exc:
            raise StateError(f"gate state {self.path}: {cause(exc, self.path)}") from exc

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            db = connect(self.path, self._timeout)
            try:
                migrate(db, self.path, _SCHEMA, SCHEMA_VERSION, _not_ours, _UPGRADES)
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db


def _read_counts(db: sqlite3.Connection, session_id: str) -> VetoCounts:
    row = db.execute(
        "SELECT by_reason, soft, strict, strict_since_allow, blocks_in_a_row FROM gate_sessions "
        "WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    if row is None:
        return VetoCounts()
    by_reason = dict.fromkeys(sorted(VETO_REASONS), 0)
    stored = _load(row[0])
    if not isinstance(stored, dict) or not all(_is_count(v) for v in stored.values()):
        raise StateError(f"session {session_id!r}: veto counts are corrupt: {row[0]!r}")
    by_reason.update(stored)
    if not all(_is_count(v) for v in row[1:]):
        raise StateError(f"session {session_id!r}: veto totals are corrupt: {row[1:]!r}")
    return VetoCounts(MappingProxyType(by_reason), row[1], row[2], row[3], row[4])


def _read_invocations(db: sqlite3.Connection, session_id: str) -> int:
    row = db.execute(
        "SELECT judge_invocations FROM gate_sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return 0
    if not _is_count(row[0]):
        raise StateError(f"session {session_id!r}: judge invocations are corrupt: {row[0]!r}")
    return int(row[0])


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _load(text: object) -> object:
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _event(seq: int, text: str) -> dict[str, Any]:
    event = _load(text)
    if not isinstance(event, dict):
        raise StateError(f"event {seq} is corrupt: {text!r}")
    return {"seq": seq, **event}
