"""Judge-reaching constructs: each rule with an attack it catches and a near miss it leaves."""

from __future__ import annotations

import ast
import textwrap

import pytest

from donegate.scan.judge import judge_occurrences


def constructs(source: str, *, test_file: bool = False) -> list[str]:
    tree = ast.parse(textwrap.dedent(source))
    return [o.construct for o in judge_occurrences(tree, test_file=test_file)]


_CASES = [
    pytest.param(*case, id=case[1])
    for case in [
        ("runner-internals", "import _pytest.reports"),
        ("runner-internals", "from _pytest.reports import TestReport"),
        ("runner-internals", "import pluggy"),
        ("runner-internals", "from pytest import TestReport"),
        ("runner-internals", "import pytest\nx = pytest.CallInfo"),
        ("runner-internals", "def pytest_runtest_makereport(item, call): pass"),
        ("test-detection", "import os\nif 'PYTEST_CURRENT_TEST' in os.environ: pass"),
        ("test-detection", "import os\nx = os.environ.get('PYTEST_CURRENT_TEST')"),
        ("test-detection", "import os\nx = os.getenv('PYTEST_CURRENT_TEST')"),
        ("test-detection", "import sys\nunder_test = 'pytest' in sys.modules"),
        ("test-detection", "import sys\nx = sys.modules.get('_pytest')"),
        ("test-detection", "import sys\nif sys.argv[0].endswith('pytest'): pass"),
        ("test-detection", "import sys\nif any('pytest' in a for a in sys.argv): pass"),
        ("patch-sys-modules", "import sys\nsys.modules['json'] = object()"),
        ("patch-sys-modules", "import sys\ndel sys.modules['json']"),
        ("patch-sys-modules", "import sys\nsys.modules.update({'json': 1})"),
        ("patch-sys-modules", "import sys\nmonkeypatch.setitem(sys.modules, 'json', 1)"),
        ("patch-sys-modules", "from unittest import mock\nmock.patch.dict('sys.modules', {})"),
        ("patch-builtins", "import builtins\nbuiltins.print = len"),
        ("patch-builtins", "__builtins__['print'] = len"),
        ("patch-builtins", "import builtins\nsetattr(builtins, 'open', len)"),
        ("patch-builtins", "import builtins\nbuiltins.__dict__['open'] = len"),
        ("trace-hook", "import sys\nsys.settrace(None)"),
        ("trace-hook", "import sys\nsys.setprofile(None)"),
        ("trace-hook", "import threading\nthreading.settrace(print)"),
        ("trace-hook", "from sys import settrace"),
        ("frame-inspection", "import sys\nf = sys._getframe(1)"),
        ("frame-inspection", "import inspect\ns = inspect.stack()"),
        ("frame-inspection", "import inspect\nf = inspect.currentframe()"),
        ("frame-inspection", "def f(frame): return frame.f_back"),
        ("frame-inspection", "from sys import _getframe"),
        ("frame-inspection", "import sys as s\nf = s._getframe()"),
        ("frame-inspection", "import sys\nf = getattr(sys, '_getframe')()"),
        ("runner-internals", "import importlib\nr = importlib.import_module('_pytest.runner')"),
        ("runner-internals", "r = __import__('pluggy')"),
        ("hard-exit", "import os\nos._exit(0)"),
        ("hard-exit", "import atexit\natexit.register(print)"),
        ("hard-exit", "import atexit\n@atexit.register\ndef bye(): pass"),
    ]
]


@pytest.mark.parametrize(("construct", "source"), _CASES)
def test_a_construct_in_source_is_found(construct: str, source: str) -> None:
    assert construct in constructs(source)


@pytest.mark.parametrize(
    "source",
    [
        "import pytest",  # a library may ship test helpers
        "import sys\nraise SystemExit('run it with pytest -q')",  # a message, not a lookup
        "import os\nx = os.environ.get('HOME')",
        "import sys\nif 'json' in sys.modules: pass",  # reading sys.modules is not patching it
        "import sys\nmodule = sys.modules[__name__]",
        "import builtins\nx = builtins.open",
        "import sys\nsys.exit(1)",
        "import os\nos.exit = None\n",  # not os._exit
        "import inspect\nsig = inspect.signature(len)",
        "def run_pytest(): pass",  # a hook is named pytest_*
    ],
)
def test_a_near_miss_in_source_is_not_found(source: str) -> None:
    assert constructs(source) == []


@pytest.mark.parametrize(
    "source",
    [
        "import _pytest.reports",
        "import sys\nf = sys._getframe(1)",
        "import inspect\ns = inspect.stack()",
        "import os\nif 'PYTEST_CURRENT_TEST' in os.environ: pass",
        "import os\nos._exit(0)",
        "import atexit\natexit.register(print)",
        "def pytest_configure(config): pass",
        "import sys\nsys.modules['optional_dependency'] = None",
    ],
)
def test_test_files_may_use_the_runner_and_frames(source: str) -> None:
    assert constructs(source) != []  # control: the same source is a finding in code under test
    assert constructs(source, test_file=True) == []


_IN_TEST_FILES = {
    "import builtins\nbuiltins.len = lambda x: 3": "patch-builtins",
    "import sys\nsys.settrace(print)": "trace-hook",
    "class A:\n    def __eq__(self, other): return True": "always-equal",
}


@pytest.mark.parametrize(("source", "construct"), _IN_TEST_FILES.items())
def test_some_constructs_count_in_test_files_too(construct: str, source: str) -> None:
    assert constructs(source, test_file=True) == [construct]


@pytest.mark.parametrize(
    "source",
    [
        """
        class A:
            def __eq__(self, other):
                return True
        """,
        """
        class A:
            def __ne__(self, other):
                return False
        """,
        """
        class A:
            def __eq__(self, other):
                if not isinstance(other, A):
                    return NotImplemented
                return True
        """,
        """
        class A:
            def __eq__(self, other):
                print("compared")
                return self is self
        """,
        """
        class A:
            def __hash__(self):
                return 0
        """,
        """
        class A:
            __eq__ = lambda self, other: True
        """,
    ],
)
def test_an_equality_that_ignores_its_operand_is_found(source: str) -> None:
    assert constructs(source) == ["always-equal"]


@pytest.mark.parametrize(
    "source",
    [
        """
        class A:
            def __eq__(self, other):
                return isinstance(other, A) and self.x == other.x
        """,
        """
        class A:
            def __eq__(self, other):
                if not isinstance(other, A):
                    return NotImplemented
                if self.x != other.x:
                    return False
                return True
        """,
        """
        class A:
            def __hash__(self):
                return hash((self.x, self.y))
        """,
        """
        from typing import Protocol
        class Comparable(Protocol):
            def __eq__(self, other: object) -> bool: ...
        """,
        """
        class Unhashable:
            def __hash__(self):
                raise TypeError("unhashable")
        """,
        """
        class A:
            __eq__ = lambda self, other: self.x == other.x
        """,
    ],
)
def test_an_equality_that_reads_its_operand_is_not_found(source: str) -> None:
    assert constructs(source) == []


def test_an_occurrence_names_its_line_scope_and_what_it_is() -> None:
    source = "import sys\n\nclass Runner:\n    def caller(self):\n        return sys._getframe(1)\n"
    [occurrence] = judge_occurrences(ast.parse(source), test_file=False)
    assert (occurrence.line, occurrence.scope, occurrence.detail) == (
        5,
        "Runner.caller",
        "sys._getframe",
    )


def test_every_construct_found_has_a_word_of_the_pre_check() -> None:
    from donegate.scan.judge import may_reach

    assert not may_reach("import os\n\ndef f(x):\n    return os.path.join(x, 'a')\n")
    sources = [p.values[1] for p in _CASES] + list(_IN_TEST_FILES)
    for source in sources:
        assert may_reach(str(source)), source
