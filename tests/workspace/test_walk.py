"""The walk's listings: a directory is listed again whenever its names may have changed."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

import pytest

from donegate.workspace import Snapshot
from tests.workspace.conftest import git, write

LATER = 2**62  # a record that began long after every file and directory was last changed


@pytest.fixture
def repo(repo: Path) -> Path:
    """The workspace repository, whose ``src/.gitignore`` hides ``planted.py`` from git.

    Importable code is seen whatever ignores it, and git does not list an ignored file: only
    the walk finds ``src/planted.py``, so these tests judge the walk alone.
    """
    write(repo, "src/.gitignore", "planted.py\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ignore planted.py")
    return repo


def _aged(snap: Snapshot, started_ns: int = LATER) -> Snapshot:
    """``snap`` as donegate would have recorded it, beginning at ``started_ns``."""
    back = Snapshot.from_record(snap.to_record())
    assert back is not None
    back.started_ns = started_ns
    return back


def _listed_dirs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The directories walks list with ``scandir`` from now on."""
    listed: list[str] = []
    original = os.scandir

    def spy(path: str) -> object:
        listed.append(os.path.basename(str(path).rstrip("/")))
        return original(path)

    monkeypatch.setattr(os, "scandir", spy)
    return listed


def test_an_unchanged_tree_is_walked_without_listing_a_directory(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _aged(Snapshot.take(repo))
    assert set(first.listings) == {"", "src/", "tests/"}
    listed = _listed_dirs(monkeypatch)
    again = Snapshot.take(repo, previous=first)
    assert listed == []
    assert again.entries == first.entries
    assert again.listings == first.listings


def test_a_new_untracked_file_is_found_in_a_listed_directory(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _aged(Snapshot.take(repo))
    listed = _listed_dirs(monkeypatch)
    write(repo, "src/planted.py", "x = 1\n")
    again = Snapshot.take(repo, previous=first)
    assert "src/planted.py" in again.entries
    assert listed == ["src"]  # only the directory whose names changed is listed again


def test_restoring_the_directorys_mtime_does_not_hide_a_new_file(repo: Path) -> None:
    """The agent adds a file and puts the directory's mtime back: its ctime still moved."""
    first = _aged(Snapshot.take(repo))
    src = repo / "src"
    before = src.stat()
    write(repo, "src/planted.py", "x = 1\n")
    os.utime(src, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert src.stat().st_mtime_ns == before.st_mtime_ns
    again = Snapshot.take(repo, previous=first)
    assert "src/planted.py" in again.entries
    # Without the ctime in the key the attack works: a record keyed on the new ctime misses it.
    mtime, _, inode, names = first.listings["src/"]
    first.listings["src/"] = (mtime, src.stat().st_ctime_ns, inode, names)
    fooled = Snapshot.take(repo, previous=first)
    assert "src/planted.py" not in fooled.entries


def test_a_directory_changed_in_the_records_clock_tick_is_listed_again(repo: Path) -> None:
    """A name added in the same tick as the listing leaves the directory's times as recorded."""
    taken = Snapshot.take(repo)
    write(repo, "src/planted.py", "x = 1\n")
    src = repo / "src"
    now = src.stat()
    # The record's listing of src/ without the new name, under the times src/ has now: what a
    # listing taken just before the write, within the same tick of the clock, would hold.
    names = taken.listings["src/"][3]
    recent = _aged(taken, started_ns=now.st_ctime_ns)  # the record began at that moment
    recent.listings["src/"] = (now.st_mtime_ns, now.st_ctime_ns, now.st_ino, names)
    assert "src/planted.py" in Snapshot.take(repo, previous=recent).entries
    # Were the record trusted past its racy horizon, the name would be missed.
    old = _aged(taken)
    old.listings["src/"] = (now.st_mtime_ns, now.st_ctime_ns, now.st_ino, names)
    assert "src/planted.py" not in Snapshot.take(repo, previous=old).entries


def test_a_replaced_directory_is_listed_again(repo: Path) -> None:
    first = _aged(Snapshot.take(repo))
    (repo / "tests" / "test_app.py").rename(repo / "test_app.py")
    (repo / "tests").rmdir()
    write(repo, "tests/test_other.py", "def test_x():\n    assert False\n")
    again = Snapshot.take(repo, previous=first)
    assert "tests/test_other.py" in again.entries
    assert "test_app.py" in again.entries


def test_a_damaged_listing_is_no_record_and_a_version_1_record_is_still_read(repo: Path) -> None:
    snap = Snapshot.take(repo)
    fields = list(marshal.loads(snap.to_record()))
    for damaged in ({"src/": (1, 2, 3)}, {"src/": (1, 2, 3, None)}, ["src/"], {1: (1, 2, 3, "")}):
        fields[9] = damaged
        assert Snapshot.from_record(marshal.dumps(tuple(fields))) is None
    old = (fields[0], 1, *fields[2:9])  # version 1: the same fields, no listings
    back = Snapshot.from_record(marshal.dumps(old))
    assert back is not None
    assert back.entries == snap.entries
    assert back.listings == {}


def test_a_file_git_lists_is_seen_even_where_the_walk_misses_it(repo: Path) -> None:
    """The second net: an untracked file git lists is looked at whatever the listings say."""
    first = _aged(Snapshot.take(repo))
    src = repo / "src"
    write(repo, "src/planted.py", "x = 1\n")  # ignored by git: the walk alone can find it
    write(repo, "src/visible.py", "y = 2\n")  # not ignored: git lists it
    now = src.stat()
    names = first.listings["src/"][3]  # the names before the writes, under the times of now:
    first.listings["src/"] = (now.st_mtime_ns, now.st_ctime_ns, now.st_ino, names)
    fooled = Snapshot.take(repo, previous=first)  # a listing that (wrongly) still holds
    assert "src/planted.py" not in fooled.entries
    assert "src/visible.py" in fooled.entries
