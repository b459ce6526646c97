"""Gates on a real SQLite file in a temporary state directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from donegate.gate import Gate, GateOptions

MakeGate = Callable[..., Gate]


@pytest.fixture
def make_gate(tmp_path: Path) -> MakeGate:
    """``make_gate(**options)``: a gate with those options, state in ``tmp_path``."""

    def make(**options: Any) -> Gate:
        return Gate(GateOptions(**options), state_dir=tmp_path / "state")

    return make
