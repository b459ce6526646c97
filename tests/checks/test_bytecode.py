"""The bytecode store: runs reuse donegate's compiles, and only while the source is unchanged.

Each test runs a real interpreter with the prefix that a ``test_run`` would give it.
"""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import pytest

from donegate.sealed import _bytecode
from donegate.sealed._bytecode import run_prefix
from tests.spying import names_read

FIXED = "def zip_code(text):\n    return '94107'\n"
BROKEN = "def zip_code(text):\n    return text[:]\n"
KEY = "python -m pytest"
LATER = 2**62  # a racy horizon after every change


def run(lib: Path, prefix: Path) -> subprocess.CompletedProcess[str]:
    """Import ``billing`` from ``lib`` as a run would, bytecode under ``prefix``; -v says whence."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env |= {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONPATH": str(lib)}
    code = "import billing; print(billing.zip_code('x'))"
    argv = [sys.executable, "-S", "-v", "-c", code]
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True)


def from_prefix(done: subprocess.CompletedProcess[str], prefix: Path) -> bool:
    """Did the run load ``billing`` from bytecode under ``prefix``?"""
    return any(
        "code object from" in line and str(prefix) in line and "billing" in line
        for line in done.stderr.splitlines()
    )


def library(tmp_path: Path, source: str) -> Path:
    lib = tmp_path / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    (lib / "billing.py").write_text(source)
    return lib


def one_run(tmp_path: Path, lib: Path) -> tuple[Path, str]:
    """A run under the store's prefix: the prefix and what the run printed."""
    fresh = tmp_path / "fresh"
    with run_prefix(tmp_path / "state", KEY, fresh, [tmp_path / "project"]) as prefix:
        assert prefix != fresh
        return prefix, run(lib, prefix).stdout


def billing_pyc(prefix: Path) -> Path:
    (pyc,) = [p for p in prefix.rglob("*.pyc") if "billing" in p.name]
    return pyc


def recorded_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs begin 10 s from now: the stats they record of what was written until now are past
    their racy horizon (as a source installed long before the run's)."""
    monkeypatch.setattr(_bytecode, "_now", lambda: time.time_ns() + 10 * 10**9)


def sources_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the sources the store reads (to hash or compile them) from now on."""
    return names_read(monkeypatch, _bytecode)


def manifest(prefix: Path) -> Path:
    return prefix.parent / f"{prefix.name}.list"


def rewrite_manifest(prefix: Path, edit: Callable[[list[str]], list[str]]) -> None:
    path = manifest(prefix)
    path.write_text("".join(line + "\n" for line in edit(path.read_text().splitlines())))


def test_a_later_run_uses_donegate_s_compile(tmp_path: Path) -> None:
    lib = library(tmp_path, BROKEN)
    prefix, out = one_run(tmp_path, lib)
    assert out == "x\n"
    # What the run compiled itself was replaced by donegate's, linked from the store.
    assert billing_pyc(prefix).stat().st_nlink == 2
    with run_prefix(tmp_path / "state", KEY, tmp_path / "fresh", []) as again:
        done = run(lib, again)
    assert again == prefix
    assert done.stdout == "x\n"
    assert from_prefix(done, prefix)


def test_an_unchanged_store_is_used_without_reading_a_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded_later(monkeypatch)
    lib = library(tmp_path, BROKEN)
    prefix, _ = one_run(tmp_path, lib)
    read = sources_read(monkeypatch)
    with run_prefix(tmp_path / "state", KEY, tmp_path / "fresh", []) as again:
        done = run(lib, again)
    assert read == []
    assert from_prefix(done, prefix)


def test_a_source_changed_with_its_size_and_mtime_kept_is_compiled_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent rewrites a library in place and puts its mtime back: its ctime still moved."""
    recorded_later(monkeypatch)  # the stat recorded is trusted while it holds
    lib = library(tmp_path, FIXED)
    _, out = one_run(tmp_path, lib)
    assert out == "94107\n"
    source = lib / "billing.py"
    stamp = source.stat().st_mtime_ns
    assert len(FIXED) == len(BROKEN)
    source.write_text(BROKEN)
    os.utime(source, ns=(stamp, stamp))
    read = sources_read(monkeypatch)
    with run_prefix(tmp_path / "state", KEY, tmp_path / "fresh", []) as again:
        assert read == ["billing.py"]
        assert not list(again.rglob("billing*"))
        assert run(lib, again).stdout == "x\n"


def test_a_write_just_after_a_source_is_read_is_not_vouched_for_by_its_stat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stat recorded is taken before the bytes are read: a write after the read moves the
    ctime past it (a stat taken after the read would vouch for bytes never hashed)."""
    recorded_later(monkeypatch)
    lib = library(tmp_path, FIXED)
    source = lib / "billing.py"

    class WrittenAfterRead:
        def __init__(self, handle: BinaryIO) -> None:
            self.handle = handle

        def __enter__(self) -> WrittenAfterRead:
            return self

        def __exit__(self, *_: object) -> None:
            self.handle.close()

        def fileno(self) -> int:
            return self.handle.fileno()

        def read(self) -> bytes:
            data = self.handle.read()
            if data == FIXED.encode():
                source.write_text(BROKEN)
            return data

    def opened(file: int, mode: str) -> WrittenAfterRead:
        assert mode == "rb"
        return WrittenAfterRead(open(file, "rb"))  # the wrapper closes it

    monkeypatch.setattr(_bytecode, "open", opened, raising=False)
    one_run(tmp_path, lib)  # the run imports FIXED; the store reads billing.py after it
    monkeypatch.delattr(_bytecode, "open")
    with run_prefix(tmp_path / "state", KEY, tmp_path / "fresh", []) as again:
        assert not list(again.rglob("billing*"))  # FIXED's compile, not BROKEN's: dropped


def test_a_source_recorded_within_a_tick_of_its_write_is_hashed_until_a_later_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = library(tmp_path, FIXED)
    one_run(tmp_path, lib)  # billing.py's stat, taken within two seconds of its write
    read = sources_read(monkeypatch)
    one_run(tmp_path, lib)
    assert read == ["billing.py"]
    recorded_later(monkeypatch)
    one_run(tmp_path, lib)  # hashed once more, and recorded past this run's horizon
    assert read == ["billing.py", "billing.py"]
    one_run(tmp_path, lib)
    assert read == ["billing.py", "billing.py"]


def changed_in_the_tick_of_its_recording(root: Path, trusted: bool) -> Path:
    """The prefix a run gets after billing.py changed in the clock tick in which its recording
    run took its stat: the manifest holds FIXED's digest under the times the file has now.

    The recording run began in that tick; ``trusted`` moves its horizon past every change.
    """
    lib = library(root, FIXED)
    prefix, _ = one_run(root, lib)
    source = lib / "billing.py"
    source.write_text(BROKEN)
    now = source.stat()
    stat = f"{now.st_size} {now.st_mtime_ns} {now.st_ctime_ns} {now.st_ino} {now.st_dev}"
    horizon = LATER if trusted else now.st_ctime_ns - _bytecode.RACY_NS

    def forged(lines: list[str]) -> list[str]:
        head = f"{lines[0].rpartition(' ')[0]} {horizon}"
        fields = [line.split(" ", 7) for line in lines[1:]]
        return [head] + [
            f"{f[0]} {f[1]} {stat} {f[7]}" if "billing" in f[7] else " ".join(f) for f in fields
        ]

    rewrite_manifest(prefix, forged)
    with run_prefix(root / "state", KEY, root / "fresh", []) as again:
        return again


def test_a_source_changed_in_the_clock_tick_of_its_recording_is_hashed_again(
    tmp_path: Path,
) -> None:
    again = changed_in_the_tick_of_its_recording(tmp_path / "racy", trusted=False)
    assert not list(again.rglob("billing*"))
    # Were the stat trusted within the racy horizon, the stale compile of FIXED would stay.
    stale = changed_in_the_tick_of_its_recording(tmp_path / "trusted", trusted=True)
    assert billing_pyc(stale).stat().st_nlink == 2


def format_1(lines: list[str]) -> list[str]:
    """The manifest as donegate wrote it before stats: ``digest inode rel``, no first line."""
    return [" ".join(line.split(" ", 7)[:2] + line.split(" ", 7)[7:]) for line in lines[1:]]


@pytest.mark.parametrize(
    "damage",
    [
        format_1,
        lambda lines: lines[1:],  # no first line
        lambda lines: [lines[0] + "x", *lines[1:]],  # a damaged horizon
        lambda lines: [lines[0].replace(" 2 ", " 3 "), *lines[1:]],  # a later format
    ],
    ids=["format-1", "no-first-line", "damaged-horizon", "unknown-format"],
)
def test_a_manifest_of_format_1_or_damaged_trusts_no_stat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: Callable[[list[str]], list[str]]
) -> None:
    recorded_later(monkeypatch)
    lib = library(tmp_path, FIXED)
    prefix, _ = one_run(tmp_path, lib)
    linked = sorted(pyc.name.partition(".")[0] + ".py" for pyc in prefix.rglob("*.pyc"))
    assert "billing.py" in linked
    rewrite_manifest(prefix, damage)
    read = sources_read(monkeypatch)
    with run_prefix(tmp_path / "state", KEY, tmp_path / "fresh", []) as again:
        assert sorted(read) == linked  # every source hashed, and its link kept
        assert billing_pyc(again).stat().st_nlink == 2
    assert manifest(prefix).read_text().startswith(_bytecode._MANIFEST_TAG)


def test_bytecode_the_run_wrote_is_never_kept(tmp_path: Path) -> None:
    lib = library(tmp_path, BROKEN)
    fake = tmp_path / "fake.py"
    fake.write_text(FIXED)
    with run_prefix(tmp_path / "state", KEY, tmp_path / "fresh", []) as prefix:
        run(lib, prefix)
        # The code under test can write its prefix: a "fix", used whatever the source holds.
        pyc = billing_pyc(prefix)
        py_compile.compile(str(fake), cfile=str(pyc), invalidation_mode=UNCHECKED)
        assert run(lib, prefix).stdout == "94107\n"  # control: the planted file works
    _, out = one_run(tmp_path, lib)
    assert out == "x\n"


def test_out_of_time_nothing_is_compiled_and_nothing_the_run_wrote_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bytecode, "MIN_LEARN_S", 0.0)
    monkeypatch.setattr(_bytecode, "LEARN_SHARE", 0.0)
    lib = library(tmp_path, BROKEN)
    prefix, out = one_run(tmp_path, lib)
    assert out == "x\n"
    assert not [p for p in prefix.rglob("*") if p.is_file()]


def test_a_link_planted_in_the_prefix_is_removed(tmp_path: Path) -> None:
    lib = library(tmp_path, BROKEN)
    prefix, _ = one_run(tmp_path, lib)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    pyc = billing_pyc(prefix)
    pyc.unlink()
    pyc.symlink_to(elsewhere / pyc.name)
    (prefix / "planted").symlink_to(elsewhere, target_is_directory=True)
    one_run(tmp_path, lib)
    assert not (prefix / "planted").is_symlink()
    assert not billing_pyc(prefix).is_symlink()


def test_sources_made_for_one_run_are_not_kept(tmp_path: Path) -> None:
    lib = library(tmp_path, BROKEN)
    with run_prefix(tmp_path / "state", KEY, tmp_path / "fresh", [lib]) as prefix:
        run(lib, prefix)
    assert not list(prefix.rglob("billing*"))


def test_a_fifo_in_a_source_s_place_is_never_opened_for_reading(tmp_path: Path) -> None:
    """Opening a FIFO that no process writes waits forever: before the run, or after it, the
    collect would hang with no receipt."""
    lib = library(tmp_path, FIXED)
    prefix, _ = one_run(tmp_path, lib)
    source = lib / "billing.py"
    source.unlink()
    os.mkfifo(source)
    with run_prefix(tmp_path / "state", KEY, tmp_path / "fresh", []) as again:  # hashed here
        assert not list(again.rglob("billing*"))
        source.unlink()
        source.write_text(FIXED)
        run(lib, again)  # compiles billing.py, whose bytecode the store then compiles anew
        source.unlink()
        os.mkfifo(source)
    assert not list(prefix.rglob("billing*"))


def test_a_prefix_in_use_or_an_unusable_store_gives_a_fresh_one(tmp_path: Path) -> None:
    lib = library(tmp_path, BROKEN)
    fresh = tmp_path / "fresh"
    with run_prefix(tmp_path / "state", KEY, fresh, []) as held:
        with run_prefix(tmp_path / "state", KEY, fresh, []) as other:
            assert other == fresh
        assert held != fresh
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with run_prefix(blocker, KEY, fresh, []) as prefix:
        assert prefix == fresh
        assert run(lib, prefix).stdout == "x\n"


UNCHECKED = py_compile.PycInvalidationMode.UNCHECKED_HASH


def import_module(folder: Path, name: str, prefix: Path) -> subprocess.CompletedProcess[str]:
    """Import ``name`` from ``folder`` as a run would, bytecode under ``prefix``; -v says whence."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env |= {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONPATH": str(folder)}
    argv = [sys.executable, "-S", "-v", "-c", f"import {name}; print({name}.zip_code('x'))"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True)


def written_for_a_run(tmp_path: Path, run: str, source: str) -> tuple[Path, Path]:
    """A module donegate writes for one run, under a name of that run: its scratch and path."""
    scratch = tmp_path / run
    scratch.mkdir()
    module = scratch / f"witness_{run}.py"
    module.write_text(source)
    return scratch, module


def test_a_module_written_anew_for_each_run_is_compiled_once_and_linked_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, fresh = tmp_path / "state", tmp_path / "fresh"
    scratch, module = written_for_a_run(tmp_path, "one", BROKEN)
    with run_prefix(state, KEY, fresh, [scratch], {module: "witness"}) as prefix:
        first = import_module(scratch, module.stem, prefix)
    assert first.stdout == "x\n"
    assert not from_prefix_of(first, prefix, module.stem)  # compiled by the run itself
    assert not list(prefix.rglob("witness_one*")), "what the run wrote is never kept"
    kept = list((state / TAG / "entries" / "written-by-donegate").iterdir())
    assert [p.name.rpartition("-")[0] for p in kept] == [f"witness.{TAG}.pyc"]
    # The next run writes the same bytes under another name: donegate's compile is linked.
    scratch, module = written_for_a_run(tmp_path, "two", BROKEN)
    read = sources_read(monkeypatch)
    with run_prefix(state, KEY, fresh, [scratch], {module: "witness"}) as again:
        second = import_module(scratch, module.stem, again)
    assert second.stdout == "x\n"
    assert from_prefix_of(second, again, module.stem)
    assert not list(again.rglob("witness_two*")), "the link goes with the run"
    assert read == [], "what the run loaded from donegate's link is not compiled again"


def test_a_module_with_other_bytes_is_never_served_the_kept_compile(tmp_path: Path) -> None:
    state, fresh = tmp_path / "state", tmp_path / "fresh"
    scratch, module = written_for_a_run(tmp_path, "one", BROKEN)
    with run_prefix(state, KEY, fresh, [scratch], {module: "witness"}) as prefix:
        import_module(scratch, module.stem, prefix)
    scratch, module = written_for_a_run(tmp_path, "two", FIXED)
    with run_prefix(state, KEY, fresh, [scratch], {module: "witness"}) as again:
        done = import_module(scratch, module.stem, again)
    assert done.stdout == "94107\n"
    assert not from_prefix_of(done, again, module.stem)


def from_prefix_of(done: subprocess.CompletedProcess[str], prefix: Path, name: str) -> bool:
    return any(
        "code object from" in line and str(prefix) in line and name in line
        for line in done.stderr.splitlines()
    )


TAG = sys.implementation.cache_tag


def modules(tmp_path: Path, count: int) -> tuple[Path, str]:
    """A library of ``count`` modules, and code that imports them all."""
    lib = library(tmp_path, FIXED)
    names = [f"m{i:02d}" for i in range(count)]
    for name in names:
        (lib / f"{name}.py").write_text(f"NAME = {name!r}\n")
    return lib, "; ".join(f"import {name}" for name in names)


def learned(prefix: Path) -> list[str]:
    return sorted(p.name.partition(".")[0] for p in prefix.rglob("m*.pyc") if p.stat().st_nlink > 1)


def run_importing(lib: Path, prefix: Path, code: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env |= {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONPATH": str(lib)}
    subprocess.run([sys.executable, "-S", "-c", code], env=env, check=True)


def test_a_loaded_machine_learns_what_a_quiet_one_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a loaded machine the clock runs while this process waits for a core: the budget is
    spent in CPU time, so the run's modules are all learned, as on a quiet machine (the clock's
    budget ran out a few modules in, and a fresh machine's test found ``json`` missing)."""
    lib, code = modules(tmp_path, 12)
    ticks = iter(range(0, 10**6, 5))  # five seconds of clock pass between two looks at it
    loaded = type("LoadedClock", (), {"monotonic": staticmethod(lambda: float(next(ticks)))})
    monkeypatch.setattr(_bytecode, "time", loaded)
    with run_prefix(tmp_path / "state", KEY, tmp_path / "fresh", []) as prefix:
        run_importing(lib, prefix, code)
    assert learned(prefix) == [f"m{i:02d}" for i in range(12)]


def test_a_short_budget_learns_the_same_modules_on_every_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of budget part way, the modules learned are the first by path, not the first the
    filesystem happens to list (its order differs from one machine to the next)."""
    lib, code = modules(tmp_path, 12)
    with run_prefix(tmp_path / "state", KEY, tmp_path / "fresh", []) as prefix:
        run_importing(lib, prefix, "pass")  # the interpreter's own start-up modules, learned
    spent = iter(range(10**6))  # a second of CPU per look: two looks fit a budget of 2.5 s
    monkeypatch.setattr(_bytecode, "_cpu", lambda: float(next(spent)))
    monkeypatch.setattr(_bytecode, "MIN_LEARN_S", 2.5)
    monkeypatch.setattr(_bytecode, "LEARN_SHARE", 0.0)
    with run_prefix(tmp_path / "state", KEY, tmp_path / "fresh", []) as prefix:
        run_importing(lib, prefix, code)
    assert learned(prefix) == ["m00", "m01"]
