"""Where donegate keeps session state and receipts: never in the agent's working tree.

Precedence: an explicit directory (``--state-dir``), else ``$DONEGATE_STATE_DIR``, else
``$XDG_STATE_HOME/donegate``, else ``~/.local/state/donegate``.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "DONEGATE_STATE_DIR"


def resolve(explicit: str | Path | None = None) -> Path:
    """The state directory to use (not created)."""
    if explicit:
        return Path(explicit).expanduser()
    from_env = os.environ.get(ENV_VAR)
    if from_env:
        return Path(from_env).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "donegate"


def ensure(explicit: str | Path | None = None) -> Path:
    """The state directory, created (private to the user) if it does not exist."""
    path = resolve(explicit)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path
