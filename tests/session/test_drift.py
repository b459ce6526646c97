"""A tree that moves after its verified stop, while no turn of the agent runs: a job the agent
left running puts the bug back once the receipt is written. The next hook call names the change
to the person and marks the receipt as no longer describing the tree.

Played through the real ``donegate hook claude-code`` process on a real project.
"""

from __future__ import annotations

from pathlib import Path

from donegate.demo import project
from donegate.ledger import Ledger
from tests.session.support import last, make_repo, plain_pytest_passes, prompt, start, stop


def _verified(tmp_path: Path) -> tuple[Path, Path, int]:
    repo, state = make_repo(tmp_path), tmp_path / "state"
    start(repo, state, "s1")
    prompt(repo, state, "s1")
    (repo / "zipcode.py").write_text(project.FIXED)
    assert not stop(repo, state, "s1").blocked
    receipt = last(state)
    assert receipt.verdict == "verified"
    return repo, state, receipt.id


def test_the_bug_put_back_after_the_verified_stop_is_said_and_marks_the_receipt(
    tmp_path: Path,
) -> None:
    repo, state, receipt_id = _verified(tmp_path)
    (repo / "zipcode.py").write_text(project.BUGGY)  # the agent's leftover job, after the receipt
    assert not plain_pytest_passes(repo)  # the bug is back
    told = prompt(repo, state, "s1").answer.get("systemMessage", "")
    assert "zipcode.py" in told
    assert f"Receipt {receipt_id} no longer describes the tree" in told
    with Ledger(state) as ledger:
        marked = ledger.get(receipt_id)
    assert marked.verdict == "verified"  # what was true when it was written
    assert marked.decision_doc["drifted"]["files"] == ["zipcode.py"]
    # Said once: a later prompt with no new change says nothing more.
    assert "systemMessage" not in prompt(repo, state, "s1").answer


def test_a_new_session_after_the_verified_one_sees_the_drift_too(tmp_path: Path) -> None:
    repo, state, receipt_id = _verified(tmp_path)
    (repo / "zipcode.py").write_text(project.BUGGY)
    told = start(repo, state, "s2").answer.get("systemMessage", "")
    assert "zipcode.py" in told
    with Ledger(state) as ledger:
        assert "drifted" in ledger.get(receipt_id).decision_doc


def test_no_change_after_the_verified_stop_says_nothing(tmp_path: Path) -> None:
    repo, state, receipt_id = _verified(tmp_path)
    assert "systemMessage" not in prompt(repo, state, "s1").answer
    with Ledger(state) as ledger:
        assert "drifted" not in ledger.get(receipt_id).decision_doc
