import json
from pathlib import Path

import pytest

from donegate.errors import InvalidInput
from donegate.policy import AppliedPolicy, Policy, load_policy_file, parse_policy


def test_a_policy_file_is_parsed_and_keeps_its_numbers(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"id": "team", "requires": ["test_run"], "max_age_s": 300}))
    policy = load_policy_file(path)
    assert policy.requires == ["test_run"]
    assert policy.model_dump(exclude_unset=True)["max_age_s"] == 300
    assert policy.on_unverified == "block"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"max_age_s": true}', "expected a number of seconds, got bool"),
        ('{"max_age_s": -0.5}', "must be >= 0"),
        ('{"max_age_s": NaN}', "NaN"),
        ('{"requires": "test_run"}', "requires"),
        ('{"on_unverified": "ignore"}', "on_unverified"),
        ("[]", "policy"),
        ("{", "not valid JSON"),
    ],
)
def test_bad_policies_are_rejected_with_their_path(text: str, says: str) -> None:
    with pytest.raises(InvalidInput, match=says):
        parse_policy(text)


def test_a_missing_policy_file_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="cannot read policy file"):
        load_policy_file(tmp_path / "nope.json")


def test_no_applied_policy_requires_nothing_and_blocks() -> None:
    none = AppliedPolicy(source="none")
    assert (none.requires, none.max_age_s, none.on_unverified) == ([], None, "block")
    given = AppliedPolicy(source="config", policy=Policy(requires=["x"], on_unverified="warn"))
    assert (given.requires, given.on_unverified) == (["x"], "warn")
