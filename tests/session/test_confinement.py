"""Confinement is a fact of every stop: each receipt says whether a sandbox kept the agent's
commands out of donegate's state, a verified stop of an unconfined agent says so, and
``[gate] require_confined = true`` makes such a stop not verified.

The stops run through the real hook process (which knows no sandbox in these repositories, so
the agent is unconfined) and through ``on_stop`` with the confinement the host's settings name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from donegate.demo import project
from donegate.demo.project import FIXED, payload, run_hook
from donegate.hooks import claude_code
from donegate.ledger import Ledger
from donegate.session import on_start, on_stop

SESSION = "confined-1"


def repo_with(tmp_path: Path, gate: str = "") -> Path:
    repo = project.create(tmp_path / "repo")
    if gate:
        config = repo / "donegate.toml"
        config.write_text(config.read_text().replace("[gate]\n", f"[gate]\n{gate}\n"))
        project.git(repo, "commit", "-qam", "require confinement")
    return repo


def last(state: Path) -> Any:
    with Ledger(state) as ledger:
        return ledger.recent(1)[0]


def test_a_verified_stop_of_an_unconfined_agent_says_so(tmp_path: Path) -> None:
    repo, state = repo_with(tmp_path), tmp_path / "state"
    run_hook(payload("SessionStart", SESSION, repo, source="startup"), state)
    (repo / "zipcode.py").write_text(FIXED)
    done = run_hook(payload("Stop", SESSION, repo, last_assistant_message="Fixed."), state)
    assert done.exit_code == 0
    assert not done.blocked
    assert "unconfined" in done.answer["systemMessage"]
    receipt = last(state)
    assert receipt.verdict == "verified"
    assert receipt.decision_doc["confinement"] == {"confined": False, "by": None}


def test_require_confined_makes_an_unconfined_stop_not_verified(tmp_path: Path) -> None:
    """The same right fix: green tests, and still not verified, since the agent could have
    reached donegate's state. It is let go, not sent back: it cannot confine itself."""
    repo, state = repo_with(tmp_path, "require_confined = true"), tmp_path / "state"
    run_hook(payload("SessionStart", SESSION, repo, source="startup"), state)
    (repo / "zipcode.py").write_text(FIXED)
    done = run_hook(payload("Stop", SESSION, repo, last_assistant_message="Fixed."), state)
    assert done.exit_code == 0
    assert not done.blocked
    assert "NOT verified" in done.answer["systemMessage"]
    assert "require_confined" in done.answer["systemMessage"]
    receipt = last(state)
    assert (receipt.verdict, receipt.reason) == ("unverified", "unconfined")


def test_a_confined_agent_s_stop_is_verified_and_names_its_sandbox(tmp_path: Path) -> None:
    repo, state = repo_with(tmp_path, "require_confined = true"), tmp_path / "state"
    base = payload("SessionStart", SESSION, repo, source="startup")
    on_start(claude_code.parse(base), state)
    (repo / "zipcode.py").write_text(FIXED)
    stop = claude_code.parse(payload("Stop", SESSION, repo, last_assistant_message="Fixed."))
    result = on_stop(stop._replace(confinement="claude-code sandbox"), state)
    assert result.verdict == "verified"
    assert result.answer.notice is None
    receipt = last(state)
    assert receipt.decision_doc["confinement"] == {"confined": True, "by": "claude-code sandbox"}


def test_require_confined_is_a_flag(tmp_path: Path) -> None:
    repo, state = repo_with(tmp_path, 'require_confined = "yes"'), tmp_path / "state"
    run_hook(payload("SessionStart", SESSION, repo, source="startup"), state)
    (repo / "zipcode.py").write_text(FIXED)
    done = run_hook(payload("Stop", SESSION, repo, last_assistant_message="Fixed."), state)
    assert done.exit_code == 0
    assert "gate.require_confined: must be true or false" in done.answer["systemMessage"]
    assert last(state).verdict != "verified"
