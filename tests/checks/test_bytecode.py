"""The bytecode store: runs reuse donegate's compiles, and only while the source is unchanged.

Each test runs a real interpreter with the prefix that a ``test_run`` would give it.
"""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.checks import _bytecode
from donegate.checks._bytecode import run_prefix

FIXED = "def zip_code(text):\n    return '94107'\n"
BROKEN = "def zip_code(text):\n    return text[:]\n"
KEY = "python -m pytest"


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
    lib.mkdir(exist_ok=True)
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


def test_a_source_changed_with_its_size_and_mtime_kept_is_compiled_anew(tmp_path: Path) -> None:
    lib = library(tmp_path, FIXED)
    _, out = one_run(tmp_path, lib)
    assert out == "94107\n"
    source = lib / "billing.py"
    stamp = source.stat().st_mtime_ns
    assert len(FIXED) == len(BROKEN)
    source.write_text(BROKEN)
    os.utime(source, ns=(stamp, stamp))
    with run_prefix(tmp_path / "state", KEY, tmp_path / "fresh", []) as again:
        assert not list(again.rglob("billing*"))
        assert run(lib, again).stdout == "x\n"


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
