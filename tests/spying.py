"""Spies on a module's file reader, for tests that count what a cache reads again."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def names_read(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[str]:
    """The names of the files ``module._read`` is asked for from now on (it still reads them)."""
    read: list[str] = []
    original = module._read

    def spy(path: str, *args: Any) -> Any:
        read.append(Path(path).name)
        return original(path, *args)

    monkeypatch.setattr(module, "_read", spy)
    return read
