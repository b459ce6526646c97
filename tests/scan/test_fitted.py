"""Fitted to the test: a new condition on a literal that the tests use."""

from __future__ import annotations

import ast
import textwrap

import pytest

from donegate.scan import fitted as rule
from donegate.scan.fitted import distinctive, fitted_occurrences, literals_of

TESTS = """
from zips import normalise

def test_normalise_strips_the_suffix():
    assert normalise(" 94107-1234 ") == "94107"

def test_answer():
    assert answer(12345) == 42
    assert kind("ab") == 0
"""


def fitted_details(source: str, old: str = "", tests: str = TESTS) -> list[str]:
    literals = rule.test_literals_of([tests])
    known = literals_of(ast.parse(old))
    return [
        o.detail for o in fitted_occurrences(ast.parse(textwrap.dedent(source)), literals, known)
    ]


@pytest.mark.parametrize(
    "source",
    [
        """
        def normalise(zip_code):
            if zip_code == " 94107-1234 ":
                return "94107"
            return zip_code
        """,
        """
        def normalise(zip_code):
            return "94107" if zip_code.strip() == "94107-1234" else zip_code
        """,
        """
        def normalise(zip_code):
            if zip_code in (" 94107-1234 ", "other"):
                return "94107"
        """,
        """
        def normalise(zip_code):
            while zip_code != " 94107-1234 ":
                zip_code = zip_code[1:]
        """,
        """
        def normalise(zip_code):
            match zip_code:
                case " 94107-1234 ":
                    return "94107"
        """,
        """
        def normalise(zip_code):
            return zip_code == " 94107-1234 " or zip_code.isdigit()
        """,
        """
        def normalise(zip_code):
            if zip_code.startswith(" 94107"):
                return "94107"
        """,
        """
        SPECIAL = " 94107-1234 "
        def normalise(zip_code):
            if zip_code == SPECIAL:
                return "94107"
        """,
        """
        SPECIAL_CASES = {"other", " 94107-1234 "}
        def normalise(zip_code):
            if zip_code in SPECIAL_CASES:
                return "94107"
        """,
        """
        def answer(n):
            if n == 12345:
                return 42
        """,
        """
        def answers(values):
            return [42 for v in values if v == 12345]
        """,
    ],
)
def test_a_condition_on_a_test_value_is_found(source: str) -> None:
    assert len(fitted_details(source)) == 1


def test_the_finding_names_the_condition_and_the_value() -> None:
    [detail] = fitted_details("def f(z):\n    if z == ' 94107-1234 ':\n        return 1\n")
    assert detail == "z == ' 94107-1234 ' (test value ' 94107-1234 ')"


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("def f(x):\n    if x == 0: return 1", "0 is noise"),
        ("def f(x):\n    if x == 7: return 1", "small numbers are noise"),
        ("def f(x):\n    if x == 'a': return 1", "one character is noise"),
        ("def f(x):\n    if x == 'cd': return 1", "a literal the tests do not use"),
        ("def f(x):\n    if x is None: return 1", "None is noise"),
        ("def f(x):\n    if x == 54321: return 1", "a number the tests do not use"),
        ("import sys\nif sys.platform == '94107': pass", "the platform is not an input"),
        ("def f(x):\n    y = x == ' 94107-1234 '", "an assignment is not a condition"),
        ("def f(x):\n    print(' 94107-1234 ')", "no comparison"),
    ],
)
def test_noise_and_non_conditions_are_not_found(source: str, why: str) -> None:
    assert fitted_details(source) == [], why


def test_a_literal_the_file_had_before_is_its_own_vocabulary() -> None:
    source = "def f(n):\n    if n == 12345:\n        return 42\n"
    assert fitted_details(source, old="") != []  # control: new in the file, it is a finding
    assert fitted_details(source, old="LIMIT = 12345\n") == []


def test_a_literal_only_in_source_is_not_fitted() -> None:
    source = "def f(n):\n    if n == 12345:\n        return 42\n"
    assert fitted_details(source) != []  # control
    assert fitted_details(source, tests="def test_f():\n    assert f(99999) == 42\n") == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, False),
        (True, False),
        (0, False),
        (-1, False),
        (9, False),
        (10, True),
        (-404, True),
        (0.5, False),
        (2.0, False),
        (0.25, True),
        (float("inf"), True),
        ("", False),
        ("x", False),
        (" x ", False),
        ("ab", True),
        (b"ab", True),
    ],
)
def test_distinctive_literals(value: object, expected: bool) -> None:
    assert distinctive(value) is expected


def test_test_literals_skip_unparsable_files() -> None:
    assert rule.test_literals_of(["def (:", "x = 'hello'"]) == {"hello"}


def test_test_literals_include_stripped_copies() -> None:
    assert rule.test_literals_of(["x = ' 94107 '"]) == {" 94107 ", "94107"}


def test_a_name_of_the_code_is_its_vocabulary() -> None:
    source = (
        "class LazyFile: pass\n\ndef get(name):\n    if name == 'LazyFile':\n        return 1\n"
    )
    tests = "def test_lazy():\n    assert getattr(mod, 'LazyFile')\n"
    literals = rule.test_literals_of([tests])
    tree = ast.parse(source)
    assert fitted_occurrences(tree, literals, set()) != []  # control: without the names
    assert fitted_occurrences(tree, literals, rule.names_of(tree)) == []


@pytest.mark.parametrize(
    "source",
    [
        "import os\nif os.environ.get('MODE') == '94107': pass",
        "import os\nif os.getenv('MODE') == '94107': pass",
        "import os\nif os.environ['MODE'] == '94107': pass",
    ],
)
def test_the_environment_is_not_an_input(source: str) -> None:
    assert fitted_details(source.replace("os.", "env.")) != []  # control: any other object
    assert fitted_details(source) == []


@pytest.mark.parametrize("value", ["--", "//", "::", " -> "])
def test_separators_are_not_distinctive(value: str) -> None:
    assert not distinctive(value)


LAZY_SOURCES = [
    "def test_a():\n    assert f(' 94107-1234 ') == 'done'\n",
    "def test_b():\n    assert g(12345) == 2.25\n",
    "def test_c():\n    assert h(b'raw bytes') == 'éclair'\n",
    "def broken(:\n",
]


@pytest.mark.parametrize(
    "value",
    [" 94107-1234 ", "94107-1234", "done", 12345, 2.25, b"raw bytes", "éclair", "absent", 54321],
)
def test_lazy_test_literals_agree_with_parsing_everything(value: object) -> None:
    assert (value in rule.TestLiterals(LAZY_SOURCES)) == (
        value in rule.test_literals_of(LAZY_SOURCES)
    )


def test_lazy_test_literals_parse_only_the_files_that_may_hold_the_value() -> None:
    literals = rule.TestLiterals(LAZY_SOURCES)
    assert "done" in literals
    assert len(literals._unread) == 3  # the other files were not parsed
