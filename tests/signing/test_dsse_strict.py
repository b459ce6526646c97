"""DSSE envelopes read as the spec writes them: the keyid a hint, the base64 canonical.

DSSE (envelope.md, protocol.md) makes ``keyid`` an optional, unauthenticated hint: a signature
without one is tried against every trusted key, while one naming a key nobody trusts is not
trusted. Base64 is RFC 4648, the standard or the URL-safe alphabet, padded: any other text that
decodes to the same bytes (bits set past the last byte, padding missing or doubled, whitespace, the
two alphabets mixed) is refused, so an envelope has one spelling.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from donegate.cli.app import run
from donegate.signing import dsse
from donegate.signing.evidence import sign_evidence
from donegate.signing.keys import SigningKey, TrustedKey
from donegate.signing.statement import PAYLOAD_TYPE
from tests.claims import NOW, claim_doc

# 31 bytes (31 % 3 == 1): its base64 ends in "==", with four unused bits before the padding;
# "+/" and "-_" both occur in it, so each alphabet has its own spelling.
PAYLOAD = b"\xfb\xff\xbf" + b'{"_type":"statement","k":1}' + b"\x3e"
VERIFIED, UNVERIFIED = 0, 3
# Ed25519 signs deterministically: this key's signature of PAYLOAD has seven "+" or "/" in it, so
# it too can be spelt with the alphabets mixed (a random key's has none one time in fifteen).
FIXED = SigningKey(Ed25519PrivateKey.from_private_bytes(bytes(32)))


@pytest.fixture
def key() -> SigningKey:
    return SigningKey.generate()


def _trusted(*keys: SigningKey) -> dict[str, dsse.Verifier]:
    return {k.keyid: TrustedKey(k.keyid, k.public) for k in keys}


def _signed(key: SigningKey) -> dict[str, Any]:
    return dsse.sign(PAYLOAD, PAYLOAD_TYPE, key)


@pytest.mark.parametrize(
    "absent",
    [lambda s: s.pop("keyid"), lambda s: s.update(keyid=""), lambda s: s.update(keyid=None)],
    ids=["absent", "empty", "null"],
)
def test_a_signature_without_a_keyid_is_tried_against_every_trusted_key(
    key: SigningKey, absent: Any
) -> None:
    envelope = _signed(key)
    absent(envelope["signatures"][0])
    trusted = _trusted(SigningKey.generate(), key, SigningKey.generate())
    assert dsse.open_envelope(envelope, PAYLOAD_TYPE, trusted) == (PAYLOAD, key.keyid)


def test_a_signature_without_a_keyid_by_no_trusted_key_is_refused(key: SigningKey) -> None:
    envelope = _signed(key)
    del envelope["signatures"][0]["keyid"]
    trusted = _trusted(SigningKey.generate(), SigningKey.generate())
    with pytest.raises(dsse.SignatureInvalid, match="no trusted key"):
        dsse.open_envelope(envelope, PAYLOAD_TYPE, trusted)
    with pytest.raises(dsse.SignatureInvalid):
        dsse.open_envelope(envelope, PAYLOAD_TYPE, {})


def test_a_keyid_naming_an_unknown_key_is_not_tried_against_the_others(key: SigningKey) -> None:
    # The hint is not a way in: a trusted key's valid signature under another name is refused.
    envelope = _signed(key)
    envelope["signatures"][0]["keyid"] = SigningKey.generate().keyid
    with pytest.raises(dsse.SignatureInvalid, match="not a trusted key"):
        dsse.open_envelope(envelope, PAYLOAD_TYPE, _trusted(key))


@pytest.mark.parametrize("keyid", [5, True, ["x"], {"id": "x"}])
def test_a_keyid_that_is_not_text_is_refused(key: SigningKey, keyid: Any) -> None:
    envelope = _signed(key)
    envelope["signatures"][0]["keyid"] = keyid
    with pytest.raises(dsse.SignatureInvalid, match="key id"):
        dsse.open_envelope(envelope, PAYLOAD_TYPE, _trusted(key))


def test_a_later_signature_without_a_keyid_still_counts(key: SigningKey) -> None:
    envelope = _signed(key)
    stranger = _signed(SigningKey.generate())["signatures"][0]
    bare = {"sig": envelope["signatures"][0]["sig"]}
    envelope["signatures"] = [stranger, bare]
    assert dsse.open_envelope(envelope, PAYLOAD_TYPE, _trusted(key)) == (PAYLOAD, key.keyid)


def test_evidence_signed_without_a_keyid_counts_end_to_end(tmp_path: Path, key: SigningKey) -> None:
    doc = sign_evidence(claim_doc(), key)
    del doc["evidence"][0]["dsse"]["signatures"][0]["keyid"]
    claim, pub, other = tmp_path / "c.json", tmp_path / "k.pub", tmp_path / "o.pub"
    claim.write_text(json.dumps(doc))
    pub.write_text(key.public_pem())
    other.write_text(SigningKey.generate().public_pem())
    assert run(["verify", str(claim), "--now", NOW, "--trust-key", str(pub)]) == VERIFIED
    assert run(["verify", str(claim), "--now", NOW, "--trust-key", str(other)]) == UNVERIFIED


def _urlsafe(text: str) -> str:
    return text.replace("+", "-").replace("/", "_")


def _spare_bits(text: str) -> str:
    """The same bytes, with a bit set in the unused tail of the last full character."""
    stripped = text.rstrip("=")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = alphabet.index(stripped[-1])
    assert last & 1 == 0  # a padded "==" tail leaves four bits unused, a "=" tail two
    return stripped[:-1] + alphabet[last | 1] + "=" * (len(text) - len(stripped))


def _mixed(text: str) -> str:
    """One character in the URL-safe alphabet, the rest standard."""
    for standard, urlsafe in (("+", "-"), ("/", "_")):
        if standard in text:
            return text.replace(standard, urlsafe, 1)
    raise AssertionError("no character differs between the alphabets")


NON_CANONICAL: dict[str, Callable[[str], str]] = {
    "spare bits set": _spare_bits,
    "padding missing": lambda t: t.rstrip("="),
    "padding short": lambda t: t[:-1] if t.endswith("==") else t + "A",
    "padding doubled": lambda t: t + "=",
    "padding then more": lambda t: t + t,
    "a newline at the end": lambda t: t + "\n",
    "a newline inside": lambda t: t[:8] + "\n" + t[8:],
    "a space inside": lambda t: t[:4] + " " + t[4:],
    "alphabets mixed": _mixed,
    "a character of neither": lambda t: t[:4] + "!" + t[4:],
    "non-ASCII text": lambda t: t[:4] + "é" + t[4:],
}


def _spelled_payload(envelope: dict[str, Any], spell: Any) -> None:
    envelope["payload"] = spell(envelope["payload"])


def _spelled_sig(envelope: dict[str, Any], spell: Any) -> None:
    signature = envelope["signatures"][0]
    signature["sig"] = spell(signature["sig"])


@pytest.mark.parametrize("where", [_spelled_payload, _spelled_sig], ids=["payload", "sig"])
@pytest.mark.parametrize("spell", NON_CANONICAL.values(), ids=NON_CANONICAL.keys())
def test_non_canonical_base64_is_refused(where: Any, spell: Any) -> None:
    envelope = _signed(FIXED)
    where(envelope, spell)
    with pytest.raises(dsse.SignatureInvalid):
        dsse.open_envelope(envelope, PAYLOAD_TYPE, _trusted(FIXED))


@pytest.mark.parametrize("where", [_spelled_payload, _spelled_sig], ids=["payload", "sig"])
def test_the_url_safe_alphabet_padded_is_accepted(where: Any) -> None:
    # DSSE allows either alphabet; each is canonical in its own spelling.
    envelope = _signed(FIXED)
    where(envelope, _urlsafe)
    assert dsse.open_envelope(envelope, PAYLOAD_TYPE, _trusted(FIXED)) == (PAYLOAD, FIXED.keyid)


@pytest.mark.parametrize("where", ["payload", "sig"])
def test_the_spellings_refused_decode_to_the_signed_bytes_leniently(where: str) -> None:
    """The control: a lenient decoder reads most of them as the very bytes that were signed, so
    only the re-encoding tells them apart."""
    envelope = _signed(FIXED)
    text = envelope["payload"] if where == "payload" else envelope["signatures"][0]["sig"]
    raw = base64.b64decode(text)
    assert text.endswith("==")  # four spare bits
    assert _mixed(text) not in (text, _urlsafe(text))
    lenient = [
        base64.urlsafe_b64decode(spell(text))
        for name, spell in NON_CANONICAL.items()
        if name in ("spare bits set", "a newline inside", "a space inside", "alphabets mixed")
    ]
    assert lenient == [raw] * 4


def test_an_empty_payload_is_canonical(key: SigningKey) -> None:
    envelope = dsse.sign(b"", PAYLOAD_TYPE, key)
    assert envelope["payload"] == ""
    assert dsse.open_envelope(envelope, PAYLOAD_TYPE, _trusted(key)) == (b"", key.keyid)
