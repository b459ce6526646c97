"""A person's changes are those made while no agent turn is open: a turn opens at a person's
prompt and closes only when a stop lets the agent go. What changed in a turn the person
interrupted (no stop comes), or across a compaction or a resume mid-turn, is the agent's.

Played through the real ``donegate hook claude-code`` process on a real project whose tests fail
on the wrong fix below.
"""

from __future__ import annotations

import json
from pathlib import Path

from donegate.demo import project
from donegate.demo.project import payload, run_hook
from donegate.session.layout import Layout
from tests.session.support import last, make_repo, prompt, start, stop

WRONG = "def normalize(z):\n    return z\n"


def test_an_interrupted_turn_s_writes_are_the_agent_s(tmp_path: Path) -> None:
    repo, state = make_repo(tmp_path), tmp_path / "state"
    start(repo, state, "s1")
    prompt(repo, state, "s1")
    (repo / "zipcode.py").write_text(WRONG)  # the agent's edit; then the person presses Esc
    prompt(repo, state, "s1")  # no stop came: the turn is still the agent's
    judged = stop(repo, state, "s1")
    assert judged.blocked
    assert "test_update" in judged.answer["reason"]
    assert last(state).verdict == "refuted"


def test_a_compaction_mid_turn_takes_nothing_as_the_person_s(tmp_path: Path) -> None:
    repo, state = make_repo(tmp_path), tmp_path / "state"
    start(repo, state, "s1")
    prompt(repo, state, "s1")
    (repo / "zipcode.py").write_text(WRONG)
    compacted = payload("SessionStart", "s1", repo, source="compact")
    assert run_hook(compacted, state).exit_code == 0
    prompt(repo, state, "s1")
    assert stop(repo, state, "s1").blocked


def test_the_person_s_edit_between_turns_is_theirs(tmp_path: Path) -> None:
    """The control: the turn closed at a stop that let the agent go; the person edits, prompts,
    and their edit is never the agent's."""
    repo, state = make_repo(tmp_path), tmp_path / "state"
    start(repo, state, "s1")
    prompt(repo, state, "s1")
    (repo / "zipcode.py").write_text(project.FIXED)
    assert not stop(repo, state, "s1").blocked
    (repo / "zipcode.py").write_text(WRONG)  # the person's own (wrong) edit
    prompt(repo, state, "s1")
    assert not stop(repo, state, "s1").blocked  # nothing of the agent's to judge
    assert last(state).verdict == "none"


def test_the_reason_of_a_block_handed_back_as_a_prompt_is_no_person_s_word(
    tmp_path: Path,
) -> None:
    """Gemini CLI (and Copilot CLI) give the agent a block's reason as its next prompt, through
    the prompt hook: it must not become the task a judge is shown as the person's."""
    repo, state = make_repo(tmp_path), tmp_path / "state"
    start(repo, state, "s1")
    prompt(repo, state, "s1")
    (repo / "zipcode.py").write_text(WRONG)
    judged = stop(repo, state, "s1")
    assert judged.blocked
    reason = judged.answer["reason"]
    handed_back = payload("UserPromptSubmit", "s1", repo, prompt=reason)
    assert run_hook(handed_back, state).exit_code == 0
    prompts = Layout(state).session(repo.resolve(), "s1") / "prompts.json"
    assert json.loads(prompts.read_text()) == ["go on"]
