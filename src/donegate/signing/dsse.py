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
    """The payload and the id of the trusted key that signed it; ``SignatureInvalid`` saying why
    not.

    A signature's ``keyid`` is an unauthenticated hint (DSSE): one naming a trusted key is checked
    against that key alone, one naming any other key is not trusted, and a signature without one
    (absent, null or empty, which DSSE reads alike) is tried against every trusted key.
    """
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
    signed = pae(payload_type, payload)
    why = "no signature by a trusted key"
    for entry in signatures:
        try:
            return payload, _signer(entry, signed, trusted)
        except SignatureInvalid as exc:
            why = str(exc)
    raise SignatureInvalid(why)


def _signer(entry: object, signed: bytes, trusted: Mapping[str, Verifier]) -> str:
    """The id of the trusted key whose signature ``entry`` is over ``signed``."""
    if not isinstance(entry, dict):
        raise SignatureInvalid("a signature is not a JSON object")
    keyid = entry.get("keyid")
    if keyid is None:  # unset: protobuf's JSON mapping reads null as unset too
        keyid = ""
    if not isinstance(keyid, str):
        raise SignatureInvalid(f"a signature's key id is not text: {keyid!r}")
    if keyid and keyid not in trusted:
        raise SignatureInvalid(f"signed by key id {keyid!r}, which is not a trusted key")
    signature = _b64("sig", entry.get("sig"))
    candidates = [(keyid, trusted[keyid])] if keyid else list(trusted.items())
    for candidate_id, key in candidates:
        try:
            key.verify(signature, signed)
        except Exception:  # cryptography's InvalidSignature, or a signature of the wrong size
            continue
        return candidate_id
    if keyid:
        raise SignatureInvalid(f"the signature by key id {keyid!r} does not verify")
    raise SignatureInvalid("the signature without a key id verifies against no trusted key")


def _b64(name: str, value: object) -> bytes:
    """``value`` decoded, if it is the one spelling of its bytes in either alphabet DSSE allows.

    Decoders pass over bits past the last byte, runs of padding and (leniently) any character
    outside the alphabet, so many texts read as the same bytes: re-encoding and comparing keeps
    one, padded as RFC 4648 writes it.
    """
    if isinstance(value, str) and value.isascii():
        for decode, encode in _ALPHABETS:
            try:
                raw = decode(value)
            except (binascii.Error, ValueError):
                continue
            if encode(raw) == value.encode("ascii"):
                return raw
    raise SignatureInvalid(f"envelope {name} is not canonical base64 (RFC 4648, padded)")


def _urlsafe_decode(text: str) -> bytes:
    # urlsafe_b64decode has no validate flag; its alphabet mapped onto the standard one is checked
    # by b64decode, and the re-encoding refuses a text that mixed the two.
    return base64.b64decode(text.translate(_URLSAFE_TO_STANDARD), validate=True)


def _standard_decode(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


_URLSAFE_TO_STANDARD = str.maketrans("-_", "+/")
_ALPHABETS = (
    (_standard_decode, base64.b64encode),
    (_urlsafe_decode, base64.urlsafe_b64encode),
)
