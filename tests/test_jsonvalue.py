import math
from typing import Any

import pytest
from pydantic import ValidationError

from donegate.claim import Evidence
from tests.claims import evidence


@pytest.mark.parametrize(
    "observed",
    [{"a": math.nan}, {"a": [math.inf]}, {1: "x"}, {"a": object()}, {"a": {"b": (1, 2)}}],
)
def test_python_callers_cannot_put_non_json_into_a_claim(observed: Any) -> None:
    with pytest.raises(ValidationError):
        Evidence.model_validate(evidence(observed_value=observed))


def test_expected_must_be_an_object() -> None:
    with pytest.raises(ValidationError, match="JSON object"):
        Evidence.model_validate(evidence(expected=["billing_zip"]))


def test_json_values_pass_through_unchanged() -> None:
    value: dict[str, Any] = {"a": [1, 2.5, True, None, "x", {"b": []}]}
    assert Evidence.model_validate(evidence(observed_value=value)).observed_value == value
