"""Our DSSE envelopes against securesystemslib's, an independent implementation, both ways."""

from __future__ import annotations

import copy
import json

import pytest
from securesystemslib.dsse import Envelope
from securesystemslib.signer import CryptoSigner, SSlibKey  # type: ignore[attr-defined]

from donegate.signing import dsse
from donegate.signing.keys import SigningKey, TrustedKey
from donegate.signing.statement import PAYLOAD_TYPE

PAYLOAD = json.dumps({"_type": "https://in-toto.io/Statement/v1", "subject": []}).encode()


def _theirs(key: SigningKey) -> tuple[CryptoSigner, SSlibKey]:
    public = SSlibKey.from_crypto(key.public, keyid=key.keyid)
    return CryptoSigner(key._private, public), public


def test_ours_verify_with_securesystemslib() -> None:
    key = SigningKey.generate()
    ours = dsse.sign(PAYLOAD, PAYLOAD_TYPE, key)
    _, public = _theirs(key)
    envelope = Envelope.from_dict(copy.deepcopy(ours))  # from_dict consumes its input
    assert envelope.verify([public], 1) == {key.keyid: public}
    assert envelope.payload == PAYLOAD
    ours["payload"] = ours["payload"][:-4] + "AAA="  # control: their check does fail on a change
    with pytest.raises(Exception, match=r"(?i)verif|threshold"):
        Envelope.from_dict(copy.deepcopy(ours)).verify([public], 1)


def test_theirs_verify_with_ours() -> None:
    key = SigningKey.generate()
    signer, _ = _theirs(key)
    envelope = Envelope(PAYLOAD, PAYLOAD_TYPE, {})
    envelope.sign(signer)
    theirs = envelope.to_dict()
    trusted = {key.keyid: TrustedKey(key.keyid, key.public)}
    assert dsse.open_envelope(theirs, PAYLOAD_TYPE, trusted) == (PAYLOAD, key.keyid)
    other = SigningKey.generate()
    wrong = {key.keyid: TrustedKey(key.keyid, other.public)}
    with pytest.raises(dsse.SignatureInvalid, match="does not verify"):
        dsse.open_envelope(theirs, PAYLOAD_TYPE, wrong)
