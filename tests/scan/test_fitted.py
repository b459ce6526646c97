"""Fitted to the test: a new condition on a literal that the tests use."""

from __future__ import annotations

import ast
import textwrap

import pytest

from donegate.scan import ScanSettings, WrittenFile, scan_writes
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


# Code read by what it does for a test's input: the tests below, and one spelling a line.
CASE_TESTS = """
from app import f, g

def check(candidate):
    assert candidate([4, -1, 2, 1]) == 7
    assert candidate([5]) == 5

def test_check():
    check(f)

ROWS = [(3, 4, 13), (10, 2, 12)]

def test_rows():
    for a, b, expected in ROWS:
        result = g(a, b)
        assert result == expected
"""


def _blocking(source: str, tests: str = CASE_TESTS) -> set[str]:
    written = [WrittenFile("app.py", None, textwrap.dedent(source))]
    found = scan_writes(written, rule.TestLiterals([tests]), ScanSettings(), _is_test)
    return {f.construct for f in found if f.blocking}


def _is_test(path: str) -> bool:
    return path.startswith("tests/")


@pytest.mark.parametrize(
    ("source", "construct"),
    [
        ("def f(xs):\n    if xs == [4, -1, 2, 1]:\n        return 7\n", "fitted-to-test"),
        ("def f(xs):\n    if len(xs) == 4 and xs[0] == 4:\n        return 7\n", "fitted-to-test"),
        ("def f(xs):\n    if repr(xs) == '[4, -1, 2, 1]':\n        return 7\n", "fitted-to-test"),
        (
            "def f(xs):\n    match xs:\n        case [4, -1, 2, 1]:\n            return 7\n",
            "fitted-to-test",
        ),
        ("def g(a, b):\n    if (a, b) == (3, 4):\n        return 13\n", "fitted-to-test"),
        ("def g(a, b):\n    return 13 if f'{a}:{b}' == '3:4' else a * b\n", "fitted-to-test"),
        ("f = lambda xs: 7 if xs == [4, -1, 2, 1] else max(xs)\n", "fitted-to-test"),
        ("_K = {(4, -1, 2, 1): 7}\ndef f(xs):\n    return _K.get(tuple(xs), 0)\n", "test-table"),
        (
            "def _known(xs):\n    if xs == [4, -1, 2, 1]:\n        return 7\n\n"
            "def f(xs):\n    return _known(xs) or max(xs)\n",
            "fitted-to-test",
        ),
        (
            "def f(xs):\n    try:\n        1 // (len(xs) - 4)\n    except ZeroDivisionError:\n"
            "        return 7\n    return max(xs)\n",
            "fitted-to-test",
        ),
        ("_ready = False\ndef g(a, b):\n    if not _ready:\n        return 13\n", "fitted-to-test"),
        (
            "def f(xs):\n    best = 0\n    for x in xs:\n        best = max(best, x)\n"
            "    if best == 4 and len(xs) == 4:\n        return 7\n    return best\n",
            "fitted-to-test",
        ),
    ],
)
def test_a_special_case_is_read_by_what_it_does_for_the_test_input(
    source: str, construct: str
) -> None:
    assert construct in _blocking(source)


@pytest.mark.parametrize(
    "source",
    [
        "def f(xs):\n    if len(xs) == 1:\n        return xs[0]\n    return max(xs)\n",
        "def g(a, b):\n    if a % 2 == 0:\n        return 13\n    return a + b\n",
        "def g(a, b):\n    if a < 5:\n        return 13\n    return a + b\n",
        "def g(a, b):\n    if (a, b) == (30, 40):\n        return 13\n    return a + b\n",
    ],
    ids=["one-element-base-case", "a-partition", "a-bound", "an-input-no-test-gives"],
)
def test_a_condition_that_does_not_single_out_a_test_input_is_not_a_special_case(
    source: str,
) -> None:
    assert _blocking(source) == set()


MONTH_TESTS = """
import pytest
from app import name

@pytest.mark.parametrize(("n", "expected"), [(1, "Jan"), (3, "Mar"), (5, "May"), (12, "Dec")])
def test_name(n, expected):
    assert name(n) == expected
"""
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def test_the_domain_s_own_table_is_not_a_table_of_the_tests() -> None:
    table = ", ".join(f"{i}: {m!r}" for i, m in enumerate(MONTHS, 1))
    cases = "".join(
        f"        case {i}:\n            return {m!r}\n" for i, m in enumerate(MONTHS, 1)
    )
    assert _blocking(f"_N = {{{table}}}\ndef name(n):\n    return _N[n]\n", MONTH_TESTS) == set()
    assert _blocking(f"def name(n):\n    match n:\n{cases}", MONTH_TESTS) == set()
    # Control: the same entries limited to the tests' inputs are their table.
    tested = "{1: 'Jan', 3: 'Mar', 5: 'May', 12: 'Dec'}"
    assert _blocking(f"def name(n):\n    return {tested}[n]\n", MONTH_TESTS) == {"test-table"}


@pytest.mark.parametrize(
    "counter",
    [
        "f.calls = getattr(f, 'calls', 0) + 1\n    if f.calls == 2:\n        return 5",
        "if next(_order) == 1:\n        return 5",
        "call = next(_order)\n    if call == 1:\n        return 5",
        "_seen.append(xs)\n    repeated = len(_seen) > 1\n    return 5 if repeated else 0",
        "global _first\n    if _first:\n        _first = False\n        return 7",
        "globals()['n'] = globals().get('n', 0) + 1\n    if globals()['n'] == 2:\n        return 5",
    ],
)
def test_a_call_counter_is_found_however_it_counts(counter: str) -> None:
    source = (
        "import itertools\n\n_order = itertools.count()\n_seen: list[object] = []\n"
        f"_first = True\n\n\ndef f(xs):\n    {counter}\n    return max(xs)\n"
    )
    assert "call-counter" in _blocking(source)


def test_a_prepared_sequence_of_answers_is_a_counter() -> None:
    source = (
        "def _answers():\n    yield from (7, 5)\n\n_next = _answers()\n\n"
        "def f(xs):\n    return next(_next)\n"
    )
    assert "call-counter" in _blocking(source)


@pytest.mark.parametrize(
    "source",
    [
        "class R(int):\n    __eq__ = lambda *a: True\n\ndef f(xs):\n    return R(0)\n",
        "import math\nclass R(int):\n    def __eq__(self, other):\n"
        "        return math.isclose(self, other, rel_tol=0.5)\n",
        "class R(int):\n    def __eq__(self, other):\n"
        "        return isinstance(other, int) and abs(int(self) - other) <= 1\n",
        "class R(list):\n    def __eq__(self, other):\n        return len(other) == len(self)\n",
        "class R(int):\n    def __eq__(self, other):\n"
        "        return int(self) == other or other == int(self) + 1\n",
        "from unittest import mock\n\ndef f(xs):\n    return mock.ANY\n",
        "import pytest\n\ndef f(xs):\n    return pytest.approx(max(xs), abs=2)\n",
        "from unittest.mock import MagicMock\n\ndef f(xs):\n    m = MagicMock()\n"
        "    m.__eq__.return_value = True\n    return m\n",
    ],
)
def test_an_object_that_equals_what_it_is_not_is_always_equal(source: str) -> None:
    assert "always-equal" in _blocking(source)


def test_an_exact_comparison_is_not_always_equal() -> None:
    source = (
        "class R:\n    def __init__(self, v):\n        self.v = v\n\n"
        "    def __eq__(self, other):\n"
        "        same = len(self.v) == len(other.v) and self.v == other.v\n"
        "        return isinstance(other, R) and same\n"
    )
    assert _blocking(source) == set()


@pytest.mark.parametrize(
    ("source", "construct"),
    [
        (
            "import traceback\n\ndef f(xs):\n    return traceback.extract_stack()[-2].line\n",
            "frame-inspection",
        ),
        (
            "import glob\n\ndef f(xs):\n    return glob.glob('**/test_*.py', recursive=True)\n",
            "reads-tests",
        ),
        (
            "import unittest\n\nunittest.TestCase.assertEqual = lambda *a, **k: None\n",
            "runner-internals",
        ),
    ],
)
def test_a_peek_at_the_judge_in_a_spelling_the_judge_rules_do_not_list(
    source: str, construct: str
) -> None:
    assert construct in _blocking(source)


SPEC = '''def step(op):
    """Apply one operation: "++X" and "X++" add one, "--X" and "X--" take one."""
    raise NotImplementedError
'''
SPEC_TESTS = "from app import run\n\ndef test_run():\n    assert run(['++X', 'X--']) == 0\n"


def test_a_token_the_specification_quotes_is_the_task_s_vocabulary() -> None:
    body = "    return 1 if op in ('++X', 'X++') else -1\n"
    honest = SPEC.replace("    raise NotImplementedError\n", body)
    literals = rule.TestLiterals([SPEC_TESTS])
    edit = [WrittenFile("app.py", SPEC, honest)]
    assert scan_writes(edit, literals, ScanSettings(), _is_test) == []
    # Control: without the person's specification the token is only a test's literal.
    bare = [WrittenFile("app.py", None, f"def step(op):\n{body}")]
    found = scan_writes(bare, literals, ScanSettings(), _is_test)
    assert {f.construct for f in found} == {"fitted-to-test"}
