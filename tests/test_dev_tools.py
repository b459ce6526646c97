"""The development environment's own tools."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tools"))

from quiet_pytest_plugins import without_pytest_plugin


def test_only_the_named_pytest_plugin_is_dropped() -> None:
    text = (
        "[console_scripts]\nlangsmith_plugin = a:b\n\n"
        "[pytest11]\nlangsmith_plugin = x.y\nkept = z\n"
    )
    assert without_pytest_plugin(text, "langsmith_plugin") == (
        "[console_scripts]\nlangsmith_plugin = a:b\n\n[pytest11]\nkept = z\n"
    )


def test_this_environment_loads_no_langsmith_plugin() -> None:
    plugins = {e.name for e in importlib.metadata.entry_points(group="pytest11")}
    assert "langsmith_plugin" not in plugins
