"""Ed25519 keys: this machine's signing key, and the public keys a verifier trusts.

The signing key is ``signing-key.pem`` in the state directory (outside the agent's tree), created
on first use with mode 0600 and exclusively (two hooks at once make one key), or the PEM file
``$DONEGATE_SIGNING_KEY`` names. A key's id is the SHA-256 of its raw public bytes, in hex.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from donegate import statedir
from donegate.errors import InvalidInput
from donegate.record import Record

KEY_FILE = "signing-key.pem"


def keyid_of(public: Ed25519PublicKey) -> str:
    """The key's id: SHA-256 of its 32 raw bytes, hex."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


class SigningKey:
    """An Ed25519 private key with its id; signs bytes."""

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private
        self.public = private.public_key()
        self.keyid = keyid_of(self.public)

    @classmethod
    def generate(cls) -> SigningKey:
        """A fresh key (tests, and the first use)."""
        return cls(Ed25519PrivateKey.generate())

    def sign(self, data: bytes) -> bytes:
        """The Ed25519 signature of ``data``."""
        return self._private.sign(data)

    def public_pem(self) -> str:
        """The public key as PEM (SubjectPublicKeyInfo), for ``--trust-key``."""
        return self.public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")

    def private_pem(self) -> bytes:
        """The private key as unencrypted PKCS#8 PEM."""
        return self._private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


class TrustedKey(Record):
    """A public key a verifier trusts, by its id."""

    keyid: str
    public: Ed25519PublicKey

    def verify(self, signature: bytes, data: bytes) -> None:
        """Return if ``signature`` verifies; raise ``InvalidSignature`` otherwise."""
        self.public.verify(signature, data)


def signing_key(state_dir: str | Path | None = None) -> SigningKey:
    """The configured key (``$DONEGATE_SIGNING_KEY``), else the state directory's, made if new."""
    configured = os.environ.get("DONEGATE_SIGNING_KEY")
    if configured:
        return SigningKey(_load_private(Path(configured)))
    path = statedir.ensure(state_dir) / KEY_FILE
    if path.exists():
        return SigningKey(_load_private(path))
    # Written whole under a private name, then linked in: another hook never reads half a key,
    # and of two made at once the first link wins and both use it.
    key = SigningKey.generate()
    draft = path.with_name(f".{KEY_FILE}.{os.getpid()}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(key.private_pem())
    try:
        os.link(draft, path)
    except FileExistsError:
        return SigningKey(_load_private(path))
    finally:
        draft.unlink()
    return key


def trusted_key(path: Path) -> TrustedKey:
    """The Ed25519 public key in PEM file ``path``."""
    try:
        public = serialization.load_pem_public_key(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{path}: not a readable PEM public key ({exc})") from None
    if not isinstance(public, Ed25519PublicKey):
        raise InvalidInput(f"{path}: not an Ed25519 public key")
    return TrustedKey(keyid_of(public), public)


def _load_private(path: Path) -> Ed25519PrivateKey:
    # Written by us or a person before an agent ran; a partly written file is still refused.
    try:
        private = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise InvalidInput(f"{path}: not a readable signing key ({exc})") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise InvalidInput(f"{path}: not an Ed25519 private key")
    return private


__all__ = ["InvalidSignature", "SigningKey", "TrustedKey", "signing_key", "trusted_key"]
