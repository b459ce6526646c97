"""Workspace write tracking: what an agent changed in a working tree, and what kind of change.

The pieces, in the order data flows through them::

    Snapshot.take(root, previous)    the files of a tree with their digests (fast when warm)
    diff(old, new) -> [Write]        added / modified / deleted / renamed, with observed_at
    classify(write, old, new, rules) source / cosmetic / test / doc / config
    WorkspaceState(state_dir, root, session_id)
                                     a session's baseline, last verified snapshot and journal

This package imports neither pydantic nor pygments at import time (pygments only when a
non-Python edit must be compared), and its names are imported on first use: a process that
needs one module (``collect`` wants the runner files' list) does not load them all.
``classify`` is the module's own name: call ``donegate.workspace.classify.classify``.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from donegate.workspace.classify import (
        NEEDS_VERIFYING,
        ClassifiedWrite,
        Rules,
        WriteKind,
        flags,
    )
    from donegate.workspace.journal import Journal, Reported
    from donegate.workspace.patterns import DEFAULT_IGNORES
    from donegate.workspace.snapshot import Entry, Snapshot
    from donegate.workspace.state import WorkspaceState, workspace_id
    from donegate.workspace.writes import Change, Write, diff

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "DEFAULT_IGNORES": "donegate.workspace.patterns",
    "NEEDS_VERIFYING": "donegate.workspace.classify",
    "Change": "donegate.workspace.writes",
    "ClassifiedWrite": "donegate.workspace.classify",
    "Entry": "donegate.workspace.snapshot",
    "Journal": "donegate.workspace.journal",
    "Reported": "donegate.workspace.journal",
    "Rules": "donegate.workspace.classify",
    "Snapshot": "donegate.workspace.snapshot",
    "WorkspaceState": "donegate.workspace.state",
    "Write": "donegate.workspace.writes",
    "WriteKind": "donegate.workspace.classify",
    "diff": "donegate.workspace.writes",
    "flags": "donegate.workspace.classify",
    "workspace_id": "donegate.workspace.state",
}

__all__ = [
    "DEFAULT_IGNORES",
    "NEEDS_VERIFYING",
    "Change",
    "ClassifiedWrite",
    "Entry",
    "Journal",
    "Reported",
    "Rules",
    "Snapshot",
    "WorkspaceState",
    "Write",
    "WriteKind",
    "diff",
    "flags",
    "workspace_id",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'donegate.workspace' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value
