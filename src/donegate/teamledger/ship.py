"""Shipping the local outbox to the team ledger, batch by batch.

A batch leaves the outbox only after the server committed it. If the process dies in between,
the batch is shipped again next time, and the upsert on uuid keeps it one row per receipt.

A receipt the server refuses for its content (a NUL in its claim, say) would fail every sync
and hold back every receipt queued after it, so it is set aside (:mod:`.setaside`) with the
server's reason: it stays in the outbox, skipped, and the receipts after it ship, in order.
"""

from __future__ import annotations

from collections.abc import Callable

from donegate.ledger import Ledger, Receipt
from donegate.record import Record
from donegate.teamledger.setaside import SetAside, fingerprint
from donegate.teamledger.store import TeamLedger

BATCH = 500


class Shipped(Record):
    """What a sync did: receipts shipped, and those it set aside (refused by the server)."""

    shipped: int
    set_aside: int


def sync(
    local: Ledger,
    team: TeamLedger,
    aside: SetAside | None = None,
    batch: int = BATCH,
    progress: Callable[[], None] = lambda: None,
) -> Shipped:
    """Ship every receipt in ``local``'s outbox to ``team``; raises if the server fails.

    Receipts set aside in ``aside`` (default: the local ledger's state directory) are skipped;
    those the server refuses now join them. ``progress`` is called before each batch.
    """
    aside = aside or SetAside(local.path.parent)
    held = aside.held()
    shipped = refused = 0
    while True:
        progress()
        waiting = _next_batch(local, held, batch)
        if not waiting:
            return Shipped(shipped, refused)
        down = {r.receipt.id: r for r in team.ship(waiting)}
        aside.add((r.receipt, r.reason) for r in down.values())
        held.update((r.receipt.id, fingerprint(r.receipt)) for r in down.values())
        gone = [r.id for r in waiting if r.id not in down]
        local.shipped(gone)
        if released := held.keys() & gone:  # set aside once, shipped now (closed again since)
            aside.release(released)
            for receipt_id in released:
                del held[receipt_id]
        shipped, refused = shipped + len(gone), refused + len(down)


def _next_batch(local: Ledger, held: dict[int, str], batch: int) -> list[Receipt]:
    # The set-aside receipts are still in the outbox: read past as many as there are.
    outbox = local.outbox(batch + len(held))
    return [r for r in outbox if r.id not in held or held[r.id] != fingerprint(r)][:batch]
