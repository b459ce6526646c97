"""Classifying writes: cosmetic edits by AST and by tokens, and the kinds decided by path."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from donegate.workspace import Rules, Write, WriteKind, flags
from donegate.workspace.classify import classify
from donegate.workspace.patterns import PathFilter, matches

NOW = datetime(2026, 1, 1, tzinfo=UTC)
APP = '''"""The app."""


def add(a, b):
    """Add two numbers."""
    return a + b
'''


def _modified(path: str) -> Write:
    return Write(path, "modified", NOW, "a" * 40, "b" * 40)


def _kind(path: str, old: str | None, new: str | None) -> WriteKind:
    return classify(_modified(path), old, new)


@pytest.mark.parametrize(
    "new",
    [
        APP.replace("return a + b", "return a + b  # the sum"),
        APP.replace("add(a, b)", "add(a,b)").replace("\n\n\n", "\n\n\n\n"),
        "# A header comment.\n" + APP,
    ],
    ids=["comment", "whitespace", "header"],
)
def test_python_cosmetic_edits(new: str) -> None:
    assert _kind("src/app.py", APP, new) == "cosmetic"


@pytest.mark.parametrize(
    "new",
    [
        APP.replace('"""Add two numbers."""', '"""Return the sum of two numbers."""'),
        APP.replace('"""The app."""', '"""The app, documented better.\n\nMore text.\n"""'),
        APP.replace('    """Add two numbers."""\n', ""),
    ],
    ids=["docstring", "module-docstring", "docstring-removed"],
)
def test_a_docstring_edit_is_code(new: str) -> None:
    # The attack: code that reads __doc__ changes behaviour with a "cosmetic" edit.
    namespace: dict[str, object] = {}
    exec(compile(new, "app.py", "exec"), namespace)
    before: dict[str, object] = {}
    exec(compile(APP, "app.py", "exec"), before)
    add_doc = getattr(namespace["add"], "__doc__", None)
    module_doc = namespace.get("__doc__")
    assert (add_doc, module_doc) != (getattr(before["add"], "__doc__", None), before["__doc__"])
    assert _kind("src/app.py", APP, new) == "source"


@pytest.mark.parametrize(
    "new",
    [
        APP.replace("a + b", "a - b"),
        APP.replace("def add(a, b)", "def add(a, b=0)"),
        APP + "\nVALUE = 1\n",
        APP.replace("return a + b", "return a + b\n    print('x'"),
    ],
    ids=["operator", "default", "new-statement", "syntax-error"],
)
def test_python_real_changes_are_source(new: str) -> None:
    assert _kind("src/app.py", APP, new) == "source"


# Sources that differ by little: a constant's type or sign, an operator, a field, a position.
NEAR = [
    "x = 1\n",
    "x = 1.0\n",
    "x = True\n",
    "x = -0.0\n",
    "x = 0.0\n",
    "x  =  1  # one\n",
    "x = (1)\n",
    "x = 'a'\n",
    "x = b'a'\n",
    "x = u'a'\n",
    "x = [1, 2]\n",
    "x = [2, 1]\n",
    "x = 1\ny = 2\n",
    "\n\nx = 1\n",
    "def f(a, b=1): return a\n",
    "def f(a=1, b=1): return a\n",
    "async def f(a, b=1): return a\n",
    "x = a.b\n",
    "a.b = x\n",
]


@pytest.mark.parametrize("old", NEAR)
def test_python_sources_are_the_same_exactly_when_their_ast_dumps_are(old: str) -> None:
    import ast

    from donegate.workspace.cosmetic import python_equivalent

    for new in NEAR:
        same = ast.dump(ast.parse(old)) == ast.dump(ast.parse(new))
        assert python_equivalent(old, new) is same, (old, new)


def test_a_doctest_in_a_docstring_is_code() -> None:
    old = 'def f():\n    """>>> f()\n    1\n    """\n    return 1\n'
    new = old.replace("    1\n", "    2\n")
    assert _kind("src/f.py", old, new) == "source"


JS = "function add(a, b) {\n  return a + b;\n}\n"


def test_javascript_comment_only_edit_is_cosmetic() -> None:
    new = "// Adds numbers.\nfunction add(a, b) {\n  /* sum */ return a + b;   \n}\n"
    assert _kind("web/add.js", JS, new) == "cosmetic"


def test_javascript_real_change_is_source() -> None:
    assert _kind("web/add.js", JS, JS.replace("a + b", "a * b")) == "source"


def test_c_preprocessor_lines_are_code() -> None:
    old = "#include <stdio.h>\nint main(void) { return 0; }\n"
    new = "#include <stdlib.h>\nint main(void) { return 0; }\n"
    assert _kind("main.c", old, new) == "source"
    assert _kind("main.c", old, old.replace("{", "{ /* entry */")) == "cosmetic"


def test_unknown_language_is_source() -> None:
    assert _kind("data/blob.zzz-unknown", "a", "a ") == "source"


def test_unknown_old_text_is_source() -> None:
    assert _kind("src/app.py", None, APP) == "source"


def test_added_and_deleted_code_is_source() -> None:
    assert classify(Write("src/x.py", "added", NOW, None, "b" * 40), None, "# only\n") == "source"
    assert classify(Write("src/x.py", "deleted", NOW, "a" * 40, None), "x = 1\n", None) == "source"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("tests/test_app.py", "test"),
        ("pkg/tests/helpers.py", "test"),
        ("test_thing.py", "test"),
        ("src/thing_test.py", "test"),
        ("conftest.py", "test"),
        ("README.md", "doc"),
        ("docs/guide.rst", "doc"),
        ("NOTES.txt", "source"),  # plain text: a program may read it as data
        ("LICENSE", "doc"),
        ("pyproject.toml", "config"),
        ("setup.cfg", "config"),
        (".github/workflows/ci.yml", "config"),
        ("Makefile", "config"),
        ("requirements-dev.txt", "config"),
        ("src/app.py", "source"),
    ],
)
def test_kind_by_path(path: str, kind: WriteKind) -> None:
    assert classify(Write(path, "added", NOW, None, "b" * 40), None, None) == kind


def test_test_globs_are_configurable() -> None:
    rules = Rules(test_globs=("spec/**",))
    write = Write("spec/app_spec.rb", "added", NOW, None, "b" * 40)
    assert classify(write, None, None, rules) == "test"
    assert classify(Write("tests/x.py", "added", NOW, None, "b"), None, None, rules) == "source"


def test_a_cosmetic_edit_to_a_test_is_still_a_test_write() -> None:
    old = "def test_a():\n    assert 1\n"
    assert _kind("tests/test_a.py", old, "# note\n" + old) == "test"


def test_a_rename_into_tests_is_a_test_write() -> None:
    write = Write("tests/test_x.py", "renamed", NOW, "a", "a", old_path="src/x.py")
    assert classify(write, None, None) == "test"


@pytest.mark.parametrize("path", ["conftest.py", "tests/conftest.py", "sitecustomize.py", "x.pth"])
def test_files_that_steer_tests_are_flagged(path: str) -> None:
    assert flags(Write(path, "added", NOW, None, "b")) == ("test-hook",)


def test_ordinary_files_are_not_flagged() -> None:
    assert flags(Write("src/app.py", "added", NOW, None, "b")) == ()


@pytest.mark.parametrize(
    ("path", "pattern", "hit"),
    [
        ("a/b/__pycache__/x.pyc", "__pycache__/", True),
        ("__pycache__x", "__pycache__/", False),
        ("tests/a/b.py", "tests/**", True),
        ("src/tests/b.py", "tests/**", False),
        ("src/tests/b.py", "**/tests/**", True),
        ("docs/a.md", "docs/*.md", True),
        ("docs/x/a.md", "docs/*.md", False),
        ("build/x", "/build/", True),
        ("src/build/x", "/build/", False),
    ],
)
def test_patterns(path: str, pattern: str, hit: bool) -> None:
    assert matches(path, pattern) is hit


def test_path_filter_prunes_directories() -> None:
    skip = PathFilter(["node_modules/", "*.pyc"])
    assert skip.ignored_dir("web/node_modules")
    assert not skip.ignored_dir("src")
