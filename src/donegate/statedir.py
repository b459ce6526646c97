"""Where donegate keeps session state and receipts: never in the agent's working tree.

Precedence: an explicit directory (``--state-dir``), else ``$DONEGATE_STATE_DIR``, else
``$XDG_STATE_HOME/donegate``, else ``~/.local/state/donegate``.
"""

from __future__ import annotations

import os
from pathlib import Path

from donegate.errors import InvalidInput

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
    """The state directory, created (private to the user) if it does not exist.

    A directory that cannot be made or is not one (a file on the way, no permission, a read-only
    or full file system) is :class:`InvalidInput` naming the path and the cause.
    """
    path = resolve(explicit)
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise InvalidInput(
            f"state directory {path} cannot be used: {exc.strerror or exc}"
        ) from None
    except ValueError as exc:  # a NUL in the path
        raise InvalidInput(f"state directory {path!r} cannot be used: {exc}") from None
    if not path.is_dir():
        raise InvalidInput(f"state directory {path} cannot be used: not a directory")
    return path
