"""The bulk path filter decides exactly as the per-path one does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from donegate.workspace.patterns import DEFAULT_IGNORES, PathFilter

COMPONENTS = st.sampled_from(
    [
        "src",
        "tests",
        "build",
        "__pycache__",
        ".git",
        "node_modules",
        "a.py",
        "a.pyc",
        "junit.xml",
        "junit-1.xml",
        "x.junit.xml",
        ".coverage",
        ".coverage.3",
        "docs",
        "README.md",
        "dist",
        "out.log",
        "ü.py",
        ".donegate",
    ]
)
PATHS = st.lists(COMPONENTS, min_size=1, max_size=5).map("/".join)
EXTRA = ["/build/", "docs/*.md", "*.log", "tests/**/fixtures/", "dist/", "a?py"]


@settings(max_examples=300)
@given(st.lists(PATHS, max_size=40), st.booleans())
def test_keep_agrees_with_ignored(paths: list[str], extra: bool) -> None:
    skip = PathFilter((*DEFAULT_IGNORES, *(EXTRA if extra else ())))
    assert skip.keep(paths) == [p for p in paths if not skip.ignored(p)]


def test_keep_without_patterns_keeps_everything() -> None:
    assert PathFilter(()).keep(["a", "b/c"]) == ["a", "b/c"]
