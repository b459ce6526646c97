"""The receipt of a stop, and its one writer: opened as *pending* before anything runs.

A hook can be killed at any moment (the host's timeout, a crash, the person's Ctrl-C). A receipt
written last would then never exist; this one is the stop's first durable act, before the
session's lock is even asked for, and says "pending". Its stop holds a lock of its own, named in
the receipt, for as long as it lives. The next stop in the workspace finds the receipt, sees that
no live process holds its lock, and closes it as interrupted: not verified, and the person is
told.

A ledger that cannot be opened (corrupt, foreign) is moved aside into the state directory's
quarantine and a fresh one started; the event is recorded in the new ledger and the person told.
Never a silent let-go.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from donegate.errors import InternalError, InvalidInput
from donegate.ledger import PENDING, Decision, Ledger, Receipt
from donegate.session.event import HookEvent
from donegate.session.layout import Layout, hold, is_locked, move_aside
from donegate.timefmt import rfc3339

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")
INTERRUPTED = "interrupted"
_TOKEN = re.compile(r"[0-9]+-[0-9a-f]{12}")


# What SQLite and donegate's readers say of a file that is damaged, not merely busy or unwritable:
# only such a file is moved aside (a locked one belongs to a live process).
_DAMAGED = ("not a database", "malformed", "not a donegate", "cannot read", "corrupt", "damaged")


def repairing(layout: Layout, path: Path, action: Callable[[], T], notes: list[str]) -> T:
    """``action()``; if the state file at ``path`` is damaged, move it aside and try once more."""
    try:
        return action()
    except (InvalidInput, InternalError) as exc:
        if not path.exists() or not any(word in str(exc) for word in _DAMAGED):
            raise
        moved = move_aside(layout, path)
        if moved is None:
            raise
        notes.append(
            f"donegate: {path.name} in the state directory was unusable ({exc}); it was moved "
            f"to {moved} and a fresh one started."
        )
        return action()


class Receipts:
    """Opens, closes and sweeps one workspace's receipts in the ledger.

    One connection serves the whole stop (:meth:`disconnect` ends it): the last connection closed
    checkpoints SQLite's write-ahead log with ``fsync`` s, which a stop pays at most once, not per
    step (and the hook's own process not at all: :func:`donegate.sqlitefile.hold`).
    """

    def __init__(self, layout: Layout, event: HookEvent, root: Path) -> None:
        self.layout = layout
        self.event = event
        self.root = root
        self.notes: list[str] = []
        self._db: Ledger | None = None
        self._own: int | None = None  # this stop's pending receipt
        self._live: tuple[int, str] | None = None  # the held lock saying this stop lives

    def disconnect(self) -> None:
        """Close the ledger's connection (a later call opens a new one)."""
        if self._db is not None:
            db, self._db = self._db, None
            db.close()

    def _ledger(self, act: Callable[[Ledger], T]) -> T:
        def attempt() -> T:
            if self._db is None:
                self._db = Ledger(self.layout.state_dir)
            try:
                return act(self._db)
            except BaseException:
                self.disconnect()  # a damaged file is moved aside: the retry opens the fresh one
                raise

        return repairing(
            self.layout, self.layout.state_dir / "receipts.sqlite3", attempt, self.notes
        )

    def sweep(self) -> list[str]:
        """Close the workspace's receipts left pending by hooks that are gone; what to tell."""
        left = self._ledger(lambda ledger: ledger.pending(self.root))
        dead = [r for r in left if r.id != self._own and not self._alive(r)]
        if dead:
            # Found dead, then confirmed still pending: a stop that closed its receipt and
            # ended between the two reads is not overwritten as interrupted.
            still = {r.id for r in self._ledger(lambda ledger: ledger.pending(self.root))}
            dead = [r for r in dead if r.id in still]
        told: list[str] = []
        for receipt in dead:
            self._close_interrupted(receipt.id, receipt.decision_doc)
            token = _token(receipt)
            if token is not None:  # its process died holding it: the file is left behind
                self.layout.stop_lock(token).unlink(missing_ok=True)
            told.append(
                f"donegate: the stop recorded as receipt {receipt.id} (session "
                f"{receipt.session_id}, {receipt.created_at}) never finished: the hook was "
                "killed or timed out. It is recorded as interrupted, NOT verified."
            )
        return told

    def _alive(self, receipt: Receipt) -> bool:
        token = _token(receipt)
        if token is not None:
            return is_locked(self.layout.stop_lock(token), create=False)
        # Opened by an earlier donegate, under its session's lock: this session's (whose lock
        # we hold) is dead; another session's lives while its lock is held.
        if receipt.session_id == self.event.session_id:
            return False
        return is_locked(self.layout.lock(receipt.session_id))

    def _close_interrupted(self, receipt_id: int, doc: Mapping[str, Any]) -> None:
        closed = {**doc, "interrupted": {"found_at": _now(), "by_session": self.event.session_id}}
        self._ledger(
            lambda ledger: ledger.close_receipt(
                receipt_id,
                verdict="unverified",
                decision="allow",
                reason=INTERRUPTED,
                claim={},
                decision_doc=closed,
            )
        )

    def open(self) -> int:
        """A pending receipt for this stop: its first durable act, before any lock or read.

        The receipt names a lock that this process holds until :meth:`end`; the kernel drops
        it when the process dies, however early, and the next sweep finds the receipt dead.
        """
        token = f"{os.getpid()}-{os.urandom(6).hex()}"
        self._live = (hold(self.layout.stop_lock(token)), token)
        doc = {
            "host_event": self.event.host_event,
            "pending": {"pid": os.getpid(), "opened_at": _now(), "token": token},
        }
        self._own = self._ledger(
            lambda ledger: ledger.record(
                session_id=self.event.session_id,
                host=self.event.host,
                workspace=self.root,
                verdict="unverified",
                decision="allow",
                reason=PENDING,
                claim={},
                decision_doc=doc,
            )
        )
        return self._own

    def end(self) -> None:
        """Close the ledger's connection and let go of the stop's lock: it is over."""
        self.disconnect()
        if self._live is not None:
            (fd, token), self._live = self._live, None
            self.layout.stop_lock(token).unlink(missing_ok=True)
            os.close(fd)

    def close(
        self,
        receipt_id: int | None,
        *,
        verdict: str,
        blocked: bool,
        reason: str,
        claim: Mapping[str, Any],
        decision_doc: Mapping[str, Any],
    ) -> int:
        """Close the pending receipt (or record one, when none could be opened); its id."""
        decision: Decision = "veto" if blocked else "allow"

        def write(ledger: Ledger) -> int:
            closed = receipt_id is not None and ledger.close_receipt(
                receipt_id,
                verdict=verdict,
                decision=decision,
                reason=reason,
                claim=claim,
                decision_doc=decision_doc,
            )
            if receipt_id is None or not closed:  # none opened, or the ledger was replaced
                return ledger.record(
                    session_id=self.event.session_id,
                    host=self.event.host,
                    workspace=self.root,
                    verdict=verdict,
                    decision=decision,
                    reason=reason,
                    claim=claim,
                    decision_doc=decision_doc,
                )
            return receipt_id

        return self._ledger(write)


def _token(receipt: Receipt) -> str | None:
    """The name of the lock a pending receipt's stop holds while it lives (None: too old)."""
    pending = receipt.decision_doc.get("pending")
    token = pending.get("token") if isinstance(pending, dict) else None
    return token if isinstance(token, str) and _TOKEN.fullmatch(token) else None


def _now() -> str:
    return rfc3339(datetime.now(UTC))
