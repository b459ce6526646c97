"""Options are validated when the gate is built: bad ones never reach a decision."""

from __future__ import annotations

from typing import Any

import pytest

from donegate.errors import InvalidInput
from donegate.gate import GateOptions, parse_options


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"max_vetoes": -1}, "options.max_vetoes"),
        ({"max_vetoes": 2.0}, "options.max_vetoes"),
        ({"max_vetoes": "3"}, "options.max_vetoes"),
        ({"max_strict_vetoes": -5}, "options.max_strict_vetoes"),
        ({"escalation_threshold": 0}, "options.escalation_threshold"),
        ({"escalation_threshold": True}, "options.escalation_threshold"),
        ({"escalation_target": "  "}, "options.escalation_target"),
        ({"escalation_target": 7}, "options.escalation_target"),
        ({"feedback_templates": {"no_such_key": "x"}}, "options.feedback_templates.no_such_key"),
        (
            {"feedback_templates": {"missing_verification": 3}},
            "options.feedback_templates.missing_verification",
        ),
        ({"feedback_templates": ["x"]}, "options.feedback_templates"),
        ({"require_source_write": "true"}, "options.require_source_write"),
        ({"requires_write": 1}, "options.requires_write"),
        ({"facts": "a callback"}, "options.facts"),
        ({"judge": True}, "options.judge"),
    ],
)
def test_bad_options_are_rejected_naming_the_key(data: dict[str, Any], path: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_options(data)
    assert caught.value.path == path


@pytest.mark.parametrize(
    "name", ["facts", "classify_write", "verify_command", "feedback_decorator"]
)
def test_callbacks_must_be_callable(name: str) -> None:
    with pytest.raises(InvalidInput, match="expected a callable") as caught:
        GateOptions(**{name: "not callable"})  # type: ignore[arg-type]
    assert caught.value.path == name


def test_defaults() -> None:
    options = parse_options(None)
    assert (options.max_vetoes, options.max_strict_vetoes, options.escalation_threshold) == (
        3,
        5,
        3,
    )
    assert options.require_source_write is True
    assert options.requires_write is None
    assert options.degraded


def test_the_templates_are_copied_so_the_caller_cannot_change_a_built_gate() -> None:
    templates = {"missing_verification": "run it"}
    options = GateOptions(feedback_templates=templates)
    templates["missing_verification"] = "changed"
    assert options.feedback_templates["missing_verification"] == "run it"


def test_callbacks_are_added_to_plain_options() -> None:
    options = parse_options({"max_vetoes": 0}, verify_command=lambda: None)
    assert options.max_vetoes == 0
    assert not options.degraded
