"""``donegate report``: a week of receipts as one self-contained HTML page.

The page is built from any :class:`~donegate.report.source.ReceiptSource` (the local SQLite
ledger or a team's PostgreSQL): :mod:`.summary` counts, :mod:`.plots` draws (matplotlib, only
imported here), :mod:`.page` writes the HTML. Nothing in it loads anything from the network.
"""
