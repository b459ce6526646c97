from typing import Any

import pytest

from donegate.expectation import compare, json_equal, satisfies


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (True, 1, False),
        (False, 0, False),
        (1, True, False),
        ("94107", 94107, False),
        (2, 2.0, True),
        (None, None, True),
        (None, 0, False),
        ([1, 2], [1, 2], True),
        ([1, 2], [2, 1], False),
        ([True], [1], False),
        ({"a": 1}, {"a": 1.0}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ("a", "a", True),
    ],
)
def test_json_equal_is_strictly_typed(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal
    assert json_equal(b, a) is equal


def test_objects_are_satisfied_as_a_subset_recursively() -> None:
    assert satisfies({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}, "d": 3})
    assert not satisfies({"a": {"b": 1}}, {"a": {"c": 2}})
    assert not satisfies({"a": 1}, [1])


def test_compare_outcomes() -> None:
    assert compare("x", {"a": 1}, {"a": 1}).outcome == "match"
    assert compare("x", {"a": 1}, {"a": 2}).contradicted == ("a",)
    assert compare("x", {"a": 1, "b": 2}, {"a": 1}).outcome == "no_observation"
    assert compare("x", {"a": 1, "b": 2}, {"a": 0}).outcome == "contradicts"
    assert compare("x", {"a": 1}, None).outcome == "no_observation"
    assert compare("x", {"a": 1}, [1]).outcome == "no_observation"
    assert compare("x", {}, {"a": 1}).outcome == "no_observation"


def test_body_contains_rule_applies_to_endpoint_health_only() -> None:
    expected = {"body_contains": '"version":"1.4.2"'}
    assert compare("endpoint_health", expected, {"body_contains": True}).outcome == "match"
    assert compare("endpoint_health", expected, {"body_contains": False}).outcome == "contradicts"
    assert compare("endpoint_health", expected, {"body_contains": 1}).outcome == "contradicts"
    assert compare("other", expected, {"body_contains": True}).outcome == "contradicts"
