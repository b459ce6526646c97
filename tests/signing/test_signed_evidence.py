"""``verify --trust-key``: evidence counts as independent only when a trusted key signed it.

Each attack is first shown to work without the defence (plain ``verify`` believes the label).
"""

from __future__ import annotations

import base64
import copy
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from donegate.cli.app import run
from donegate.signing.evidence import sign_claim, sign_evidence
from donegate.signing.keys import SigningKey, signing_key
from tests.claims import NOW, claim_doc

VERIFIED, UNVERIFIED = 0, 3


def _write(tmp_path: Path, name: str, doc: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def _pub(tmp_path: Path, key: SigningKey, name: str = "team.pub") -> str:
    path = tmp_path / name
    path.write_text(key.public_pem())
    return str(path)


def _verify(claim: str, *extra: str) -> int:
    return run(["verify", claim, "--now", NOW, *extra])


@pytest.fixture
def key() -> SigningKey:
    return SigningKey.generate()


def test_a_validly_signed_claim_counts(tmp_path: Path, key: SigningKey) -> None:
    signed = _write(tmp_path, "c.json", sign_evidence(claim_doc(), key))
    assert _verify(signed, "--trust-key", _pub(tmp_path, key)) == VERIFIED


def test_unsigned_evidence_does_not_count(tmp_path: Path, key: SigningKey) -> None:
    plain = _write(tmp_path, "c.json", claim_doc())
    assert _verify(plain) == VERIFIED  # the label alone is believed without --trust-key
    assert _verify(plain, "--trust-key", _pub(tmp_path, key)) == UNVERIFIED


def _tampered_payload(doc: dict[str, Any]) -> dict[str, Any]:
    envelope = doc["evidence"][0]["dsse"]
    statement = json.loads(base64.b64decode(envelope["payload"]))
    statement["predicate"]["observed_value"] = {"billing_zip": "00000"}
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    return doc


def _tampered_item(doc: dict[str, Any]) -> dict[str, Any]:
    doc["evidence"][0]["at"] = "2026-08-27T18:04:08Z"  # the item changed after signing
    return doc


@pytest.mark.parametrize("tamper", [_tampered_payload, _tampered_item])
def test_a_tampered_envelope_does_not_count(tmp_path: Path, key: SigningKey, tamper: Any) -> None:
    doc = tamper(sign_evidence(claim_doc(), key))
    path = _write(tmp_path, "c.json", doc)
    assert _verify(path) == VERIFIED  # the tampered item still reads as independent evidence
    assert _verify(path, "--trust-key", _pub(tmp_path, key)) == UNVERIFIED


def test_a_wrong_key_does_not_count(tmp_path: Path, key: SigningKey) -> None:
    other = SigningKey.generate()
    doc = sign_evidence(claim_doc(), other)
    doc["evidence"][0]["dsse"]["signatures"][0]["keyid"] = key.keyid  # claims the trusted id
    path = _write(tmp_path, "c.json", doc)
    assert _verify(path, "--trust-key", _pub(tmp_path, other, "other.pub")) == UNVERIFIED
    assert _verify(path, "--trust-key", _pub(tmp_path, key)) == UNVERIFIED


def test_an_unknown_key_id_does_not_count(tmp_path: Path, key: SigningKey) -> None:
    stranger = SigningKey.generate()
    path = _write(tmp_path, "c.json", sign_evidence(claim_doc(), stranger))
    assert _verify(path, "--trust-key", _pub(tmp_path, stranger, "s.pub")) == VERIFIED  # control
    assert _verify(path, "--trust-key", _pub(tmp_path, key)) == UNVERIFIED


def test_a_signature_over_a_different_claim_does_not_count(tmp_path: Path, key: SigningKey) -> None:
    other = claim_doc(
        mutations=[
            {
                "id": "m1",
                "kind": "state_write",
                "target": "accounts/9",
                "at": "2026-08-27T18:04:02Z",
            }
        ]
    )
    stolen = sign_evidence(other, key)["evidence"]
    doc = claim_doc(evidence=stolen)
    path = _write(tmp_path, "c.json", doc)
    assert _verify(path) == VERIFIED  # copied evidence is believed on its label alone
    assert _verify(path, "--trust-key", _pub(tmp_path, key)) == UNVERIFIED


def test_the_reason_is_said(
    tmp_path: Path, key: SigningKey, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "c.json", claim_doc())
    capsys.readouterr()
    assert _verify(path, "--trust-key", _pub(tmp_path, key), "--json") == UNVERIFIED
    out = json.loads(capsys.readouterr().out)
    assert out["evidence"][0]["verifier"]["kind"] == "self_attested"
    assert out["evidence"][0]["donegate_note"] == (
        "not counted as independent: the evidence is not signed"
    )


def test_the_signing_key_is_made_once_and_private(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = signing_key(tmp_path)
    assert stat.S_IMODE(os.stat(tmp_path / "signing-key.pem").st_mode) == 0o600
    assert signing_key(tmp_path).keyid == first.keyid
    capsys.readouterr()
    assert run(["key", "show", "--state-dir", str(tmp_path)]) == 0
    shown = capsys.readouterr()
    assert shown.out == first.public_pem()
    assert first.keyid in shown.err


def test_a_signed_receipt_binds_its_claim(key: SigningKey) -> None:
    from donegate.signing import dsse
    from donegate.signing.statement import PAYLOAD_TYPE, digest

    doc = claim_doc()
    envelope = sign_claim(doc, key)
    payload, keyid = dsse.open_envelope(envelope, PAYLOAD_TYPE, {key.keyid: _trusted(key)})
    statement = json.loads(payload)
    assert keyid == key.keyid
    assert statement["predicate"] == doc
    assert statement["subject"][0]["digest"]["sha256"] == digest(doc)
    changed = copy.deepcopy(envelope)
    changed["payloadType"] = "application/json"
    with pytest.raises(dsse.SignatureInvalid, match="payloadType"):
        dsse.open_envelope(changed, PAYLOAD_TYPE, {key.keyid: _trusted(key)})


def _trusted(key: SigningKey) -> Any:
    from donegate.signing.keys import TrustedKey

    return TrustedKey(key.keyid, key.public)


def test_collect_signs_what_it_collected_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    monkeypatch.setenv("DONEGATE_STATE_DIR", str(tmp_path / "state"))
    check = json.dumps([sys.executable, "-c", "pass"])
    (tmp_path / "donegate.toml").write_text(
        f'[[checks]]\ncheck_type = "test_run"\ncommand = {check}\n'
    )
    agent_item = {
        "check_type": "test_run",
        "target": "pytest",
        "expected": {"exit_code": 0},
        "observed_value": {"exit_code": 0},
        "at": "2099-01-01T00:00:00Z",
        "covers": ["m1"],
        "verifier": {"id": "agent/1", "kind": "independent"},
    }
    mutation = {
        "id": "m1",
        "kind": "file_write",
        "target": "src/a.py",
        "at": "2026-01-01T00:00:00Z",
    }
    claim = _write(
        tmp_path,
        "in.json",
        {
            "spec_version": "0.1",
            "task": {"id": "t"},
            "claimed_outcome": "done",
            "mutations": [mutation],
            "evidence": [agent_item],
        },
    )
    config = str(tmp_path / "donegate.toml")
    capsys.readouterr()
    run(["collect", claim, "--config", config, "--json", "--sign"])
    signed = json.loads(capsys.readouterr().out)
    assert "dsse" not in signed["evidence"][0]  # the agent's item is not vouched for
    assert "dsse" in signed["evidence"][1]
    capsys.readouterr()
    assert run(["key", "show"]) == 0
    pub = tmp_path / "machine.pub"
    pub.write_text(capsys.readouterr().out)
    out = _write(tmp_path, "out.json", signed)
    capsys.readouterr()
    run(["verify", out, "--trust-key", str(pub), "--json"])
    verified = json.loads(capsys.readouterr().out)
    kinds = [e["verifier"]["kind"] for e in verified["evidence"]]
    assert kinds == ["self_attested", "independent"]
