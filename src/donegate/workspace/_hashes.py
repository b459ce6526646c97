"""Hash constructors for the hook path, without loading OpenSSL where it is not needed.

``import hashlib`` loads OpenSSL first (3 ms of a stop hook that changed nothing). BLAKE2, which
names workspaces and fingerprints snapshots, is CPython's own module, and so is the SHA-256 of
the few small files an interpreter environment is digested by; git's SHA-1 and SHA-256 of the
tree's files come from hashlib, imported the first time a file is actually read.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import _Hash
    from typing import Any

try:
    from _blake2 import blake2b
except ImportError:  # another interpreter: hashlib has it
    from hashlib import blake2b

__all__ = ["blake2b", "blob_id", "new"]


def new(name: str, data: bytes = b"") -> _Hash:
    """``hashlib.new(name, data)``, importing hashlib on first use."""
    import hashlib

    return hashlib.new(name, data)


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex, by CPython's own module where it has one."""
    for name in ("_sha2", "_sha256"):  # Python 3.12 and later; 3.11
        try:
            module: Any = importlib.import_module(name)
        except ImportError:
            continue
        return str(module.sha256(data).hexdigest())
    return new("sha256", data).hexdigest()


def blob_id(fmt: str, content: bytes) -> str:
    """The git blob id of ``content`` under object format ``fmt`` (``sha1`` or ``sha256``)."""
    h = new(fmt)
    h.update(b"blob %d\0" % len(content))
    h.update(content)
    return h.hexdigest()
