"""Where the report reads receipts from: the local ledger or a team ledger, one protocol."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from donegate.ledger import Receipt


class ReceiptSource(Protocol):
    """A store of receipts that can be queried by time (the local and the team ledger)."""

    def query(
        self,
        *,
        since: datetime | None = None,
        verdict: str | None = None,
        session: str | None = None,
        limit: int | None = None,
    ) -> list[Receipt]:
        """The receipts matching every filter given, newest first."""
        ...
