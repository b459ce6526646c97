"""DSSE v1 envelopes: ``{"payload", "payloadType", "signatures": [{"keyid", "sig"}]}``.

The signature covers the pre-authentication encoding (PAE) of the payload type and the payload,
so a payload cannot be re-read as another type. Opening an envelope verifies before it parses:
a payload is returned only when a trusted key signed it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Protocol

from donegate.errors import InvalidInput


class SignatureInvalid(InvalidInput):
    """An envelope that does not verify: malformed, unsigned, unknown key, or a bad signature."""


class Signer(Protocol):
    """A private key that signs bytes, known by its key id."""

    keyid: str

    def sign(self, data: bytes) -> bytes:
        """The signature of ``data``."""
        ...


class Verifier(Protocol):
    """A public key that checks signatures."""

    def verify(self, signature: bytes, data: bytes) -> None:
        """Return if ``signature`` is over ``data``; raise otherwise."""
        ...


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what the signature is over."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(payload), payload)


def sign(payload: bytes, payload_type: str, signer: Signer) -> dict[str, Any]:
    """An envelope of ``payload`` with one signature by ``signer``."""
    signature = signer.sign(pae(payload_type, payload))
    return {
        "payload": base64.b64encode(payload).decode("ascii"),
        "payloadType": payload_type,
        "signatures": [{"keyid": signer.keyid, "sig": base64.b64encode(signature).decode("ascii")}],
    }


def open_envelope(
    envelope: object, payload_type: str, trusted: Mapping[str, Verifier]
) -> tuple[bytes, str]:
    """The payload and the key id that signed it; ``SignatureInvalid`` saying why not."""
    if not isinstance(envelope, dict):
        raise SignatureInvalid("the signature is not a DSSE envelope (not a JSON object)")
    if envelope.get("payloadType") != payload_type:
        raise SignatureInvalid(
            f"envelope payloadType is {envelope.get('payloadType')!r}, expected {payload_type!r}"
        )
    payload = _b64("payload", envelope.get("payload"))
    signatures = envelope.get("signatures")
    if not isinstance(signatures, list) or not signatures:
        raise SignatureInvalid("the envelope has no signatures")
    why = "no signature by a trusted key"
    for entry in signatures:
        keyid = entry.get("keyid") if isinstance(entry, dict) else None
        key = trusted.get(keyid) if isinstance(keyid, str) else None
        if key is None or not isinstance(keyid, str):
            why = f"signed by key id {keyid!r}, which is not a trusted key"
            continue
        try:
            key.verify(_b64("sig", entry.get("sig")), pae(payload_type, payload))
        except Exception:  # cryptography's InvalidSignature, or a malformed signature
            why = f"the signature by key id {keyid!r} does not verify"
            continue
        return payload, keyid
    raise SignatureInvalid(why)


def _b64(name: str, value: object) -> bytes:
    if not isinstance(value, str):
        raise SignatureInvalid(f"envelope {name} is not base64 text")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        try:  # DSSE allows URL-safe base64 too
            return base64.urlsafe_b64decode(value)
        except (binascii.Error, ValueError):
            raise SignatureInvalid(f"envelope {name} is not base64") from None
