"""The kept sealed copy: brought up to date with only what changed, and never holding other bytes.

Each test makes a real tree, seals it with ``keep=True``, changes the tree or the copy the way an
agent's later edit or the checks' own run would, seals again, and reads the copy back. The
attacks on the copy itself (a run that rewrites a file of the copy and sets its mtime back, a
manifest that vouches for bytes the copy does not hold) are played for real, and each test says
what would have been run without the defence.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from donegate.demo import project as demo
from donegate.demo.project import payload, run_hook
from donegate.ledger import Ledger, Receipt
from donegate.sealed import _bytecode, _kept, _watch
from donegate.sealed._copytree import remove
from donegate.sealed.copy import KEPT_PREFIX, SEALED_DIR, seal, sweep
from donegate.workspace import Snapshot
from tests.checks.test_sealed import BROKEN, FIXED, project, run_collect


def kept_places(state_dir: Path) -> list[Path]:
    return sorted((state_dir / SEALED_DIR).glob(f"{KEPT_PREFIX}*"))


def sealed_tree(live: Path, state_dir: Path) -> dict[str, tuple[bytes, int]]:
    """Seal ``live`` with the kept copy; each file of the copy with its bytes and inode."""
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        assert sealed.findings == []
        return {
            p.relative_to(sealed.root).as_posix(): (p.read_bytes(), p.stat().st_ino)
            for p in sealed.root.rglob("*")
            if p.is_file() and not p.is_symlink()
        }


def test_a_second_seal_copies_only_what_changed_and_holds_exactly_the_new_tree(
    tmp_path: Path,
) -> None:
    live = project(tmp_path / "live", BROKEN)
    for i in range(20):
        (live / "src" / f"other_{i}.py").write_text(f"X = {i}\n")
    state_dir = tmp_path / "state"
    first = sealed_tree(live, state_dir)
    (live / "src" / "calc.py").write_text(FIXED)
    (live / "src" / "other_3.py").unlink()
    (live / "src" / "new.py").write_text("NEW = 1\n")
    second = sealed_tree(live, state_dir)

    assert second["src/calc.py"][0] == FIXED.encode()
    assert "src/other_3.py" not in second
    assert second["src/new.py"][0] == b"NEW = 1\n"
    unchanged = [rel for rel in second if rel.startswith("src/other_")]
    assert len(unchanged) == 19
    # The files the change did not touch were kept, not copied again: the same inodes.
    assert all(second[rel][1] == first[rel][1] for rel in unchanged)
    assert len(kept_places(state_dir)) == 1


def test_what_a_run_wrote_in_the_copy_is_gone_at_the_next_seal(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    snapshot = Snapshot.take(live)
    with seal(snapshot, state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        # What the code under test may do to its copy: rewrite a source, add a module, make a
        # directory read-only, leave a directory the tree does not have.
        (sealed.root / "src" / "calc.py").write_text(BROKEN)
        (sealed.root / "src" / "planted.py").write_text("ANSWER = 5\n")
        (sealed.root / "build" / "lib").mkdir(parents=True)
        (sealed.root / "tests").chmod(0o500)
    after = sealed_tree(live, state_dir)
    assert after["src/calc.py"][0] == FIXED.encode()
    assert "src/planted.py" not in after
    assert not any(rel.startswith("build/") for rel in after)


def _rewrite_keeping_size_and_mtime(target: Path) -> None:
    """What a run may do to a file of its copy: plant other bytes of the same size, and put
    the mtime back. The ctime still moves: no unprivileged process can set it."""
    before = os.stat(target)
    time.sleep(0.02)
    planted = FIXED.replace("a + b", "a * b")
    assert len(planted) == len(FIXED)
    target.write_text(planted)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    moved = os.stat(target)
    assert (moved.st_size, moved.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert moved.st_ctime_ns != before.st_ctime_ns


@pytest.mark.parametrize("watched", [True, False], ids=["watched", "walked"])
@pytest.mark.parametrize("defended", [True, False], ids=["defended", "undefended"])
def test_a_copy_rewritten_with_its_size_and_mtime_set_back_is_copied_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watched: bool, defended: bool
) -> None:
    """A run rewrites a source of its copy, keeping the size and putting the mtime back. Where
    the run was watched, the kernel reported the write; where it was not (a run outside the
    checks' sandbox, no inotify), the walk finds the ctime moved. Either way the file is copied
    again. Undefended, the next run would test the planted bytes: a watch that reported
    nothing, or a walk that trusted size and mtime alone."""
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    # The first seal's clock runs ahead, so that its files are past the racy horizon and the
    # second seal trusts their stat without reading them: only the stat can catch the edit.
    monkeypatch.setattr(_kept, "_now", lambda: time.time_ns() + 10 * _kept.RACY_NS)
    if not watched:
        monkeypatch.setattr(_watch.Watch, "start", classmethod(lambda cls, root, dirs: None))
    if not defended:
        if watched:
            monkeypatch.setattr(
                _watch, "_seen", lambda data, dirs: _watch.Seen(frozenset(), frozenset())
            )
        else:
            monkeypatch.setattr(_kept, "_holds", lambda record, entry, st, manifest: True)
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        _rewrite_keeping_size_and_mtime(sealed.root / "src" / "calc.py")
    monkeypatch.setattr(_kept, "_now", time.time_ns)
    (place,) = kept_places(state_dir)
    assert (place / _kept.WATCHED).exists() == watched
    again = sealed_tree(live, state_dir)["src/calc.py"][0]
    assert again == (FIXED.encode() if defended else FIXED.replace("a + b", "a * b").encode())


def test_a_racily_clean_file_is_hashed_before_it_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change made within the file system clock's tick of the manifest's making could leave
    the stat as recorded: such a file is read again. Played by a manifest that records the
    planted file's stat (what a change inside the tick would look like)."""
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    sealed_tree(live, state_dir)
    (place,) = kept_places(state_dir)
    (place / _kept.WATCHED).unlink()  # the last runs were not watched: the copy is walked
    target = place / "tree" / "src" / "calc.py"
    target.write_text(FIXED.replace("a + b", "a * b"))
    form, horizon, files, *listed = marshal.loads((place / _kept.MANIFEST).read_bytes())
    st = os.stat(target)
    files["src/calc.py"] = _kept.kept(files["src/calc.py"][0], st)
    (place / _kept.MANIFEST).write_bytes(marshal.dumps((form, horizon, files, *listed)))
    assert sealed_tree(live, state_dir)["src/calc.py"][0] == FIXED.encode()


def test_a_manifest_that_cannot_be_read_trusts_no_file(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    first = sealed_tree(live, state_dir)
    (place,) = kept_places(state_dir)
    copied = {p: p.stat().st_ctime_ns for p in (place / "tree").rglob("*.py")}
    (place / _kept.MANIFEST).write_bytes(b"\x00 not a manifest")
    time.sleep(0.05)  # past the file system clock's tick: a file copied anew has a new ctime
    second = sealed_tree(live, state_dir)
    assert second.keys() == first.keys()
    assert all(p.stat().st_ctime_ns != ctime for p, ctime in copied.items())


def test_a_file_made_executable_is_copied_again_with_its_mode(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    script = live / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    state_dir = tmp_path / "state"
    sealed_tree(live, state_dir)
    script.chmod(0o755)
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        assert os.access(sealed.root / "run.sh", os.X_OK)


def test_a_link_put_in_place_of_a_directory_of_the_copy_is_replaced(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "calc.py").write_text(BROKEN)
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        copied_src = sealed.root / "src"  # what the run does
        for child in copied_src.iterdir():
            child.unlink()
        copied_src.rmdir()
        copied_src.symlink_to(elsewhere)
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        src = sealed.root / "src"
        assert src.is_dir()
        assert not src.is_symlink()
        assert (src / "calc.py").read_text() == FIXED
    assert (elsewhere / "calc.py").read_text() == BROKEN  # the link was removed, not followed


def test_a_second_seal_while_the_kept_copy_is_in_use_gets_a_fresh_one(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    snapshot = Snapshot.take(live)
    with seal(snapshot, state_dir=state_dir, site_dirs=(), keep=True) as outer:
        with seal(snapshot, state_dir=state_dir, site_dirs=(), keep=True) as inner:
            assert outer.root.parent.name.startswith(KEPT_PREFIX)
            assert not inner.root.parent.name.startswith(KEPT_PREFIX)
            assert (inner.root / "src" / "calc.py").read_text() == FIXED
        assert not inner.root.exists()
    assert outer.root.exists()  # kept for the next stop


def test_the_checks_on_a_kept_copy_follow_the_tree_from_stop_to_stop(tmp_path: Path) -> None:
    """Refuted, verified, refuted again: each run tests the tree as it is at its own seal. The
    runs write nothing to the copy, so each refresh after the first trusts the watch of the
    runs before it (see test_kept_watch) and reads no file of the copy."""
    live = project(tmp_path / "live", BROKEN)
    state_dir = tmp_path / "state"
    verdicts, watched = [], []
    for calc in (BROKEN, FIXED, BROKEN):
        (live / "src" / "calc.py").write_text(calc)
        with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
            verdicts.append(run_collect(live, sealed))
        watched.append((kept_places(state_dir)[0] / _kept.WATCHED).is_file())
    assert verdicts == ["refuted", "verified", "refuted"]
    assert watched == [True, True, True]


def test_a_kept_copy_is_swept_once_its_workspace_is_gone_or_long_unused(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    gone, stays = project(tmp_path / "gone", FIXED), project(tmp_path / "stays", FIXED)
    sealed_tree(gone, state_dir)
    sealed_tree(stays, state_dir)
    places = kept_places(state_dir)
    for child in gone.rglob("*"):
        if child.is_file():
            child.unlink()
    for child in sorted(gone.rglob("*"), reverse=True):
        child.rmdir()
    gone.rmdir()
    parent = state_dir / SEALED_DIR
    soon = time.time() + 120
    swept = sweep(parent, now=lambda: soon)
    assert len(swept) == 1
    assert swept[0] in places
    assert len(kept_places(state_dir)) == 1
    much_later = time.time() + 30 * 24 * 3600
    assert len(sweep(parent, now=lambda: much_later)) == 1
    assert kept_places(state_dir) == []


# --- through the real hook ---------------------------------------------------------------------


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A state directory out of /tmp, which Claude Code's sandbox lets commands write (a state
    directory there would make every agent unconfined)."""
    place = Path(tempfile.mkdtemp(prefix="donegate-test-", dir="/var/tmp"))
    yield place / "state"
    remove(place)


def gated_repo(tmp_path: Path, state_dir: Path, *, confined: bool) -> Path:
    """The demo project; with ``confined``, Claude Code's sandbox configured as init does."""
    repo = demo.create(tmp_path / "repo")
    if confined:
        env = {**os.environ, "DONEGATE_STATE_DIR": str(state_dir)}
        init = [sys.executable, "-m", "donegate", "init", "claude-code"]
        subprocess.run(init, cwd=repo, env=env, check=True, capture_output=True)
        demo.git(repo, "add", "-A")
        demo.git(repo, "commit", "-qm", "gate")
    return repo


def stop_verdict(repo: Path, state_dir: Path, fix: str) -> str | None:
    (repo / "zipcode.py").write_text(fix)
    run_hook(payload("Stop", "kept-1", repo, last_assistant_message="Fixed."), state_dir)
    with Ledger(state_dir) as ledger:
        receipt: Receipt = ledger.recent(1)[0]
    print(receipt.verdict, receipt.reason, json.dumps(receipt.claim.get("evidence"))[-1500:])
    assert receipt.decision_doc["confinement"]["confined"] is (kept_places(state_dir) != []), (
        receipt.decision_doc["confinement"]
    )
    return receipt.verdict


@pytest.mark.parametrize("confined", [True, False], ids=["confined", "unconfined"])
def test_a_confined_agent_s_stops_keep_the_copy_and_each_judges_its_own_tree(
    tmp_path: Path, outside_tmp: Path, confined: bool
) -> None:
    """Wrong, right, wrong again: each stop's checks see that stop's tree. Only a confined
    agent's stops keep the copy (an unconfined one could write it between stops)."""
    state_dir = outside_tmp
    repo = gated_repo(tmp_path, state_dir, confined=confined)
    run_hook(payload("SessionStart", "kept-1", repo, source="startup"), state_dir)
    wrong = demo.FIXED.replace("return", "return 'x' or", 1)
    verdicts = [stop_verdict(repo, state_dir, fix) for fix in (wrong, demo.FIXED, wrong)]
    assert verdicts == ["refuted", "verified", "refuted"]
    assert (kept_places(state_dir) != []) is confined


def learned(state_dir: Path) -> str:
    """Every source the bytecode store keeps donegate's compile of, one per line."""
    return "\n".join(p.read_text() for p in (state_dir / "bytecode").glob("*/prefixes/*.list"))


def test_the_code_of_a_kept_copy_keeps_its_bytecode_from_run_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh copy has a new path at every run, so its compiles are never kept; a kept copy
    is at the same path next time, and its modules' compiles are learned like a library's."""
    # The store learns within a budget, in path order: on a machine where the libraries' paths
    # sort first, a first run's budget ends before the copy's. Time enough to learn them all.
    monkeypatch.setattr(_bytecode, "MIN_LEARN_S", 120.0)
    live = project(tmp_path / "live", FIXED)
    fresh, kept = tmp_path / "fresh", tmp_path / "kept"
    for state_dir, keep in ((fresh, False), (kept, True)):
        for _ in range(2):
            with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=keep) as sealed:
                assert run_collect(live, sealed) == "verified"
    assert "src/calc.cpython" not in learned(fresh)
    assert f"{KEPT_PREFIX}" in learned(kept)
    assert "tree/src/calc.cpython" in learned(kept)
