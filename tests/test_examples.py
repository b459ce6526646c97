"""The examples shipped with the demo verify as their names say."""

import subprocess
import sys
from pathlib import Path

import pytest

from donegate.cli import main
from donegate.ledger import Ledger

EXAMPLES = sorted((Path(__file__).parents[1] / "examples").glob("*.json"))
EXIT = {"verified": 0, "refuted": 1, "unverified": 3}


@pytest.mark.parametrize("claim", EXAMPLES, ids=lambda p: p.stem)
def test_example_verdict_matches_its_name(claim: Path) -> None:
    expected = claim.stem.split("-")[0]
    assert main(["verify", str(claim), "--now", "2026-08-27T18:05:00Z"]) == EXIT[expected]


def test_there_are_examples_of_every_verdict() -> None:
    assert {p.stem.split("-")[0] for p in EXAMPLES} == set(EXIT)


# The framework gates' examples: each runs offline, its agent is sent back once and then verifies.

EXAMPLES_DIR = Path(__file__).parents[1] / "examples"
POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def run_example(name: str, *args: str, state_dir: Path) -> str:
    command = [sys.executable, str(EXAMPLES_DIR / name), *args, "--state-dir", str(state_dir)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("database", [[], ["--postgres", POSTGRES]], ids=["sqlite", "postgres"])
def test_the_support_agent_is_sent_back_once_then_verified(
    database: list[str], tmp_path: Path
) -> None:
    out = run_example("support_agent.py", *database, state_dir=tmp_path)
    assert "try 1: " in out
    assert "sent back (verification_after_write_red); the claim is refuted" in out
    assert 'observed {"address": "9 New Str"}' in out  # what the model's next request carried
    assert "let go: verified (verified_after_write)" in out
    assert "VERIFIED" in out


@pytest.mark.parametrize("framework", ["python", "openai-agents", "langgraph"])
def test_the_deploy_agent_is_sent_back_once_then_verified(framework: str, tmp_path: Path) -> None:
    out = run_example("deploy_agent.py", "--framework", framework, state_dir=tmp_path)
    assert '"body_contains": false' in out
    assert "let go: verified (verified_after_write)" in out
    assert "live version 1.4.2" in out
    with Ledger(tmp_path) as ledger:
        recorded = [(r.host, r.decision, r.verdict) for r in reversed(ledger.recent())]
    assert recorded == [(framework, "veto", "refuted"), (framework, "allow", "verified")]


def test_the_browser_agent_is_sent_back_once_then_verified(tmp_path: Path) -> None:
    """The agent types the name and never presses Save: the rendered page still shows the old
    one, which the x-dom_assertion check reads in the real browser; the second try saves."""
    out = run_example("browser_agent.py", state_dir=tmp_path)
    assert 'observed {"text": "Ada Lovelace"}, expected {"text": "Grace Hopper"}' in out
    assert "let go: verified (verified_after_write)" in out
    assert "stored display name 'Grace Hopper': VERIFIED" in out
    with Ledger(tmp_path) as ledger:
        recorded = [(r.decision, r.verdict) for r in reversed(ledger.recent())]
    assert recorded == [("veto", "refuted"), ("allow", "verified")]
    # Each try's screenshot is kept in the gate's state directory, not the default one.
    assert len(list((tmp_path / "screenshots").glob("*.png"))) == 2
