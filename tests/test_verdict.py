"""Options of the verdict that the document itself cannot express (conformance covers the rules)."""

from donegate.claim import parse_claim
from donegate.instant import Instant
from donegate.verdict import VerifyOptions, decide
from tests.claims import NOW, claim_doc, evidence

SECOND = evidence(check_type="test_run", expected={"exit_code": 0}, observed_value=None)


def test_a_required_item_that_does_not_match_keeps_the_claim_unverified() -> None:
    claim = parse_claim(claim_doc(evidence=[evidence(), SECOND]))
    plain = decide(claim, VerifyOptions(now=Instant.parse(NOW)))
    assert plain.state == "verified"
    strict = decide(claim, VerifyOptions(now=Instant.parse(NOW), required={1: "tests"}))
    assert strict.state == "unverified"
    assert strict.unmet == ["check:tests"]
    assert strict.reason is not None
    assert strict.reason.startswith("Configured check tests did not confirm the claim")


def test_required_items_that_match_change_nothing() -> None:
    claim = parse_claim(claim_doc())
    verdict = decide(claim, VerifyOptions(now=Instant.parse(NOW), required={0: "readback"}))
    assert (verdict.state, verdict.unmet) == ("verified", [])


def test_a_contradiction_still_refutes_with_required_items() -> None:
    wrong = evidence(observed_value={"billing_zip": "1"})
    claim = parse_claim(claim_doc(evidence=[wrong]))
    verdict = decide(claim, VerifyOptions(now=Instant.parse(NOW), required={0: "readback"}))
    assert verdict.state == "refuted"
