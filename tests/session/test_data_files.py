"""A data file the code reads is not documentation: written after a green run, it reopens it.

Played through the real ``donegate hook claude-code`` process on a real project whose
``normalize`` reads its separator from a text file.
"""

from __future__ import annotations

from pathlib import Path

from donegate.demo import project
from tests.session.support import last, make_repo, prompt, start, stop

READS_DATA = project.FIXED.replace(
    '    return zip_code.strip().split("-")[0]\n',
    "    from pathlib import Path\n\n"
    '    separator = (Path(__file__).parent / "separator.txt").read_text().strip()\n'
    "    return zip_code.strip().split(separator)[0]\n",
)


def test_a_data_file_written_after_a_green_run_is_judged(tmp_path: Path) -> None:
    repo, state = make_repo(tmp_path), tmp_path / "state"
    start(repo, state, "s1")
    prompt(repo, state, "s1")
    (repo / "zipcode.py").write_text(READS_DATA)
    (repo / "separator.txt").write_text("-\n")
    assert not stop(repo, state, "s1").blocked
    assert last(state).verdict == "verified"
    (repo / "separator.txt").write_text("+\n")  # the code's behaviour changes with its data
    judged = stop(repo, state, "s1")
    assert judged.blocked  # it was taken as documentation, and the green run stood
    assert "test_update" in judged.answer["reason"]
