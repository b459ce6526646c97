"""An honest fix that also bumps the project's version verifies: only the part of pyproject.toml
that configures a runner judges the run. Played through the real hook on a real project."""

from __future__ import annotations

from pathlib import Path

import pytest

from donegate.demo import project
from tests.session.support import last, make_repo, prompt, start, stop

PYPROJECT = """\
[project]
name = "zips"
version = "1.0.0"
description = "ZIP codes"

[tool.pytest.ini_options]
addopts = "-q"
"""


@pytest.mark.parametrize(
    ("edit", "verified"),
    [
        (('version = "1.0.0"', 'version = "1.0.1"'), True),
        (('description = "ZIP codes"', 'description = "US ZIP codes"'), True),
        (('addopts = "-q"', 'addopts = "-q --deselect tests/test_zip.py::test_update"'), False),
        (('name = "zips"', 'name = "zips"\ndependencies = ["attrs"]'), False),
    ],
    ids=["version-bump", "description", "runner-options", "dependencies"],
)
def test_only_the_runner_s_part_of_pyproject_judges_the_run(
    tmp_path: Path, edit: tuple[str, str], verified: bool
) -> None:
    repo, state = make_repo(tmp_path), tmp_path / "state"
    (repo / "pyproject.toml").write_text(PYPROJECT)
    project.git(repo, "add", "-A")
    project.git(repo, "commit", "-qm", "pyproject")
    start(repo, state, "s1")
    prompt(repo, state, "s1")
    (repo / "zipcode.py").write_text(project.FIXED)
    (repo / "pyproject.toml").write_text(PYPROJECT.replace(*edit))
    done = stop(repo, state, "s1")
    assert (last(state).verdict == "verified") is verified
    assert done.blocked is not verified
