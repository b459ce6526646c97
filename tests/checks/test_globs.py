"""Globs over mutation targets: a pattern without wildcards is matched as its regex would be."""

from __future__ import annotations

from pathlib import PurePosixPath

from hypothesis import given
from hypothesis import strategies as st

from donegate.checks import globs
from donegate.workspace.runnerfiles import JUDGE_FILES, RUNNER_FILES

# Path characters, and those a regex would read as its own were they not escaped.
TEXT = st.text(alphabet="ab./\\-+()[]^$|{}\n", max_size=12)


def by_regex(pattern: str, target: str) -> bool:
    """``globs.matches`` as it was, every pattern compiled."""
    if "/" not in pattern.strip("/"):
        name = PurePosixPath(target).name if target else ""
        stripped = globs._compile(pattern.strip("/")).fullmatch(name)
        return bool(stripped) or bool(globs._compile(pattern).fullmatch(target))
    return bool(globs._compile(pattern.lstrip("/")).fullmatch(target))


@given(pattern=TEXT, target=TEXT, where=st.sampled_from(["", "x/", "a/b/", "/"]))
def test_a_pattern_without_wildcards_matches_as_its_regex(
    pattern: str, target: str, where: str
) -> None:
    near = (where + pattern, where + pattern.strip("/"), pattern + "/", pattern.upper())
    for candidate in (target, *near):
        assert globs.matches(pattern, candidate) == by_regex(pattern, candidate)


def test_the_runner_and_judge_files_match_as_their_regexes() -> None:
    targets = [
        "conftest.py",
        "tests/unit/conftest.py",
        "conftest.pyc",
        "aconftest.py",
        "pytest.ini",
        "src/.pytest.ini",
        "donegate.toml",
        "sub/donegate.toml",
        ".cargo/config",
        "x/.cargo/config",
        ".github/hooks/a.json",
        "venv/lib/_pytest/main.py",
        "lib.pth",
    ]
    for pattern in (*RUNNER_FILES, *JUDGE_FILES):
        for target in targets:
            assert globs.matches(pattern, target) == by_regex(pattern, target), (pattern, target)
    assert globs.first_match([*RUNNER_FILES, *JUDGE_FILES], "tests/unit/conftest.py")
