"""Files that judge the agent, changed while no turn of it ran, are named to the person who is
credited with them: at the next prompt or session start, in the host's own UI.

Played through the real hook process on the demo project: a job the agent left running weakens
the test once a stop has let the agent go; the person's next prompt takes the change as theirs
(donegate cannot tell the two hands apart) and the person is told which judging file changed.
"""

from __future__ import annotations

from pathlib import Path

from donegate.demo import project
from tests.session.support import (
    WEAKENED_TESTS,
    last,
    make_repo,
    prompt,
    start,
    stop,
)

SESSION = "handover-1"


def told(run: object) -> str:
    answer = getattr(run, "answer", None) or {}
    return str(answer.get("systemMessage", "")) + str(getattr(run, "stderr", ""))


def test_a_test_weakened_between_turns_is_named_at_the_next_prompt(tmp_path: Path) -> None:
    repo, state = make_repo(tmp_path), tmp_path / "state"
    start(repo, state, SESSION)
    prompt(repo, state, SESSION)
    (repo / "zipcode.py").write_text(project.FIXED)
    stop(repo, state, SESSION)
    assert last(state).verdict == "verified"
    # The agent's left-over job, after the stop let it go.
    (repo / "tests" / "test_zip.py").write_text(WEAKENED_TESTS)
    said = told(prompt(repo, state, SESSION))
    assert "tests/test_zip.py changed while no turn of the agent was running" in said
    assert "count as yours" in said


def test_a_person_s_test_edit_between_sessions_is_named_and_the_fix_verifies(
    tmp_path: Path,
) -> None:
    """The honest control: the person tightens the test, starts a session, and the agent's
    right fix verifies against it; the person was told once which file counts as theirs."""
    repo, state = make_repo(tmp_path), tmp_path / "state"
    start(repo, state, "before")
    tests = repo / "tests" / "test_zip.py"
    tighter = '\n\ndef test_plain():\n    assert normalize("1") == "1"\n'
    tests.write_text(tests.read_text() + tighter)
    said = told(start(repo, state, SESSION))
    assert "tests/test_zip.py changed while no turn of the agent was running" in said
    assert "tests/test_zip.py" not in told(prompt(repo, state, SESSION))  # told once
    (repo / "zipcode.py").write_text(project.FIXED)
    stop(repo, state, SESSION)
    assert last(state).verdict == "verified"


def test_a_source_change_between_turns_is_not_named(tmp_path: Path) -> None:
    """A source change is judged at the next stop whoever made it: nothing to tell."""
    repo, state = make_repo(tmp_path), tmp_path / "state"
    start(repo, state, SESSION)
    (repo / "README.md").write_text("notes\n")
    (repo / "zipcode.py").write_text(project.FIXED)
    assert "count as yours" not in told(prompt(repo, state, SESSION))
