"""Snapshots of real trees: which files count, digests, the hashing cache."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from donegate.workspace import Snapshot, diff
from donegate.workspace import snapshot as snapshot_module
from donegate.workspace.snapshot import blob_id
from tests.spying import names_read
from tests.workspace.conftest import compiled, git, write


def test_git_tree_lists_tracked_and_untracked_but_not_ignored(repo: Path) -> None:
    write(repo, "src/new.py", "x = 1\n")
    write(repo, "build/out.txt", "generated\n")
    write(repo, "run.log", "noise\n")
    snap = Snapshot.take(repo)
    assert snap.origin == "git"
    assert "src/new.py" in snap.entries
    assert "src/app.py" in snap.entries
    assert "build/out.txt" not in snap.entries
    assert "run.log" not in snap.entries


def test_digests_are_git_blob_ids(repo: Path) -> None:
    snap = Snapshot.take(repo)
    expected = git(repo, "rev-parse", "HEAD:src/app.py").strip()
    assert snap.entries["src/app.py"].digest == expected
    assert blob_id("sha1", (repo / "src/app.py").read_bytes()) == expected


def test_check_byproducts_are_not_listed_even_when_not_gitignored(repo: Path) -> None:
    compiled(repo, "src/app.py")
    write(repo, ".pytest_cache/v/cache/lastfailed", "{}")
    write(repo, "junit-report.xml", "<testsuite/>")
    paths = set(Snapshot.take(repo).entries)
    assert not any("__pycache__" in p or ".pytest_cache" in p or p.endswith(".pyc") for p in paths)
    assert "junit-report.xml" not in paths


def test_configured_ignores_are_left_out(repo: Path) -> None:
    write(repo, "out/report.html", "<html/>")
    assert "out/report.html" not in Snapshot.take(repo, ignore=["out/"]).entries


def test_plain_directory_is_walked(tmp_path: Path) -> None:
    write(tmp_path, "pkg/mod.py", "x = 1\n")
    write(tmp_path, ".venv/lib/site.py", "ignored\n")
    write(tmp_path, "node_modules/a/index.js", "ignored\n")
    write(tmp_path, ".git/config", "not a repo really\n")
    snap = Snapshot.take(tmp_path)
    assert snap.origin == "walk"
    assert set(snap.entries) == {"pkg/mod.py"}


def test_symlink_is_hashed_by_its_target_text(repo: Path) -> None:
    os.symlink("src/app.py", repo / "link.py")
    snap = Snapshot.take(repo)
    assert snap.entries["link.py"].digest == blob_id("sha1", b"src/app.py")


def test_warm_snapshot_reuses_unchanged_digests(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = Snapshot.take(repo)
    # Pretend the cold snapshot began long after the files were written (not racily clean).
    cold = Snapshot(cold.root, cold.taken_at, cold.origin, cold.algorithm, cold.entries, 2**62)
    read = names_read(monkeypatch, snapshot_module)
    write(repo, "src/app.py", "changed = True\n")
    warm = Snapshot.take(repo, previous=cold)
    assert read == ["app.py"]
    assert [w.path for w in diff(cold, warm)] == ["src/app.py"]


def test_racily_clean_files_are_read_again(repo: Path) -> None:
    first = Snapshot.take(repo)
    # Same size, and the mtime put back: only a re-read can tell.
    path = repo / "README.md"
    st = path.stat()
    path.write_text("# ppa\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert [w.path for w in diff(first, Snapshot.take(repo, previous=first))] == ["README.md"]


def test_restored_mtime_does_not_hide_an_edit_from_the_cache(repo: Path) -> None:
    first = Snapshot.take(repo)
    old = Snapshot(first.root, first.taken_at, first.origin, first.algorithm, first.entries, 2**62)
    path = repo / "README.md"
    st = path.stat()
    path.write_text("# ppa\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    # The ctime moved, and a process cannot put it back.
    assert [w.path for w in diff(old, Snapshot.take(repo, previous=old))] == ["README.md"]


def test_unreadable_file_is_a_write(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = Snapshot.take(repo)
    original = snapshot_module._read
    # Changed, so git no longer vouches for it from its index, and then unreadable.
    (repo / "src" / "app.py").write_text("changed = True\n")

    def deny(path: str, *args: Any) -> Any:
        if path.endswith("/src/app.py"):
            raise PermissionError(13, "Permission denied")
        return original(path, *args)

    monkeypatch.setattr(snapshot_module, "_read", deny)
    after = Snapshot.take(repo)
    assert after.entries["src/app.py"].digest.startswith("unreadable:")
    assert [(w.path, w.change) for w in diff(before, after)] == [("src/app.py", "modified")]


def test_json_round_trip(repo: Path) -> None:
    snap = Snapshot.take(repo)
    import json

    assert Snapshot.from_json(json.loads(snap.dumps())) == snap


def test_head_snapshot_matches_a_clean_tree(repo: Path) -> None:
    assert diff(Snapshot.from_head(repo), Snapshot.take(repo)) == []


def test_head_snapshot_of_a_repository_without_commits_is_empty(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    assert Snapshot.from_head(tmp_path).entries == {}


def test_git_vouches_only_for_files_it_would_notice_change(repo: Path) -> None:
    before = Snapshot.take(repo)
    git(repo, "update-index", "--assume-unchanged", "src/app.py")
    (repo / "src" / "app.py").write_text("hidden = True\n")
    after = Snapshot.take(repo, previous=before)
    assert [(w.path, w.change) for w in diff(before, after)] == [("src/app.py", "modified")]


def test_a_staged_edit_is_still_a_write(repo: Path) -> None:
    before = Snapshot.take(repo)
    (repo / "src" / "app.py").write_text("staged = True\n")
    git(repo, "add", "src/app.py")
    after = Snapshot.take(repo, previous=before)
    assert [(w.path, w.change) for w in diff(before, after)] == [("src/app.py", "modified")]


def test_an_unchanged_tree_keeps_the_fingerprint_an_edit_changes_it(repo: Path) -> None:
    first = Snapshot.take(repo)
    old = Snapshot(first.root, first.taken_at, first.origin, first.algorithm, first.entries, 2**62)
    warm = Snapshot.take(repo, previous=old)
    assert warm.fingerprint == old.fingerprint == warm._digest()
    path = repo / "README.md"
    st = path.stat()
    path.write_text("# ppa\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same mtime
    edited = Snapshot.take(repo, previous=old)
    assert edited.fingerprint == edited._digest() != old.fingerprint


def test_the_stat_record_round_trips_with_its_fingerprint(repo: Path) -> None:
    snap = Snapshot.take(repo)
    back = Snapshot.from_record(snap.to_record())
    assert back == snap
    assert back is not None
    assert back.fingerprint == snap._digest()


@pytest.mark.parametrize("tracked", [True, False], ids=["index", "empty-index"])
def test_a_sha256_repository_is_hashed_as_git_hashes_it(tmp_path: Path, tracked: bool) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "--object-format=sha256")
    write(root, "app.py", "x = 1\n")
    if tracked:
        git(root, "add", "app.py")
    snap = Snapshot.take(root)
    assert snap.origin == "git"
    assert snap.algorithm == "sha256"
    assert snap.entries["app.py"].digest == git(root, "hash-object", "app.py").strip()


def test_index_records_are_read_whole_and_nothing_else_is() -> None:
    from donegate.workspace._git import _index, blob_of

    oid = "a" * 40
    text = (
        f"100644 {oid} 0\tsrc/a\tb.py\0"  # a tab in a name
        f"160000 {'b' * 40} 0\tvendor/lib\0"  # a submodule
        f"100755 {'c' * 64} 2\tconflicted.sh\0"
        f"100644 {oid} 0\tnamed 160000 too.py\0"
    )
    tracked, submodules = _index(text)
    assert {path: blob_of(record) for path, record in tracked.items()} == {
        "src/a\tb.py": oid,
        "conflicted.sh": "c" * 64,
        "named 160000 too.py": oid,
    }
    assert submodules == ["vendor/lib"]
    # Without a tab in any name the text is split at once: the same records come out.
    untabbed, again = _index(text.split("\0", 1)[1])
    assert untabbed == {p: r for p, r in tracked.items() if "\t" not in p}
    assert again == ["vendor/lib"]
    assert _index("") == ({}, [])
