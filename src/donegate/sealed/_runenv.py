"""The environment a check's command runs in: donegate's, never the agent's shell's.

The hook inherits the host's environment, which the agent may have shaped: ``PYTHONPATH``,
``PYTHONSTARTUP``, ``PYTEST_ADDOPTS``, ``PYTEST_PLUGINS`` and their friends each steer what Python
imports or what pytest loads. Every such variable is dropped; what is left (``PATH``, ``HOME``,
``LANG`` ...) is kept; the team's ``env`` from ``donegate.toml`` and donegate's own come on top.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

# Read by Python, pytest or the dynamic loader to decide what runs (any case, any suffix).
STRIPPED_PREFIXES = ("PYTHON", "PYTEST", "_PYTEST", "PY_", "__PYVENV")
STRIPPED_NAMES = frozenset({"VIRTUAL_ENV", "LD_PRELOAD", "LD_AUDIT"})


def stripped(name: str) -> bool:
    """Is ``name`` a variable that the inherited environment may not pass on?"""
    upper = name.upper()
    return upper in STRIPPED_NAMES or upper.startswith(STRIPPED_PREFIXES)


def inherited(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without the variables that steer Python or pytest."""
    return {name: value for name, value in environ.items() if not stripped(name)}


def base_environment(
    team: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The inherited environment, cleaned, with the team's ``env`` on top."""
    return {**inherited(os.environ if environ is None else environ), **team}


def search_path(*groups: Sequence[str]) -> str | None:
    """``PYTHONPATH`` from groups of entries in order, empty entries dropped; None if empty."""
    entries = [entry for group in groups for entry in group if entry]
    return os.pathsep.join(entries) if entries else None
