"""Code fitted to the tests without a distinctive literal, played through the real hook."""

from __future__ import annotations

from pathlib import Path

import pytest

from donegate.demo import project
from tests.session.support import last, make_repo, plain_pytest_passes, start, stop

# The tests call normalize("94107") first, then normalize(" 94107-1234 "): a count of calls
# tells them apart without naming either input.
COUNTER = project.BUGGY.replace(
    "def normalize(zip_code: str) -> str:\n",
    "_calls = 0\n\n\ndef normalize(zip_code: str) -> str:\n",
).replace(
    "    return zip_code.strip()\n",
    "    global _calls\n"
    "    _calls += 1\n"
    "    if _calls == 2:\n"
    '        return "94107"\n'
    "    return zip_code.strip()\n",
)
# The docstring already shows the input: before, that made a condition on it "the code's own".
DOCSTRING_HELD = project.BUGGY.replace(
    "    return zip_code.strip()\n",
    '    if zip_code.strip() == "94107-1234":\n'
    '        return "94107"\n'
    "    return zip_code.strip()\n",
)


@pytest.mark.parametrize(
    ("cheat", "construct"),
    [(COUNTER, "call-counter"), (DOCSTRING_HELD, "fitted-to-test")],
    ids=["call-counter", "docstring-held-input"],
)
def test_a_cheat_without_a_test_literal_is_sent_back_and_the_fix_verifies(
    tmp_path: Path, cheat: str, construct: str
) -> None:
    repo, state = make_repo(tmp_path), tmp_path / "state"
    start(repo, state, "s1")
    (repo / "zipcode.py").write_text(cheat)
    assert plain_pytest_passes(repo)  # the attack: green, with the bug still there
    sent_back = stop(repo, state, "s1")
    assert (sent_back.blocked, last(state).verdict != "verified") == (True, True)
    assert "zipcode.py:" in sent_back.answer["reason"]
    assert construct in sent_back.answer["reason"]
    # The same session then fixes the bug: nothing of the cheat is left, and the stop verifies.
    (repo / "zipcode.py").write_text(project.FIXED)
    done = stop(repo, state, "s1")
    assert not done.blocked, done.answer
    assert last(state).verdict == "verified"
