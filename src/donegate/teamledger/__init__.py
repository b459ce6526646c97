"""The team ledger: every machine's receipts in one PostgreSQL, shipped through a local outbox.

A stop only ever writes the local SQLite ledger (receipt and outbox row in one transaction), so it
never waits on the network. ``donegate ledger sync`` ships the outbox (:mod:`.ship`), idempotent
on each receipt's uuid, so a receipt shipped twice (a crash between the server's commit and the
outbox's) is still one row. The URL comes from the person's own configuration (:mod:`.settings`),
never from the agent's working tree.

A receipt the server refuses for its content is set aside (:mod:`.setaside`) and the others ship;
every exchange with the server has a deadline (:mod:`.store`); a sync stuck holding the lock is
told from a live one (:mod:`.background`).
"""
