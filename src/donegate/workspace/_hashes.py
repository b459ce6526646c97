"""Hash constructors for the hook path, without loading OpenSSL where it is not needed.

``import hashlib`` loads OpenSSL first (3 ms of a stop hook that changed nothing). BLAKE2, which
names workspaces and fingerprints snapshots, is CPython's own module; git's SHA-1 and SHA-256
come from hashlib, imported the first time a file is actually read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import _Hash

try:
    from _blake2 import blake2b
except ImportError:  # another interpreter: hashlib has it
    from hashlib import blake2b

__all__ = ["blake2b", "new"]


def new(name: str, data: bytes = b"") -> _Hash:
    """``hashlib.new(name, data)``, importing hashlib on first use."""
    import hashlib

    return hashlib.new(name, data)
