"""Write normalisation, combining verifier results, and rejecting malformed facts."""

from __future__ import annotations

from typing import Any

import pytest

from donegate.errors import InvalidInput
from donegate.gate import CompletionFacts, VerifyResult, WriteFact, parse_facts
from donegate.gate.facts import combine, count_writes


def counts(data: dict[str, Any], classify: Any = None) -> tuple[bool, int, int, int]:
    c = count_writes(parse_facts(data), classify)
    return (c.known, c.source, c.cosmetic, c.other)


def test_counts_win_over_a_writes_list() -> None:
    data = {"source_write_count": 2, "writes": [{"kind": "cosmetic"}]}
    assert counts(data) == (True, 2, 0, 0)
    assert counts({"source_write_count": 0, "cosmetic_write_count": 4}) == (True, 0, 4, 0)


def test_an_empty_writes_list_is_known_and_no_writes_at_all_is_unknown() -> None:
    assert counts({"writes": []}) == (True, 0, 0, 0)
    assert counts({}) == (False, 0, 0, 0)
    assert counts({"cosmetic_write_count": 3}) == (False, 0, 0, 0)  # no source count: unknown


def test_unclassified_writes_count_as_source_and_other_kinds_never_do() -> None:
    writes = [{"path": "a.py"}, {"kind": "test"}, {"kind": "doc"}, {"kind": "cosmetic"}]
    assert counts({"writes": writes}) == (True, 1, 1, 2)


def test_the_classifier_labels_writes_with_a_path_and_gets_the_diff() -> None:
    seen: list[tuple[str, str | None]] = []

    def classify(path: str, diff: str | None) -> str:
        seen.append((path, diff))
        return "cosmetic" if path.endswith(".md") else "source"

    writes = [
        {"path": "README.md", "kind": "source"},
        {"path": "x.py", "diff": "+1"},
        {"kind": "test"},
    ]
    assert counts({"writes": writes}, classify) == (True, 1, 1, 1)
    assert seen == [("README.md", None), ("x.py", "+1")]  # no path: the write's own kind


def test_a_classifier_returning_a_non_string_is_rejected_with_the_write_path() -> None:
    with pytest.raises(InvalidInput) as caught:
        counts({"writes": [{"path": "a"}, {"path": "b"}]}, lambda path, diff: None)
    assert caught.value.path == "facts.writes[0].kind"


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        (None, None),
        ([], None),
        ([{"ok": True}], (True, None, None)),
        ([{"ok": True}, {"ok": False, "findings": "a"}, {"findings": "b"}], (False, "a; b", None)),
        ([{"ok": True, "findings": "green noise"}, {"ok": False}], (False, None, None)),
        ([{"ok": True, "command": " "}, {"ok": True, "command": "pytest"}], (True, None, "pytest")),
    ],
)
def test_combining_verifier_results(results: Any, expected: Any) -> None:
    facts = parse_facts({"verify": results})
    reading = combine(facts.verify)
    assert (reading and (reading.ok, reading.findings, reading.command)) == expected


def test_one_result_object_is_a_list_of_one() -> None:
    assert parse_facts({"verify": {"ok": True}}).verify == (VerifyResult(ok=True),)


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"source_write_count": -1}, "facts.source_write_count"),
        ({"source_write_count": 1.5}, "facts.source_write_count"),
        ({"source_write_count": True}, "facts.source_write_count"),
        ({"cosmetic_write_count": "2"}, "facts.cosmetic_write_count"),
        ({"consecutive_failed_after_write": -2}, "facts.consecutive_failed_after_write"),
        ({"verify": "green"}, "facts.verify"),
        ({"verify": 1}, "facts.verify"),
        ({"verify": [{"ok": True}, {"ok": "yes"}]}, "facts.verify[1].ok"),
        ({"verify": {"ok": True, "extra": 1}}, "facts.verify.extra"),
        ({"writes": {"path": "a"}}, "facts.writes"),
        ({"writes": [{"kind": "source"}, {"kind": "source"}, {"kind": 3}]}, "facts.writes[2].kind"),
        ({"writes": ["a.py"]}, "facts.writes[0]"),
        ({"requires_write": "yes"}, "facts.requires_write"),
        ({"verification_failures_converging": 1}, "facts.verification_failures_converging"),
        ({"sourc_write_count": 1}, "facts.sourc_write_count"),
    ],
)
def test_malformed_facts_are_rejected_naming_the_key_path(data: Any, path: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_facts(data)
    assert caught.value.path == path


def test_facts_that_are_not_an_object_are_rejected() -> None:
    with pytest.raises(InvalidInput, match="expected an object"):
        parse_facts([1])


def test_dataclasses_validate_themselves_too() -> None:
    with pytest.raises(InvalidInput):
        CompletionFacts(source_write_count=-1)
    with pytest.raises(InvalidInput):
        CompletionFacts(writes=(WriteFact(), "x"))  # type: ignore[arg-type]
    facts = CompletionFacts(source_write_count=1, verify=(VerifyResult(ok=True),))
    assert parse_facts(facts) is facts
