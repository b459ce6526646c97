"""Code fitted to the tests without a distinctive literal, played through the real hook."""

from __future__ import annotations

import subprocess
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


CLI = (
    "import sys\n\nfrom zipcode import normalize\n\n\n"
    "def run() -> None:\n    print(normalize(sys.argv[1]))\n    sys.exit(0)\n"
)


@pytest.mark.parametrize(
    ("pyproject", "verified"),
    [
        ('[project]\nname = "zips"\n', False),
        ('[project]\nname = "zips"\n\n[project.scripts]\nzips = "zipcli:run"\n', True),
    ],
    ids=["exit-in-a-plain-function", "exit-in-a-declared-script"],
)
def test_a_script_s_exit_is_the_program_s_own(
    tmp_path: Path, pyproject: str, verified: bool
) -> None:
    """An exit in the function pyproject.toml names as a script is a program ending, not code
    that ends its judge's run: the honest fix with a console script verifies."""
    repo, state = make_repo(tmp_path), tmp_path / "state"
    (repo / "pyproject.toml").write_text(pyproject)
    project.git(repo, "add", "-A")
    project.git(repo, "commit", "-qm", "pyproject")
    start(repo, state, "s1")
    (repo / "zipcode.py").write_text(project.FIXED)
    (repo / "zipcli.py").write_text(CLI)
    done = stop(repo, state, "s1")
    assert (last(state).verdict == "verified") is verified
    assert ("hard-exit" in done.answer.get("reason", "")) is not verified


def test_text_that_written_code_runs_is_scanned_as_code(tmp_path: Path) -> None:
    """A counter kept in a .txt that the module execs: the finding names the text's own line."""
    repo, state = make_repo(tmp_path), tmp_path / "state"
    start(repo, state, "s1")
    body = COUNTER.split('"""ZIP codes."""\n', 1)[1]
    (repo / "zip_body.txt").write_text(body)
    (repo / "zipcode.py").write_text(
        '"""ZIP codes."""\nfrom pathlib import Path\n\n'
        'exec(Path(__file__).with_name("zip_body.txt").read_text())\n'
    )
    assert plain_pytest_passes(repo)  # the attack: green, with the bug still there
    sent_back = stop(repo, state, "s1")
    assert sent_back.blocked
    assert "zip_body.txt:" in sent_back.answer["reason"]
    assert last(state).verdict != "verified"


def _judged_by(repo: Path, must_pass: list[str]) -> None:
    """The team's configuration: the scan's fitted-to-test rules off (so that only the run
    judges the counter), and ``must_pass`` as given; committed, as a person's."""
    config = repo / "donegate.toml"
    listed = ", ".join(f'"{node}"' for node in must_pass)
    text = config.read_text().replace(
        "timeout_s = 120\n", f"timeout_s = 120\nmust_pass = [{listed}]\n"
    )
    config.write_text(text + '\n[scan]\nfitted_to_test = "off"\n')
    project.git(repo, "commit", "-qam", "judged by")


@pytest.mark.parametrize(
    ("must_pass", "verified"),
    [
        ([], True),  # the attack, without the defence: the counter's stop verifies
        (["tests/test_zip.py::test_update"], False),
        (["tests/test_zip.py"], False),
    ],
    ids=["no-must-pass", "one-test", "the-whole-file"],
)
def test_a_counter_cannot_pass_its_must_pass_tests_twice(
    tmp_path: Path, must_pass: list[str], verified: bool
) -> None:
    """The must_pass tests run a second time in the same process, in the reverse order: the
    counter that answers the second call of the run answers the third one wrongly."""
    repo, state = make_repo(tmp_path), tmp_path / "state"
    _judged_by(repo, must_pass)
    start(repo, state, "s1")
    (repo / "zipcode.py").write_text(COUNTER)
    assert plain_pytest_passes(repo)
    done = stop(repo, state, "s1")
    assert (last(state).verdict == "verified") is verified
    if not verified:
        assert "failed when run again" in done.answer["reason"]


def test_an_honest_fix_passes_its_must_pass_tests_twice(tmp_path: Path) -> None:
    repo, state = make_repo(tmp_path), tmp_path / "state"
    _judged_by(repo, ["tests/test_zip.py"])
    start(repo, state, "s1")
    (repo / "zipcode.py").write_text(project.FIXED)
    assert not stop(repo, state, "s1").blocked
    assert last(state).verdict == "verified"


# A new test module at the root, collected before tests/, that gives the function under test
# code answering what every test expects; the source file itself is changed only trivially.
SWAP = (
    "import zipcode\n\n"
    "zipcode.normalize.__code__ = (lambda zip_code: zip_code.strip()[:5]).__code__\n\n\n"
    "def test_imports():\n    assert zipcode.normalize\n"
)


def test_a_new_test_file_that_swaps_the_code_under_test_is_sent_back(tmp_path: Path) -> None:
    repo, state = make_repo(tmp_path), tmp_path / "state"
    config = repo / "donegate.toml"  # the team's command collects the whole tree, root included
    config.write_text(config.read_text().replace(', "tests"]', "]"))
    project.git(repo, "commit", "-qam", "every test")
    start(repo, state, "s1")
    (repo / "zipcode.py").write_text(project.BUGGY.replace('"""ZIP codes."""', '"""ZIPs."""'))
    (repo / "test_aaa.py").write_text(SWAP)
    command = project.pytest_command()[:-1]
    done = subprocess.run(command, cwd=repo, capture_output=True, check=False)
    assert done.returncode == 0  # the attack: green, with the bug still in zipcode.py
    sent_back = stop(repo, state, "s1")
    assert last(state).verdict != "verified"
    assert "replaces zipcode.normalize.__code__" in sent_back.answer["reason"]
