"""The one glob engine: gitignore's reading of a pattern, decided alike by every way in."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from donegate import globs
from donegate.globs import PathFilter, first_match, matches, matches_any
from donegate.workspace.runnerfiles import JUDGE_FILES, RUNNER_FILES

# Path characters, and those a regex would read as its own were they not escaped.
TEXT = st.text(alphabet="ab./\\-+()[]^$|{}\n*?", max_size=12)
PATTERNS = st.sampled_from(
    ["*.py", "tests/", "/build/", "tests/**", "docs/*.md", "a?b", "**/fixtures/", "conftest.py"]
)
PATHS = st.lists(st.sampled_from(["tests", "a", "ab", "a.py", "b.md", "docs", "build"]), min_size=1)


@pytest.mark.parametrize(
    ("path", "pattern", "hit"),
    [
        ("conftest.py", "conftest.py", True),
        ("tests/unit/conftest.py", "conftest.py", True),
        ("aconftest.py", "conftest.py", False),
        ("conftest.py", "/conftest.py", True),
        ("tests/conftest.py", "/conftest.py", False),  # anchored at the root
        ("tests/test_a.py", "tests/", True),  # a directory, and all below it
        ("src/tests/test_a.py", "tests/", True),
        ("tests", "tests/", False),  # the directory itself is not a file below it
        ("src/tests/test_a.py", "/tests/", False),
        ("tests/a/b/test_c.py", "tests/**", True),
        ("src/tests/test_a.py", "tests/**", False),
        ("tests/a\nb.py", "tests/**", True),  # a newline is a character of a file name
        ("tests/a\nb.py", "*.py", True),
        ("a\nb/c.py", "a?b/", True),
        ("docs/a.md", "docs/*.md", True),
        ("docs/x/a.md", "docs/*.md", False),
        ("x/fixtures/y", "**/fixtures/", True),
        ("a[1].py", "a[1].py", True),  # a bracket is itself
        ("a1.py", "a[1].py", False),
    ],
)
def test_a_pattern_reads_as_gitignore_reads_it(path: str, pattern: str, hit: bool) -> None:
    assert matches(path, pattern) is hit
    assert PathFilter([pattern]).ignored(path) is hit


@given(pattern=TEXT, path=TEXT, where=st.sampled_from(["", "x/", "a/b/", "/"]))
def test_a_pattern_without_wildcards_matches_as_its_regex(
    pattern: str, path: str, where: str
) -> None:
    near = (where + pattern, where + pattern.strip("/"), pattern + "/", pattern.upper())
    for candidate in (path, *near):
        by_regex = globs._compile(pattern).fullmatch(candidate) is not None
        assert matches(candidate, pattern) is by_regex, (candidate, pattern)


# The shapes matched without a regex (globs._shape), with names that nearly fit them.
SHAPED = st.sampled_from(
    [
        "*.py",
        "test_*.py",
        "*",
        "a*",
        "*_test.go",
        "tests/**",
        "/tests/**",
        "**/tests/**",
        "__tests__/",
        "a.b/",
        "**/a*/**",
        "tests/*",
        "x?y",
        "a*b*",
    ]
)
SHAPED_PATHS = st.lists(
    st.sampled_from(["tests", "xtests", "tests.py", "test_", "_test.go", "a", ".py", "a.b", "\n"]),
    min_size=1,
    max_size=4,
).map("/".join)


@settings(max_examples=500)
@given(pattern=SHAPED, path=SHAPED_PATHS, tail=st.sampled_from(["", "/", "/x.py"]))
def test_a_pattern_of_a_common_shape_matches_as_its_regex(
    pattern: str, path: str, tail: str
) -> None:
    candidate = path + tail
    by_regex = globs._compile(pattern).fullmatch(candidate) is not None
    assert matches(candidate, pattern) is by_regex, (candidate, pattern)


@settings(max_examples=300)
@given(st.lists(PATTERNS, max_size=4), st.lists(PATHS.map("/".join), max_size=20))
def test_the_bulk_filter_decides_as_the_single_match(patterns: list[str], paths: list[str]) -> None:
    bulk = PathFilter(patterns)
    assert [bulk.matches(p) for p in paths] == [matches_any(p, patterns) for p in paths]
    assert bulk.keep(paths) == [p for p in paths if not matches_any(p, patterns)]


def test_the_runner_and_judge_files_are_found_at_any_depth() -> None:
    assert first_match("tests/unit/conftest.py", [*RUNNER_FILES, *JUDGE_FILES]) == "conftest.py"
    assert first_match("src/billing.py", [*RUNNER_FILES, *JUDGE_FILES]) is None


@pytest.mark.parametrize(
    ("target", "expected"),
    [("/repo/tests/a.py", "tests/a.py"), ("./tests/a.py", "tests/a.py"), ("/etc/x", "/etc/x")],
)
def test_a_target_is_read_relative_to_the_base(target: str, expected: str) -> None:
    assert globs.normalise(target, "/repo/") == expected


@settings(max_examples=300)
@given(st.lists(PATHS.map("/".join), max_size=30))
def test_the_default_test_globs_decide_in_bulk_as_one_by_one(paths: list[str]) -> None:
    # The stop's scan asks this filter about every Python file of the tree.
    from donegate.workspace.classify import DEFAULT_TEST_GLOBS

    tests = PathFilter(DEFAULT_TEST_GLOBS)
    named = [*paths, "tests/unit/test_a.py", "src/a_test.py", "pkg/conftest.py", "src/app.py"]
    assert [tests.matches(p) for p in named] == [matches_any(p, DEFAULT_TEST_GLOBS) for p in named]
