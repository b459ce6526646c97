"""Writes between snapshots: the four changes, and when donegate observed them."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from donegate.workspace import Snapshot, diff
from tests.workspace.conftest import git, write


def _changes(old: Snapshot, new: Snapshot) -> list[tuple[str, str, str | None]]:
    return [(w.path, w.change, w.old_path) for w in diff(old, new)]


def test_added_modified_deleted(repo: Path) -> None:
    before = Snapshot.take(repo)
    write(repo, "src/extra.py", "y = 2\n")
    write(repo, "src/app.py", "def add(a, b):\n    return a - b\n")
    (repo / "README.md").unlink()
    assert _changes(before, Snapshot.take(repo)) == [
        ("README.md", "deleted", None),
        ("src/app.py", "modified", None),
        ("src/extra.py", "added", None),
    ]


def test_move_is_a_rename(repo: Path) -> None:
    before = Snapshot.take(repo)
    shutil.move(repo / "src/app.py", repo / "src/calc.py")
    assert _changes(before, Snapshot.take(repo)) == [("src/calc.py", "renamed", "src/app.py")]


def test_git_mv_then_edit_is_a_delete_and_an_add(repo: Path) -> None:
    before = Snapshot.take(repo)
    git(repo, "mv", "src/app.py", "src/calc.py")
    write(repo, "src/calc.py", "changed = 1\n")
    assert _changes(before, Snapshot.take(repo)) == [
        ("src/app.py", "deleted", None),
        ("src/calc.py", "added", None),
    ]


def test_untracking_a_file_is_not_a_write(repo: Path) -> None:
    before = Snapshot.take(repo)
    git(repo, "rm", "-q", "--cached", "README.md")  # untracked now, but still in the tree
    assert _changes(before, Snapshot.take(repo)) == []


def test_observed_at_is_when_donegate_looked_not_the_mtime(repo: Path) -> None:
    before = Snapshot.take(repo)
    path = write(repo, "src/app.py", "def add(a, b):\n    return 0\n")
    long_ago = datetime(2001, 1, 1, tzinfo=UTC).timestamp()
    os.utime(path, (long_ago, long_ago))
    looked = datetime.now(UTC)
    (write_,) = diff(before, Snapshot.take(repo))
    assert write_.observed_at.tzinfo is not None
    assert write_.observed_at >= looked
    assert write_.observed_at - looked < timedelta(minutes=1)
    assert write_.to_json()["observed_at"].endswith("Z")


def test_observed_at_uses_the_injected_clock(repo: Path) -> None:
    fixed = datetime(2030, 5, 6, 7, 8, 9, tzinfo=UTC)
    before = Snapshot.take(repo)
    write(repo, "new.py", "x = 1\n")
    (write_,) = diff(before, Snapshot.take(repo, clock=lambda: fixed))
    assert write_.observed_at == fixed
