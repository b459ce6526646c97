"""Workspace write tracking: what an agent changed in a working tree, and what kind of change.

The pieces, in the order data flows through them::

    Snapshot.take(root, previous)    the files of a tree with their digests (fast when warm)
    diff(old, new) -> [Write]        added / modified / deleted / renamed, with observed_at
    classify(write, old, new, rules) source / cosmetic / test / doc / config
    WorkspaceState(state_dir, root, session_id)
                                     a session's baseline, last verified snapshot and journal

This package imports neither pydantic nor pygments at import time (pygments only when a
non-Python edit must be compared), so a hook process that starts at every agent stop stays fast.
"""

from __future__ import annotations

from donegate.workspace.classify import (
    NEEDS_VERIFYING,
    ClassifiedWrite,
    Rules,
    WriteKind,
    classify,
    flags,
)
from donegate.workspace.journal import Journal, Reported
from donegate.workspace.patterns import DEFAULT_IGNORES
from donegate.workspace.snapshot import Entry, Snapshot
from donegate.workspace.state import WorkspaceState, workspace_id
from donegate.workspace.writes import Change, Write, diff

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
    "classify",
    "diff",
    "flags",
    "workspace_id",
]
