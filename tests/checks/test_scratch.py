"""A run's scratch space: private, unguessable, and gone afterwards, as tempfile makes it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from donegate.sealed import _scratch


def test_a_scratch_directory_is_private_new_and_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    first, second = _scratch.make_dir("donegate-run-"), _scratch.make_dir("donegate-run-")
    assert first != second
    assert first.parent == tmp_path
    assert first.name.startswith("donegate-run-")
    assert len(first.name) == len("donegate-run-") + 16
    assert stat.S_IMODE(first.stat().st_mode) == 0o700
    (first / "left" / "behind").mkdir(parents=True)
    _scratch.remove_dir(first)
    assert not first.exists()


def test_the_output_file_has_no_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with _scratch.anonymous_file() as out:
        out.write(b"the command's output")
        out.seek(0)
        assert out.read() == b"the command's output"
        assert os.listdir(tmp_path) == []  # nothing any other process could open by name
        assert stat.S_IMODE(os.fstat(out.fileno()).st_mode) == 0o600


def test_a_tmpdir_that_is_not_a_directory_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    monkeypatch.setenv("TEMP", str(tmp_path))
    assert _scratch.temp_root() == str(tmp_path)
