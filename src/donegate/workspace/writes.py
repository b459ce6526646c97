"""Writes: what changed between two snapshots of the same tree."""

from __future__ import annotations

from datetime import datetime

from donegate.record import Record
from donegate.timefmt import rfc3339
from donegate.workspace.snapshot import Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    Change = Literal["added", "modified", "deleted", "renamed"]
else:
    Change = str  # a Literal for the type checker; its values are str at run time


class Write(Record):
    """One change to one file.

    ``observed_at`` is when donegate observed the change (the end of the snapshot that shows it),
    never the file's mtime, which the agent controls. The write happened at or before it.
    ``old_path`` is set for a rename; ``old_digest`` / ``new_digest`` are ``None`` where the file
    did not exist.
    """

    path: str
    change: Change
    observed_at: datetime
    old_digest: str | None = None
    new_digest: str | None = None
    old_path: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "path": self.path,
            "change": self.change,
            "observed_at": rfc3339(self.observed_at),
            "old_digest": self.old_digest,
            "new_digest": self.new_digest,
            "old_path": self.old_path,
        }


def diff(old: Snapshot, new: Snapshot) -> list[Write]:
    """The writes that turn ``old`` into ``new``, sorted by path.

    A file deleted and another added with the same content is one rename. Files whose digests
    cannot be compared (snapshots of different object formats) all count as modified.
    """
    at = new.taken_at
    comparable = old.algorithm == new.algorithm
    writes: list[Write] = []
    for path, entry in new.entries.items():
        before = old.entries.get(path)
        if before is not None and (before.digest != entry.digest or not comparable):
            writes.append(Write(path, "modified", at, before.digest, entry.digest))
    added = sorted(p for p in new.entries if p not in old.entries)
    deleted = sorted(p for p in old.entries if p not in new.entries)
    writes.extend(_renames_and_rest(old, new, added, deleted, at))
    return sorted(writes, key=lambda w: w.path)


def _renames_and_rest(
    old: Snapshot, new: Snapshot, added: list[str], deleted: list[str], at: datetime
) -> list[Write]:
    # Pair each added file with the first deleted file of the same digest, one to one.
    gone: dict[str, list[str]] = {}
    for path in deleted:
        gone.setdefault(old.entries[path].digest, []).append(path)
    writes: list[Write] = []
    for path in added:
        digest = new.entries[path].digest
        sources = gone.get(digest)
        if sources and not digest.startswith("unreadable:"):
            source = sources.pop(0)
            writes.append(Write(path, "renamed", at, digest, digest, old_path=source))
        else:
            writes.append(Write(path, "added", at, None, digest))
    for sources in gone.values():
        for path in sources:
            writes.append(Write(path, "deleted", at, old.entries[path].digest, None))
    return writes
