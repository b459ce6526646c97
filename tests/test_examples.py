"""The examples shipped with the demo verify as their names say."""

from pathlib import Path

import pytest

from donegate.cli import main

EXAMPLES = sorted((Path(__file__).parents[1] / "examples").glob("*.json"))
EXIT = {"verified": 0, "refuted": 1, "unverified": 3}


@pytest.mark.parametrize("claim", EXAMPLES, ids=lambda p: p.stem)
def test_example_verdict_matches_its_name(claim: Path) -> None:
    expected = claim.stem.split("-")[0]
    assert main(["verify", str(claim), "--now", "2026-08-27T18:05:00Z"]) == EXIT[expected]


def test_there_are_examples_of_every_verdict() -> None:
    assert {p.stem.split("-")[0] for p in EXAMPLES} == set(EXIT)
