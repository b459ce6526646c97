"""A judge configured in donegate.toml, through the real hook: green tests, and still sent back."""

from __future__ import annotations

from pathlib import Path

from donegate.demo import project
from donegate.demo.judged import LET_GO, SENT_BACK
from donegate.demo.project import payload, run_hook
from donegate.demo.scripted_judge import openai_reply, serving
from tests.session.support import last, make_repo, start, stop

JUDGED = """
[[requirements]]
id = "any-zip4"
role = "judge"
description = "normalize() handles every ZIP+4 code, not only the values the tests use"

[judge]
provider = "openai"
model = "scripted"
base_url = "{url}"
"""


def test_a_judge_row_sends_a_green_stop_back_then_lets_it_go(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with serving([openai_reply(SENT_BACK), openai_reply(LET_GO)]) as judge:
        repo = make_repo(tmp_path)
        config = repo / "donegate.toml"
        config.write_text(config.read_text() + JUDGED.format(url=judge.url))
        project.git(repo, "commit", "-qam", "a judge")
        start(repo, state, "s1")
        asked = payload("UserPromptSubmit", "s1", repo, prompt="make ZIP+4 codes work")
        assert run_hook(asked, state).exit_code == 0
        (repo / "zipcode.py").write_text(project.FIXED)
        first = stop(repo, state, "s1")
        assert first.blocked  # the tests are green: only the judge sent it back
        assert "Fix the function" in first.answer["reason"]
        assert last(state).verdict == "verified"
        seen = judge.requests[0].body
        assert "make ZIP+4 codes work" in str(seen)  # the task, from the journal
        assert "zipcode.py" in str(seen)  # the diff of the session's writes
        second = stop(repo, state, "s1", stop_hook_active=True)
        assert not second.blocked
        assert (
            last(state).decision_doc["gate"]["judge"]["invoked"]["verify_completion_judge"] is True
        )
