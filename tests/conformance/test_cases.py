"""Conformance: every case folder holds a claim and its expected outcome, side by side.

``cases/<name>/claim.json`` is the document; ``expected.json`` gives the CLI arguments, the outcome
(``verified``, ``unverified``, ``refuted`` or ``invalid``), the ``unmet`` list, and for rejected
documents the JSON path the error must name. Cases that must be rejected are named ``reject-*``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from donegate.cli import main

CASES = Path(__file__).parent / "cases"
EXIT_BY_OUTCOME = {"verified": 0, "refuted": 1, "unverified": 3, "invalid": 4}


def _cases() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if p.is_dir())


def _expected(case: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((case / "expected.json").read_text())
    return data


def _args(case: Path, expected: dict[str, Any]) -> list[str]:
    return [str(case / a) if a.endswith(".json") else a for a in expected["args"]]


def test_case_names_say_what_they_expect() -> None:
    for case in _cases():
        outcome = _expected(case)["outcome"]
        if outcome == "invalid":
            assert case.name.startswith("reject-"), case.name
        else:
            assert case.name.endswith(f"-{outcome}") or case.name.startswith("spec-"), case.name


@pytest.mark.parametrize("case", _cases(), ids=lambda p: p.name)
def test_case(case: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _expected(case)
    code = main(["verify", str(case / "claim.json"), "--json", *_args(case, expected)])
    out, err = capsys.readouterr()
    assert code == EXIT_BY_OUTCOME[expected["outcome"]], err
    if expected["outcome"] == "invalid":
        assert out == ""
        assert "invalid input" in err
        assert expected.get("error_path", "") in err
        return
    verdict = json.loads(out)["verdict"]
    assert verdict["state"] == expected["outcome"]
    if "unmet" in expected:
        assert verdict["unmet"] == expected["unmet"]
    assert (verdict["reason"] is None) == (expected["outcome"] == "verified")
