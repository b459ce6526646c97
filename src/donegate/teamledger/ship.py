"""Shipping the local outbox to the team ledger, batch by batch.

A batch leaves the outbox only after the server committed it. If the process dies in between,
the batch is shipped again next time, and the upsert on uuid keeps it one row per receipt.
"""

from __future__ import annotations

from donegate.ledger import Ledger
from donegate.record import Record
from donegate.teamledger.store import TeamLedger

BATCH = 500


class Shipped(Record):
    """What a sync did: receipts shipped, and those still waiting (the server failed midway)."""

    shipped: int
    waiting: int


def sync(local: Ledger, team: TeamLedger, batch: int = BATCH) -> Shipped:
    """Ship every receipt in ``local``'s outbox to ``team``; raises if the server fails."""
    shipped = 0
    while True:
        waiting = local.outbox(batch)
        if not waiting:
            return Shipped(shipped, 0)
        team.ship(waiting)
        local.shipped([r.id for r in waiting])
        shipped += len(waiting)
