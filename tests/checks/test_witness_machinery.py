"""The witness's check of pytest's machinery, after every report: what it skips when nothing
changed never hides a change. Each test swaps a piece of the machinery for real, in this process,
the way code under test would, and the check must name it (the piece is put back before this
test's own report is made, which needs it)."""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _pytest.reports
import _pytest.runner

from donegate.sealed import _witness_plugin as plugin


def witness(tmp_path: Path) -> plugin._Witness:
    made = plugin._Witness({"report": str(tmp_path / "witness.json")})
    made.check_machinery("the start")
    assert made.tampered == []
    return made


@contextlib.contextmanager
def swapped(owner: Any, name: str, value: object) -> Iterator[None]:
    saved = owner.__dict__[name]
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


def test_a_function_swapped_in_a_module_is_named(tmp_path: Path) -> None:
    seen = witness(tmp_path)
    with swapped(_pytest.runner, "call_and_report", lambda *a, **k: None):
        seen.check_machinery("test_x")
    assert seen.tampered == ["_pytest.runner:call_and_report was replaced (noticed at test_x)"]


def test_a_method_swapped_in_a_class_is_named(tmp_path: Path) -> None:
    seen = witness(tmp_path)
    with swapped(_pytest.reports.TestReport, "from_item_and_call", classmethod(print)):
        seen.check_machinery("test_y")
    assert seen.tampered == [
        "_pytest.reports:TestReport.from_item_and_call was replaced (noticed at test_y)"
    ]


def test_a_module_swapped_in_sys_modules_is_named(tmp_path: Path) -> None:
    # Every class of the stand-in is new, but the old class's namespace is still there,
    # unchanged: a check of the last namespaces alone would find nothing.
    seen = witness(tmp_path)
    stand_in = types.ModuleType("_pytest.reports")
    stand_in.__dict__.update(vars(_pytest.reports))
    stand_in.TestReport = type("TestReport", (), {})  # type: ignore[attr-defined]
    with swapped(sys, "modules", {**sys.modules, "_pytest.reports": stand_in}):
        seen.check_machinery("test_z")
    assert "_pytest.reports:TestReport was replaced (noticed at test_z)" in seen.tampered
    assert any("TestReport.from_item_and_call" in t for t in seen.tampered)


def test_an_entry_of_sys_modules_swapped_in_place_is_named(tmp_path: Path) -> None:
    seen = witness(tmp_path)
    with swapped_entry("_pytest.runner", types.ModuleType("_pytest.runner")):
        seen.check_machinery("test_w")
    assert "_pytest.runner:call_and_report was replaced (noticed at test_w)" in seen.tampered


@contextlib.contextmanager
def swapped_entry(name: str, module: types.ModuleType) -> Iterator[None]:
    saved = sys.modules[name]
    sys.modules[name] = module
    try:
        yield
    finally:
        sys.modules[name] = saved
