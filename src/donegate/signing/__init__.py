"""Signed receipts and evidence: DSSE envelopes holding in-toto Statements, Ed25519 keys.

:mod:`.dsse` signs and opens envelopes, :mod:`.keys` holds the key (created on first use in the
state directory), :mod:`.statement` says what is signed (a claim, or one evidence item bound to
its claim's mutations), :mod:`.trust` is ``verify --trust-key``'s pre-pass: evidence stays
``independent`` only when its envelope verifies against a trusted key. Needs ``cryptography``
(the ``sign`` extra), imported only here.
"""
