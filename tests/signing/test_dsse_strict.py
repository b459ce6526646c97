"""DSSE envelopes read as the spec writes them: the keyid a hint.

DSSE (envelope.md, protocol.md) makes ``keyid`` an optional, unauthenticated hint: a signature
without one is tried against every trusted key, while one naming a key nobody trusts is not
trusted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from donegate.cli.app import run
from donegate.signing import dsse
from donegate.signing.evidence import sign_evidence
from donegate.signing.keys import SigningKey, TrustedKey
from donegate.signing.statement import PAYLOAD_TYPE
from tests.claims import NOW, claim_doc

PAYLOAD = b'{"_type":"statement","k":1}'
VERIFIED, UNVERIFIED = 0, 3


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


def test_an_empty_payload_is_canonical(key: SigningKey) -> None:
    envelope = dsse.sign(b"", PAYLOAD_TYPE, key)
    assert envelope["payload"] == ""
    assert dsse.open_envelope(envelope, PAYLOAD_TYPE, _trusted(key)) == (b"", key.keyid)
