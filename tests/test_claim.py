import json
from pathlib import Path

import pytest

from donegate.claim import Claim, json_schema, parse_claim
from donegate.errors import InvalidInput
from tests.claims import claim_doc, evidence

SCHEMA_FILE = Path(__file__).parents[1] / "schema" / "completion-claim-0.1.schema.json"


def test_mutations_and_evidence_may_be_omitted() -> None:
    doc = claim_doc()
    del doc["mutations"], doc["evidence"], doc["policy"]
    claim = parse_claim(json.dumps(doc))
    assert claim.mutations == []
    assert claim.evidence == []
    assert claim.policy is None


def test_unknown_fields_survive_a_round_trip() -> None:
    doc = claim_doc(x_run={"id": 7}, evidence=[evidence(x_note="kept")])
    doc["task"]["x_owner"] = "team-a"
    out = parse_claim(json.dumps(doc)).to_json_dict()
    assert out["x_run"] == {"id": 7}
    assert out["task"]["x_owner"] == "team-a"
    assert out["evidence"][0]["x_note"] == "kept"


def test_written_back_as_given() -> None:
    doc = claim_doc()
    doc["mutations"][0]["at"] = "2026-08-27T20:04:02.5+02:00"
    assert parse_claim(json.dumps(doc)).to_json_dict() == doc


def test_a_verdict_in_the_input_is_dropped() -> None:
    doc = claim_doc(verdict={"state": "verified", "unmet": [], "reason": None, "decided_at": 5})
    assert parse_claim(json.dumps(doc)).verdict is None


def test_parsed_data_goes_through_the_same_loader() -> None:
    with pytest.raises(InvalidInput) as info:
        parse_claim(claim_doc(mutations=[{"id": "m1"}]))
    assert info.value.path == "mutations[0].kind"


def test_error_lists_several_paths_but_names_the_first() -> None:
    doc = claim_doc(claimed_outcome=1, evidence=[evidence(at="soon", covers="m1")])
    with pytest.raises(InvalidInput) as info:
        parse_claim(json.dumps(doc))
    assert info.value.path == "claimed_outcome"
    assert "evidence[0].at" in str(info.value)
    assert "evidence[0].covers" in str(info.value)


def test_a_claim_built_in_python_is_checked_too() -> None:
    doc = claim_doc(evidence=[evidence(covers=["nope"])])
    with pytest.raises(ValueError, match="names no mutation"):
        Claim.model_validate(doc)


def test_checked_in_schema_matches_the_models() -> None:
    # Regenerate with `make schema` when the models change on purpose.
    assert json.loads(SCHEMA_FILE.read_text()) == json_schema()


def test_schema_is_draft_2020_12_and_requires_the_spec_fields() -> None:
    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schema["required"]) == {"spec_version", "task", "claimed_outcome"}
    evidence_def = schema["$defs"]["Evidence"]
    assert set(evidence_def["required"]) == {
        "check_type",
        "target",
        "expected",
        "at",
        "covers",
        "verifier",
    }
