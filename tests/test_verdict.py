"""Options of the verdict that the document itself cannot express (conformance covers the rules)."""

import json

import pytest

from donegate.bulk import Batch
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


def test_a_built_verdict_is_the_model_validation_would_make() -> None:
    # decide() builds its models without validation (see donegate.wire.built): the same values,
    # the same fields set, the same JSON as a validated model of the same data.
    from donegate.claim import Verdict

    docs = [claim_doc(), claim_doc(policy=None), claim_doc(evidence=[])]
    for doc in docs:
        claim = parse_claim(json.dumps(doc))
        verdict = decide(claim, VerifyOptions(now=Instant.parse(NOW)))
        again = Verdict.model_validate(verdict.model_dump(exclude_unset=True))
        assert verdict == again
        assert verdict.model_fields_set == again.model_fields_set
        assert verdict.applied_policy is not None
        assert again.applied_policy is not None
        assert verdict.applied_policy.model_fields_set == again.applied_policy.model_fields_set
        assert verdict.model_dump_json(exclude_unset=True) == again.model_dump_json(
            exclude_unset=True
        )


def test_a_claim_with_its_verdict_is_the_copy_pydantic_would_make() -> None:
    claim = parse_claim(json.dumps(claim_doc(x_team={"kept": [1, 2]})))
    verdict = decide(claim, VerifyOptions(now=Instant.parse(NOW)))
    ours, theirs = claim.with_verdict(verdict), claim.model_copy(update={"verdict": verdict})
    assert ours == theirs
    assert ours.model_fields_set == theirs.model_fields_set
    assert ours.__pydantic_extra__ == theirs.__pydantic_extra__ == {"x_team": {"kept": [1, 2]}}
    assert ours.to_json_dict() == theirs.to_json_dict()
    assert ours.model_dump_json() == theirs.model_dump_json()
    assert claim.verdict is None  # the original is untouched


@pytest.mark.parametrize(
    ("at", "covers", "why"),
    [
        ("2026-08-27T18:04:05Z", ["m1"], None),  # before m2, which it does not cover: counts
        ("2026-08-27T18:04:05Z", ["m1", "m2"], "not after mutation m2 at 2026-08-27T18:04:08Z"),
        ("2026-08-27T18:04:08Z", ["m2"], "not after mutation m2 at 2026-08-27T18:04:08Z"),
        ("2026-08-27T18:04:02Z", ["m2", "m1"], "not after mutation m2 at 2026-08-27T18:04:08Z"),
        ("2026-08-27T18:04:09Z", [], None),  # covers nothing: rule 2 asks nothing of it
    ],
)
def test_rule_2_compares_an_item_with_each_mutation_it_covers(
    at: str, covers: list[str], why: str | None
) -> None:
    # Items dated after every mutation are passed with one comparison; the others must still be
    # judged against exactly the mutations they cover, first failure named, in the batch too.
    mutations = [
        {"id": "m1", "kind": "state_write", "target": "a", "at": "2026-08-27T18:04:02Z"},
        {"id": "m2", "kind": "state_write", "target": "b", "at": "2026-08-27T18:04:08Z"},
    ]
    doc = claim_doc(mutations=mutations, evidence=[evidence(at=at, covers=covers)])
    options = VerifyOptions(now=Instant.parse(NOW))
    finding = decide(parse_claim(json.dumps(doc)), options).evidence[0]
    assert finding.counts == (why is None)
    if why is not None:
        assert why in finding.why
    answer = json.loads(Batch(options).answer(1, json.dumps(doc).encode()))
    assert answer["verdict"]["evidence"][0]["why"] == finding.why
