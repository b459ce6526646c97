"""The watch of a kept copy's runs: what it lets the next refresh trust, and what it refuses to.

A refresh that a watch vouches for reads no file of the copy: it trusts the manifest for all but
what the watch saw written or made. So each way a run could change the copy without the watch
naming the file is played for real (from a sandboxed pytest run, or from this process inside the
seal, which the kernel reports alike), and each test first shows, with the defence taken out,
that the next run would have tested the planted bytes.
"""

from __future__ import annotations

import json
import marshal
import mmap
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from donegate.collect import collect
from donegate.sealed import _isolation, _kept, _watch, _witness
from donegate.sealed._copytree import remove
from donegate.sealed.copy import KEPT_PREFIX, SEALED_DIR, seal
from donegate.workspace import Snapshot
from tests.checks.support import claim_with, config_from, state
from tests.checks.test_sealed import FIXED, project, pytest_check

PLANTED = FIXED.replace("a + b", "a * b")  # the same size: only the bytes differ


def kept_place(state_dir: Path) -> Path:
    (place,) = (state_dir / SEALED_DIR).glob(f"{KEPT_PREFIX}*")
    return place


def reseal(live: Path, state_dir: Path) -> bytes:
    """The bytes of ``src/calc.py`` in the kept copy after the next refresh."""
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        assert sealed.findings == []
        return (sealed.root / "src" / "calc.py").read_bytes()


def plant_in_place(target: Path) -> None:
    """Other bytes of the same size, the mtime put back: what a stat of size and mtime misses."""
    before = os.stat(target)
    target.write_text(PLANTED)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))


def undefended(monkeypatch: pytest.MonkeyPatch) -> None:
    """A watch that takes every event at face value: the write events name the file written to
    by whatever name it was opened by, and nothing else makes it refuse to vouch."""
    monkeypatch.setattr(_watch, "_FOLLOWED", 0xFFFFFFFF)
    monkeypatch.setattr(_watch, "_fresh", lambda root, made: True)
    # A directory made is then a name made like another: removed whole at the next refresh.
    monkeypatch.setattr(
        _kept, "_gone", lambda path: remove(path) if path.is_dir() else path.unlink(missing_ok=True)
    )


needs_sandbox = pytest.mark.skipif(
    _isolation.wrap(["true"], _isolation.Isolation(), [], [], os.environ, Path.cwd()).by is None,
    reason="the checks' sandbox (bubblewrap) cannot be made here",
)


def test_after_runs_that_wrote_nothing_the_next_refresh_reads_no_file_of_the_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = project(tmp_path / "live", FIXED)
    for i in range(5):
        (live / "src" / f"other_{i}.py").write_text(f"X = {i}\n")
    state_dir = tmp_path / "state"
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        assert (
            state(
                collect(claim_with("src/calc.py"), config_from(pytest_check(), live), sealed=sealed)
            )
            == "verified"
        )
        inodes = {p.name: p.stat().st_ino for p in (sealed.root / "src").iterdir()}
    assert (kept_place(state_dir) / _kept.WATCHED).is_file()

    def walked(*args: object) -> None:
        raise AssertionError("the copy was walked")

    monkeypatch.setattr(_kept, "prune", walked)
    (live / "src" / "other_0.py").write_text("X = 'changed'\n")
    (live / "src" / "other_1.py").unlink()
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        src = sealed.root / "src"
        assert sorted(p.name for p in src.iterdir()) == sorted(
            p.name for p in (live / "src").iterdir()
        )
        assert (src / "other_0.py").read_text() == "X = 'changed'\n"
        kept = ("calc.py", "other_2.py", "other_3.py", "other_4.py")
        assert all((src / n).stat().st_ino == inodes[n] for n in kept)  # not copied again


@needs_sandbox
@pytest.mark.parametrize("defended", [True, False], ids=["defended", "undefended"])
def test_a_sandboxed_run_that_rewrites_its_copy_in_place_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, defended: bool
) -> None:
    """The code under test, in the checks' sandbox, plants other bytes in a source of its copy
    for the next stop's run: the kernel reports the write through the sandbox's mount."""
    live = project(tmp_path / "live", FIXED)
    (live / "tests" / "test_zz_plant.py").write_text(
        "import os, pathlib, calc\n\n"
        "def test_plant():\n"
        "    target = pathlib.Path(calc.__file__)\n"
        "    before = target.stat()\n"
        f"    target.write_text({PLANTED!r})\n"
        "    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))\n"
    )
    if not defended:
        monkeypatch.setattr(
            _watch, "_seen", lambda data, dirs: _watch.Seen(frozenset(), frozenset())
        )
    state_dir = tmp_path / "state"
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        config = config_from(pytest_check(), live)
        assert state(collect(claim_with("src/calc.py"), config, sealed=sealed)) == "verified"
        assert (sealed.root / "src" / "calc.py").read_text() == PLANTED  # the run did plant it
    assert (kept_place(state_dir) / _kept.WATCHED).is_file()  # the watch vouched, naming it
    assert reseal(live, state_dir) == (FIXED if defended else PLANTED).encode()


def link_write_unlink(copy: Path) -> None:
    link = copy / "src" / "helper.py"
    os.link(copy / "src" / "calc.py", link)
    link.write_text(PLANTED)
    link.unlink()


def link_write_keep(copy: Path) -> None:
    link = copy / "src" / "helper.py"
    os.link(copy / "src" / "calc.py", link)
    link.write_text(PLANTED)


def link_in_a_new_directory(copy: Path) -> None:
    made = copy / "build"
    made.mkdir()
    os.link(copy / "src" / "calc.py", made / "calc.py")
    (made / "calc.py").write_text(PLANTED)
    (made / "calc.py").unlink()


def through_a_memory_map(copy: Path) -> None:
    fd = os.open(copy / "src" / "calc.py", os.O_RDWR)
    mapped = mmap.mmap(fd, len(FIXED))
    os.close(fd)  # the map holds the file open: the write-mode close comes with munmap
    mapped[:] = PLANTED.encode()
    mapped.close()


ATTACKS: dict[str, Callable[[Path], None]] = {
    "hard link made, written through, removed": link_write_unlink,
    "hard link made, written through, kept": link_write_keep,
    "hard link in a directory the run made": link_in_a_new_directory,
    "a write through a memory map": through_a_memory_map,
}


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("defended", [True, False], ids=["defended", "undefended"])
def test_a_write_by_another_name_or_a_map_still_gets_the_file_copied_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attack: str, defended: bool
) -> None:
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    if not defended:
        undefended(monkeypatch)
        if attack == "a write through a memory map":  # its one event, not watched
            monkeypatch.setattr(_watch, "_MASK", _watch._MASK & ~_watch._CLOSE_WRITE)
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        ATTACKS[attack](sealed.root)
        assert (sealed.root / "src" / "calc.py").read_text() == PLANTED
    assert reseal(live, state_dir) == (FIXED if defended else PLANTED).encode()


WRITER = """
import os, sys, time
target, go = sys.argv[1], sys.argv[2]
give_up = time.monotonic() + 60  # a test that failed first never says go
while not os.path.exists(go):  # once the run and its watch are over
    if time.monotonic() > give_up:
        sys.exit(1)
    time.sleep(0.02)
before = os.stat(target)
with open(target, "w") as f:
    f.write(sys.argv[3])
os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
"""


@pytest.mark.parametrize("defended", [True, False], ids=["defended", "undefended"])
def test_a_process_an_unsandboxed_run_left_behind_cannot_plant_in_the_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, defended: bool
) -> None:
    """A run outside the checks' sandbox (``isolation = "off"``, or a machine without one)
    starts a process of its own session that writes to the copy once the run, and the watch,
    are over. No watch vouches for a copy such a run was started in: the next refresh walks it
    and finds the ctime moved."""
    live = project(tmp_path / "live", FIXED)
    writer, go = tmp_path / "writer.py", tmp_path / "go"
    writer.write_text(WRITER)
    (live / "tests" / "test_zz_leave.py").write_text(
        "import pathlib, subprocess, sys, calc\n\n"
        "def test_leave_a_writer():\n"
        f"    argv = [sys.executable, {str(writer)!r}, calc.__file__, {str(go)!r}, {PLANTED!r}]\n"
        "    subprocess.Popen(argv, start_new_session=True)\n"
    )
    if not defended:
        monkeypatch.setattr(_watch, "note_unisolated", lambda run_dir: None)
    monkeypatch.setattr(_watch, "_unisolated", set())
    state_dir = tmp_path / "state"
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        config = config_from(pytest_check() + 'isolation = "off"\n', live)
        assert state(collect(claim_with("src/calc.py"), config, sealed=sealed)) == "verified"
        target = sealed.root / "src" / "calc.py"
    go.touch()
    deadline = time.monotonic() + 30
    while target.read_text() != PLANTED:  # the writer left behind does its work
        assert time.monotonic() < deadline, "the writer never wrote"
        time.sleep(0.05)
    assert (kept_place(state_dir) / _kept.WATCHED).is_file() == (not defended)
    assert reseal(live, state_dir) == (FIXED if defended else PLANTED).encode()


def test_a_name_the_run_made_is_gone_at_the_next_refresh_and_the_watch_still_vouches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module planted beside the sources (a ``conftest.py`` the tree does not have) is a name
    made: the watch names it, and the next refresh removes it without walking the copy."""
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        (sealed.root / "tests" / "conftest.py").write_text("import calc\ncalc.add = max\n")
    _token, _written, made = marshal.loads((kept_place(state_dir) / _kept.WATCHED).read_bytes())
    assert made == ["tests/conftest.py"]
    monkeypatch.setattr(_kept, "prune", lambda *args: pytest.fail("the copy was walked"))
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        assert not (sealed.root / "tests" / "conftest.py").exists()


def test_a_watch_of_another_manifest_is_not_taken(tmp_path: Path) -> None:
    """The watch's record pairs with the manifest it was written for: one left by an older
    refresh (a refresh that died after writing its manifest) vouches for nothing."""
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True):
        pass
    place = kept_place(state_dir)
    old = (place / _kept.WATCHED).read_bytes()
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True):
        pass
    (place / _kept.WATCHED).write_bytes(old)
    assert _kept.take_manifest(place).watched is None


@pytest.mark.parametrize("moved", [True, False], ids=["cache-moved", "cache-in-the-tree"])
def test_pytest_s_own_cache_makes_no_directory_in_the_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moved: bool
) -> None:
    """``python -m pytest`` as ``donegate init`` writes it, the cache provider on: pytest makes
    ``.pytest_cache`` in the tree at every run, a directory made, which leaves the watch unable
    to vouch. The witness puts the cache in the run's scratch directory instead; the ``cache``
    fixture still works within the run."""
    live = project(tmp_path / "live", FIXED)
    (live / "tests" / "test_cache.py").write_text(
        "def test_cache(request):\n"
        "    request.config.cache.set('donegate/probe', 5)\n"
        "    assert request.config.cache.get('donegate/probe', None) == 5\n"
    )
    if not moved:
        settings = _witness.WitnessSetup.settings

        def unmoved(self: _witness.WitnessSetup, *args: Any, **kwargs: Any) -> str:
            given = json.loads(settings(self, *args, **kwargs))
            return json.dumps({k: v for k, v in given.items() if k != "cache_dir"})

        monkeypatch.setattr(_witness.WitnessSetup, "settings", unmoved)
    command = [sys.executable, "-m", "pytest", "-q"]
    check = f'[[checks]]\ncheck_type = "test_run"\ncommand = {json.dumps(command)}\n'
    state_dir = tmp_path / "state"
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        config = config_from(check, live)
        assert state(collect(claim_with("src/calc.py"), config, sealed=sealed)) == "verified"
        assert (sealed.root / ".pytest_cache").exists() == (not moved)
    assert (kept_place(state_dir) / _kept.WATCHED).is_file() == moved


def test_a_file_that_did_not_match_when_copied_is_gone_at_the_next_refresh(
    tmp_path: Path,
) -> None:
    """A file changed between the snapshot and its copy is a finding, and its bytes stay in
    the copy unrecorded: no watch vouches for that copy, so the next refresh walks it, removes
    them, and copies the file anew. Were it trusted, the copy would keep the stray file and
    every later refresh would fail to copy over it."""
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    snapshot = Snapshot.take(live)
    (live / "src" / "calc.py").write_text(PLANTED)  # after the hashing, before the copy
    with seal(snapshot, state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        assert any("src/calc.py" in finding for finding in sealed.findings)
    vouched = (kept_place(state_dir) / _kept.WATCHED).exists()
    assert reseal(live, state_dir) == PLANTED.encode()
    assert not vouched
