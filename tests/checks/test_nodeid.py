"""pytest node ids: parsed with pytest's grammar, matched exactly (no suffix, no other file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from donegate.checks.runners import _nodeid
from donegate.checks.runners._nodeid import NodeId, NodeIdError
from donegate.checks.test_run._mustpass import resolve
from donegate.sealed._witness import WitnessReport

IPV6 = "tests/test_requests.py::TestRequests::test_errors[http://fe80::5054:ff:fe5a:fc0-InvalidURL]"


@pytest.mark.parametrize(
    ("text", "path", "names", "params"),
    [
        ("tests/test_a.py", "tests/test_a.py", (), None),
        ("tests/test_a.py::test_x", "tests/test_a.py", ("test_x",), None),
        ("t.py::TestA::TestB::test_x", "t.py", ("TestA", "TestB", "test_x"), None),
        (
            IPV6,
            "tests/test_requests.py",
            ("TestRequests", "test_errors"),
            "http://fe80::5054:ff:fe5a:fc0-InvalidURL",
        ),
        ("t.py::test_x[a b-[1]-c]", "t.py", ("test_x",), "a b-[1]-c"),
        ("t.py::test_x[]]", "t.py", ("test_x",), "]"),
        ("t.py::test_x[café-日本]", "t.py", ("test_x",), "café-日本"),
        ("t.py::test_x[\\xe9]", "t.py", ("test_x",), "\\xe9"),
        ("dir[1]/test_a.py::test_x[0]", "dir[1]/test_a.py", ("test_x",), "0"),
    ],
)
def test_parse_splits_as_pytest_does(
    text: str, path: str, names: tuple[str, ...], params: str | None
) -> None:
    node = NodeId.parse(text)
    assert (node.path, node.names, node.params) == (path, names, params)
    assert str(node) == text


@pytest.mark.parametrize("text", ["", "::test_x", "t.py::", "t.py::a::::b", "t.py::test_x[1"])
def test_parse_rejects_what_pytest_cannot_make(text: str) -> None:
    with pytest.raises(NodeIdError):
        NodeId.parse(text)


@given(st.text(alphabet="ab:[]/.", max_size=16))
def test_the_quick_split_splits_as_the_scan_over_each_character(text: str) -> None:
    assert _nodeid._split_path(text) == _nodeid._split_scanning(text)


def test_the_old_split_broke_an_ipv6_parameter() -> None:
    # The false refute on real SWE-bench data: splitting on every "::" cut the parameter apart.
    parts = IPV6.split("::")
    assert len(parts) == 4
    assert parts[-1] == "5054:ff:fe5a:fc0-InvalidURL]"
    assert NodeId.parse(IPV6).junit_key() == (
        "tests.test_requests.TestRequests::test_errors[http://fe80::5054:ff:fe5a:fc0-InvalidURL]"
    )


def test_a_function_id_covers_its_parametrizations_only() -> None:
    function = NodeId.parse("t.py::test_x")
    assert function.covers(NodeId.parse("t.py::test_x[1]"))
    assert function.covers(NodeId.parse("t.py::test_x"))
    assert not function.covers(NodeId.parse("t.py::test_xy[1]"))
    assert not function.covers(NodeId.parse("other/t.py::test_x[1]"))
    assert not NodeId.parse("t.py::test_x[1]").covers(NodeId.parse("t.py::test_x[10]"))
    assert NodeId.parse("t.py::TestA").covers(NodeId.parse("t.py::TestA::test_x[1]"))


def report(
    *tests: tuple[str, str], root: str = "/p", deselected: tuple[str, ...] = ()
) -> WitnessReport:
    """A report in which every test fared the same when run again."""
    return WitnessReport(
        rootdir=Path(root),
        invocation_dir=Path(root),
        inifile=None,
        args=(),
        tests={NodeId.parse(n): o for n, o in tests},
        collect_problems={},
        collected=(),
        deselected=tuple(NodeId.parse(n) for n in deselected),
        loaded=(),
        tampered=(),
        exitstatus=0,
        again={NodeId.parse(n): o for n, o in tests},
    )


def test_every_parametrization_must_pass() -> None:
    seen = report(("t.py::test_x[1]", "passed"), ("t.py::test_x[2]", "failed"))
    assert resolve("t.py::test_x", seen, ()).status == "failed"
    mixed = report(("t.py::test_x[1]", "passed"), ("t.py::test_x[2]", "xfailed"))
    assert resolve("t.py::test_x", mixed, ()).status == "xfailed"
    partial = report(("t.py::test_x[1]", "passed"), deselected=("t.py::test_x[2]",))
    assert resolve("t.py::test_x", partial, ()).status == "deselected"
    good = report(("t.py::test_x[1]", "passed"), ("t.py::test_x[2]", "xpassed"))
    found = resolve("t.py::test_x", good, ())
    assert (found.status, found.tests) == ("passed", ("t.py::test_x[1]", "t.py::test_x[2]"))


def test_no_fallback_to_a_same_named_test_in_another_file() -> None:
    seen = report(
        ("legacy/tests/test_a.py::test_x", "passed"), ("tests/test_b.py::test_x", "passed")
    )
    assert resolve("tests/test_a.py::test_x", seen, ()).status == "absent"


def test_an_id_relative_to_the_invocation_dir_is_mapped_once_and_said() -> None:
    # pytest's rootdir is /repo/sub (its ini file), the team wrote ids from /repo.
    seen = report(("tests/test_a.py::test_x", "passed"), root="/repo/sub")
    found = resolve("sub/tests/test_a.py::test_x", seen, (Path("/repo"),))
    assert (found.status, found.mapped) == ("passed", "tests/test_a.py::test_x")
    # ... and the other way: rootdir /repo, pytest started in /repo/sub.
    above = report(("sub/tests/test_a.py::test_x", "passed"), root="/repo")
    found = resolve("tests/test_a.py::test_x", above, (Path("/repo/sub"),))
    assert (found.status, found.mapped) == ("passed", "sub/tests/test_a.py::test_x")


def test_an_id_that_reads_two_ways_proves_nothing() -> None:
    seen = report(("tests/test_a.py::test_x", "passed"), ("sub/tests/test_a.py::test_x", "passed"))
    found = resolve("tests/test_a.py::test_x", seen, (Path("/p/sub"),))
    assert found.status == "ambiguous"


def test_an_id_outside_the_rootdir_is_not_read_there() -> None:
    seen = report(("tests/test_a.py::test_x", "passed"), root="/repo/sub")
    assert resolve("../tests/test_a.py::test_x", seen, ()).status == "absent"
