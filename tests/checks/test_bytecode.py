"""The bytecode store: runs reuse donegate's compiles, and only while the source is unchanged.

Each test runs a real interpreter with a fresh ``PYTHONPYCACHEPREFIX``, as a ``test_run`` does.
"""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
from pathlib import Path

from donegate.checks._bytecode import BytecodeStore, store_for

FIXED = "def zip_code(text):\n    return '94107'\n"
BROKEN = "def zip_code(text):\n    return text[:]\n"


def run(lib: Path, prefix: Path) -> subprocess.CompletedProcess[str]:
    """Import ``billing`` from ``lib`` as a run would, bytecode under ``prefix``; -v says whence."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env |= {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONPATH": str(lib)}
    code = "import billing; print(billing.zip_code('x'))"
    return subprocess.run(
        [sys.executable, "-S", "-v", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )


def from_prefix(done: subprocess.CompletedProcess[str], prefix: Path) -> bool:
    """Did the run load ``billing`` from bytecode under ``prefix``?"""
    return any(
        "code object from" in line and str(prefix) in line and "billing" in line
        for line in done.stderr.splitlines()
    )


def learnt(tmp_path: Path, source: str) -> tuple[BytecodeStore, Path]:
    """A store that has seen one run import ``billing`` (holding ``source``)."""
    lib = tmp_path / "lib"
    lib.mkdir(exist_ok=True)
    (lib / "billing.py").write_text(source)
    store = store_for(tmp_path / "state", "a run")
    assert store is not None
    first = tmp_path / "first"
    assert run(lib, first).stdout == source_output(source)
    store.learn(first, frozenset(), [tmp_path / "project"])
    return store, lib


def source_output(source: str) -> str:
    return "94107\n" if source == FIXED else "x\n"


def test_a_later_run_uses_the_stored_compile(tmp_path: Path) -> None:
    store, lib = learnt(tmp_path, BROKEN)
    prefix = tmp_path / "second"
    placed = store.prefill(prefix)
    assert any(rel.endswith(".pyc") and "billing" in rel for rel in placed)
    done = run(lib, prefix)
    assert done.stdout == "x\n"
    assert from_prefix(done, prefix)


def test_a_source_changed_with_its_size_and_mtime_kept_is_compiled_anew(tmp_path: Path) -> None:
    store, lib = learnt(tmp_path, FIXED)
    source = lib / "billing.py"
    stamp = source.stat().st_mtime_ns
    assert len(FIXED) == len(BROKEN)
    source.write_text(BROKEN)
    os.utime(source, ns=(stamp, stamp))
    prefix = tmp_path / "second"
    assert not any("billing" in rel for rel in store.prefill(prefix))
    assert run(lib, prefix).stdout == "x\n"


def test_bytecode_the_run_left_in_its_prefix_is_never_stored(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "billing.py").write_text(BROKEN)
    first = tmp_path / "first"
    run(lib, first)
    # The code under test could write its prefix: a "fix" compiled in place of the real source.
    (pyc,) = [p for p in first.rglob("*.pyc") if "billing" in p.name]
    fake = tmp_path / "fake.py"
    fake.write_text(FIXED)
    py_compile.compile(str(fake), cfile=str(pyc), invalidation_mode=_unchecked())
    store = store_for(tmp_path / "state", "a run")
    assert store is not None
    store.learn(first, frozenset(), [])
    prefix = tmp_path / "second"
    store.prefill(prefix)
    assert run(lib, prefix).stdout == "x\n"


def test_paths_made_for_one_run_are_not_stored(tmp_path: Path) -> None:
    learnt(tmp_path, BROKEN)
    other = store_for(tmp_path / "state", "another run")
    assert other is not None
    first = tmp_path / "first"
    other.learn(first, frozenset(), [tmp_path / "lib"])
    assert not any("billing" in rel for rel in other.prefill(tmp_path / "second"))


def test_an_unusable_store_costs_only_time(tmp_path: Path) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("not a directory")
    store = store_for(blocker, "a run")
    assert store is not None
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "billing.py").write_text(BROKEN)
    first = tmp_path / "first"
    run(lib, first)
    store.learn(first, frozenset(), [])
    assert store.prefill(tmp_path / "second") == frozenset()
    assert run(lib, tmp_path / "second").stdout == "x\n"


def _unchecked() -> py_compile.PycInvalidationMode:
    # Used whatever the source holds: the strongest thing a run could leave behind.
    return py_compile.PycInvalidationMode.UNCHECKED_HASH
