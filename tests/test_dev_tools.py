"""The development environment's own tools."""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "tools"))

from quiet_pytest_plugins import UNUSED, without_pytest_plugin


def test_only_the_named_pytest_plugin_is_dropped() -> None:
    text = (
        "[console_scripts]\nlangsmith_plugin = a:b\n\n"
        "[pytest11]\nlangsmith_plugin = x.y\nkept = z\n"
    )
    assert without_pytest_plugin(text, "langsmith_plugin") == (
        "[console_scripts]\nlangsmith_plugin = a:b\n\n[pytest11]\nkept = z\n"
    )


def test_this_environment_registers_none_of_the_dropped_plugins() -> None:
    plugins = {e.name for e in importlib.metadata.entry_points(group="pytest11")}
    assert "langsmith_plugin" in UNUSED["langsmith"]
    assert plugins.isdisjoint(name for names in UNUSED.values() for name in names)


def test_the_suite_still_runs_with_the_plugins_it_uses(pytestconfig: pytest.Config) -> None:
    for name in ("xdist.plugin", "_hypothesis_pytestplugin"):
        assert pytestconfig.pluginmanager.is_registered(importlib.import_module(name)), name
