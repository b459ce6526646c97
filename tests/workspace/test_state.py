"""A session's workspace state: baselines, the verified snapshot, the journal."""

from __future__ import annotations

import marshal
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from donegate.errors import InvalidInput
from donegate.workspace import WorkspaceState, workspace_id
from donegate.workspace import snapshot as snapshot_module
from tests.workspace.conftest import APP, compiled, git, spy_reads, write


def _kinds(state: WorkspaceState) -> list[tuple[str, str]]:
    return [(c.write.path, c.kind) for c in state.classified_since_verified()]


def test_session_without_baseline_counts_from_head(repo: Path, state_dir: Path) -> None:
    write(repo, "src/app.py", APP.replace("a + b", "a - b"))
    write(repo, "src/new.py", "x = 1\n")
    state = WorkspaceState(state_dir, repo, "s1")
    assert state.baseline().origin == "head"
    assert _kinds(state) == [("src/app.py", "source"), ("src/new.py", "source")]


def test_head_baseline_stays_pinned_when_the_agent_commits(repo: Path, state_dir: Path) -> None:
    state = WorkspaceState(state_dir, repo, "s1")
    state.baseline()
    write(repo, "src/app.py", APP.replace("a + b", "a - b"))
    git(repo, "commit", "-q", "-am", "hide it")
    assert [w.path for w in state.writes_since_verified()] == ["src/app.py"]


def test_cosmetic_edit_against_head_uses_gits_old_text(repo: Path, state_dir: Path) -> None:
    write(repo, "src/app.py", APP.replace("return a + b", "return a + b  # sum"))
    assert _kinds(WorkspaceState(state_dir, repo, "s1")) == [("src/app.py", "cosmetic")]


def test_explicit_baseline_counts_only_later_writes(repo: Path, state_dir: Path) -> None:
    write(repo, "src/before.py", "x = 1\n")
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    write(repo, "src/after.py", "y = 2\n")
    assert [w.path for w in state.writes_since_verified()] == ["src/after.py"]


def test_cosmetic_write_after_verified_does_not_reopen_but_source_does(
    repo: Path, state_dir: Path
) -> None:
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    write(repo, "src/app.py", APP.replace("a + b", "b + a"))
    assert [c.needs_verifying for c in state.classified_since_verified()] == [True]
    state.mark_verified(state.snapshot())
    assert state.classified_since_verified() == []

    write(repo, "src/app.py", APP.replace("a + b", "b + a  # commutes"))
    write(repo, "NOTES.md", "thoughts\n")
    pending = state.classified_since_verified()
    assert [(c.write.path, c.kind) for c in pending] == [
        ("NOTES.md", "doc"),
        ("src/app.py", "cosmetic"),
    ]
    assert not any(c.needs_verifying for c in pending)

    write(repo, "src/app.py", APP.replace("a + b", "b * a"))
    assert [c.needs_verifying for c in state.classified_since_verified()] == [False, True]


def test_cosmetic_edit_of_an_untracked_file_uses_the_blob_store(
    repo: Path, state_dir: Path
) -> None:
    write(repo, "src/fresh.py", "def f():\n    return 1\n")
    state = WorkspaceState(state_dir, repo, "s1")
    state.mark_verified(state.snapshot())
    write(repo, "src/fresh.py", "def f():\n    # one\n    return 1\n")
    assert _kinds(state) == [("src/fresh.py", "cosmetic")]


def test_check_byproducts_do_not_reopen_verification(repo: Path, state_dir: Path) -> None:
    state = WorkspaceState(state_dir, repo, "s1")
    state.mark_verified(state.snapshot())
    compiled(repo, "src/app.py")
    compiled(repo, "tests/test_app.py", "test_app.cpython-311-pytest-8.2.0.pyc")
    write(repo, ".pytest_cache/v/cache/nodeids", "[]")
    write(repo, ".coverage", "data")
    assert state.writes_since_verified() == []


def test_a_new_conftest_is_a_flagged_test_write(repo: Path, state_dir: Path) -> None:
    state = WorkspaceState(state_dir, repo, "s1")
    state.mark_verified(state.snapshot())
    write(
        repo, "tests/conftest.py", "def pytest_collection_modifyitems(items):\n    items.clear()\n"
    )
    (classified,) = state.classified_since_verified()
    assert (classified.kind, classified.flags) == ("test", ("test-hook",))


def test_non_git_directory_without_baseline_counts_every_file(
    tmp_path: Path, state_dir: Path
) -> None:
    root = tmp_path / "plain"
    write(root, "main.py", "print('hi')\n")
    state = WorkspaceState(state_dir, root, "s1")
    assert state.baseline().origin == "empty"
    assert [(w.path, w.change) for w in state.writes_since_verified()] == [("main.py", "added")]


def test_non_git_directory_with_baseline(tmp_path: Path, state_dir: Path) -> None:
    root = tmp_path / "plain"
    write(root, "main.py", "print('hi')\n")
    state = WorkspaceState(state_dir, root, "s1")
    state.take_baseline()
    write(root, "main.py", "print('hi')  # greet\n")
    assert _kinds(state) == [("main.py", "cosmetic")]


def test_state_dir_inside_the_workspace_is_not_a_write(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root, "main.py", "x = 1\n")
    state = WorkspaceState(root / "state-here", root, "s1")
    state.take_baseline()
    state.mark_verified(state.snapshot())
    assert state.writes_since_verified() == []


def test_sessions_are_separate(repo: Path, state_dir: Path) -> None:
    first = WorkspaceState(state_dir, repo, "s1")
    first.take_baseline()
    write(repo, "src/new.py", "x = 1\n")
    second = WorkspaceState(state_dir, repo, "../odd id/")
    second.take_baseline()
    assert [w.path for w in first.writes_since_verified()] == ["src/new.py"]
    assert second.writes_since_verified() == []
    assert workspace_id(repo) == workspace_id(repo / "src" / "..")


def test_a_racily_clean_file_is_read_again_once_not_at_every_stop(
    repo: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_module, "_RACY_NS", 50_000_000)
    state = WorkspaceState(state_dir, repo, "s1")
    write(repo, "src/fresh.py", "x = 1\n")
    state.snapshot()  # fresh.py changed too close to this snapshot to trust its stat next time
    read = spy_reads(monkeypatch)
    time.sleep(0.1)
    state.snapshot()
    assert "fresh.py" in read  # read again: same content, and now a record to trust
    read.clear()
    state.snapshot()
    assert read == []


def test_a_file_still_racily_clean_does_not_rewrite_the_record_at_every_stop(
    repo: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = WorkspaceState(state_dir, repo, "s1")
    write(repo, "src/fresh.py", "x = 1\n")
    state.snapshot()
    (record,) = state_dir.glob("workspaces/*/latest.snap")
    before = record.stat().st_ino  # a rewrite replaces the file
    read = spy_reads(monkeypatch)
    state.snapshot()
    assert "fresh.py" in read  # too fresh to trust its stat: read again, as it must be
    assert record.stat().st_ino == before  # and nothing gained by saving the same record


_ENTRY = ("x", 1)  # a stat record entry of two fields instead of six


@pytest.mark.parametrize(
    "damage",
    [
        None,
        b"",
        b"not marshal at all",
        marshal.dumps(("donegate-stat-record", 99, "/", "", 0, "git", "sha1", {})),
        marshal.dumps(("donegate-stat-record", 1, "/", "", 0, "git", "sha1", {"a.py": _ENTRY})),
    ],
    ids=["truncated", "empty", "garbage", "another-version", "short-entry"],
)
def test_a_damaged_stat_record_is_no_record_every_file_is_read_again(
    repo: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch, damage: bytes | None
) -> None:
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    (record,) = state_dir.glob("workspaces/*/latest.snap")
    whole = record.read_bytes()
    record.write_bytes(whole[: len(whole) // 2] if damage is None else damage)
    assert state.last_observed() is None
    read = spy_reads(monkeypatch)
    write(repo, "src/app.py", APP.replace("a + b", "b + a"))
    current = state.snapshot()
    assert sorted(read) == sorted(Path(p).name for p in current.entries)
    assert [w.path for w in state.writes_since_verified(current)] == ["src/app.py"]


def test_the_stat_record_of_an_earlier_donegate_is_still_read(
    repo: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = WorkspaceState(state_dir, repo, "s1")
    first = state.snapshot()
    (record,) = state_dir.glob("workspaces/*/latest.snap")
    record.unlink()
    (record.parent / "latest.json").write_text(first.dumps())
    assert state.last_observed() == first
    monkeypatch.setattr(snapshot_module, "_RACY_NS", 0)
    read = spy_reads(monkeypatch)
    assert state.snapshot().entries == first.entries
    assert read == []
    assert record.exists()  # written in the new form from then on


def test_corrupt_state_file_is_an_error(repo: Path, state_dir: Path) -> None:
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    (baseline,) = state_dir.glob("workspaces/*/sessions/s1/baseline.json")
    baseline.write_text("{not json")
    with pytest.raises(InvalidInput, match="cannot read workspace state"):
        state.baseline()


def test_a_snapshot_read_back_twice_is_parsed_once_until_it_is_rewritten(
    repo: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    parsed: list[object] = []
    real_json, real_record = (
        snapshot_module.Snapshot.from_json,
        snapshot_module.Snapshot.from_record,
    )

    def counted(data: object) -> snapshot_module.Snapshot:
        parsed.append(data)
        return real_json(data)

    def counted_record(data: bytes) -> snapshot_module.Snapshot | None:
        parsed.append(data)
        return real_record(data)

    monkeypatch.setattr(snapshot_module.Snapshot, "from_json", counted)
    monkeypatch.setattr(snapshot_module.Snapshot, "from_record", counted_record)
    first = state.reference()
    assert state.reference() is first
    assert len(parsed) == 1
    write(repo, "src/new.py", "z = 3\n")
    state.mark_verified(state.snapshot())
    parsed.clear()  # the stat record of the tree, read back by the snapshot
    assert "src/new.py" in state.reference().entries
    assert state.reference() is state.reference()
    assert len(parsed) == 1


def test_a_verified_snapshot_an_earlier_donegate_wrote_as_json_is_read(
    repo: Path, state_dir: Path
) -> None:
    """Sessions outlive upgrades: a ``verified.json`` is still this session's reference, and
    the next verified stop replaces it with ``verified.snap``."""
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    write(repo, "src/new.py", "z = 3\n")
    snap = state.snapshot()
    session = next(state_dir.glob("workspaces/*/sessions/s1"))
    (session / "verified.json").write_text(snap.dumps())
    (session / "verified.fingerprint").write_text(snap.fingerprint)
    again = WorkspaceState(state_dir, repo, "s1")
    assert again.has_verified()
    assert again.verified() == snap
    assert again.writes_since_verified() == []
    marked = again.snapshot()
    again.mark_verified(marked)
    assert sorted(p.name for p in session.glob("verified.*")) == [
        "verified.fingerprint",
        "verified.snap",
    ]
    read = WorkspaceState(state_dir, repo, "s1").verified()
    assert read is not None
    assert (read.entries, read.fingerprint) == (marked.entries, marked.fingerprint)


def test_a_verified_json_newer_than_the_record_is_the_reference(
    repo: Path, state_dir: Path
) -> None:
    """An earlier donegate run after this one writes ``verified.json`` and leaves the record
    as it was: the record is then stale, and a file put back to its older content would not
    count as written against it."""
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    state.mark_verified(state.snapshot())  # the record: src/new.py absent
    write(repo, "src/new.py", "z = 3\n")
    later = state.snapshot()
    session = next(state_dir.glob("workspaces/*/sessions/s1"))
    time.sleep(0.01)
    (session / "verified.json").write_text(later.dumps())  # what the earlier donegate wrote
    (session / "verified.fingerprint").write_text(later.fingerprint)
    read = WorkspaceState(state_dir, repo, "s1").verified()
    assert read is not None
    assert "src/new.py" in read.entries


def test_a_damaged_verified_snapshot_is_an_error_not_an_empty_reference(
    repo: Path, state_dir: Path
) -> None:
    """Taken as no verified snapshot, the baseline would be the reference; taken as an empty
    one, every file would count as written. Neither is told: the stop fails, and says why."""
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    state.mark_verified(state.snapshot())
    session = next(state_dir.glob("workspaces/*/sessions/s1"))
    (session / "verified.snap").write_bytes(b"\x00 not a record")
    with pytest.raises(InvalidInput, match=r"verified\.snap"):
        WorkspaceState(state_dir, repo, "s1").verified()


def test_journal_keeps_reported_writes(repo: Path, state_dir: Path) -> None:
    state = WorkspaceState(state_dir, repo, "s1")
    early = datetime(2026, 1, 1, tzinfo=UTC)
    state.journal.record("Edit", path="src/app.py", at=early)
    state.journal.record("Bash", command="sed -i s/a/b/ src/app.py")
    with state.journal.path.open("a") as out:
        out.write("garbage\n")
    entries = state.journal.entries()
    assert [(e.tool, e.path, e.command) for e in entries] == [
        ("Edit", "src/app.py", None),
        ("Bash", None, "sed -i s/a/b/ src/app.py"),
    ]
    assert entries[0].at == early
    assert state.journal.entries(since=entries[1].at) == [entries[1]]
    assert not state.journal.path.is_relative_to(repo)


def test_workspace_in_a_subdirectory_of_the_repository(repo: Path, state_dir: Path) -> None:
    write(repo, "src/app.py", APP.replace("a + b", "a - b"))
    write(repo, "README.md", "# changed outside the workspace\n")
    state = WorkspaceState(state_dir, repo / "src", "s1")
    assert [(w.path, w.change) for w in state.writes_since_verified()] == [("app.py", "modified")]
