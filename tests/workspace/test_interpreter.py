"""The interpreter environment: a ``.pth``, a customize module or a changed package is a write."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.workspace import WorkspaceState
from donegate.workspace._hashes import sha256_hex
from donegate.workspace.interpreter import environments, site_packages


def make_venv(where: Path) -> Path:
    """A real virtual environment (no pip: nothing to download), its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    [site] = site_packages(where)
    return site


def kinds(state: WorkspaceState) -> list[tuple[str, str, str, tuple[str, ...]]]:
    return [
        (c.write.path, c.write.change, c.kind, c.flags) for c in state.classified_since_verified()
    ]


def test_a_pth_file_in_the_projects_venv_runs_code_and_is_a_write(
    repo: Path, state_dir: Path, tmp_path: Path
) -> None:
    site = make_venv(repo / ".venv")
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    marker = tmp_path / "pth-ran"
    (site / "zz_evil.pth").write_text(f"import pathlib; pathlib.Path({str(marker)!r}).touch()\n")
    # The attack's effect: every start of the venv's interpreter runs the agent's line.
    subprocess.run([str(repo / ".venv" / "bin" / "python"), "-c", "pass"], check=True)
    assert marker.exists()
    rel = site.relative_to(repo).as_posix()
    assert kinds(state) == [
        (
            f"<venv:{rel[: rel.index('/')]}>/" + rel.split("/", 1)[1] + "/zz_evil.pth",
            "added",
            "config",
            ("interpreter",),
        )
    ]


def test_sitecustomize_and_installed_distributions_outside_the_tree(
    repo: Path, state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = tmp_path / "elsewhere"
    site = make_venv(env)
    monkeypatch.setenv("VIRTUAL_ENV", str(env))
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    assert state.writes_since_verified() == []
    (site / "sitecustomize.py").write_text("import builtins\n")
    (site / "fake-1.0.dist-info").mkdir()
    changed = {
        (c.write.path.rsplit("/", 1)[1], c.write.change) for c in state.classified_since_verified()
    }
    assert changed == {("sitecustomize.py", "added"), ("fake-1.0.dist-info", "added")}
    assert all(p.startswith(f"<venv:{env}>/") for p, *_ in kinds(state))


def test_the_runner_package_edited_in_place_is_a_write(
    repo: Path, state_dir: Path, tmp_path: Path
) -> None:
    env = tmp_path / "runner-env"
    site = make_venv(env)
    (site / "_pytest").mkdir()
    (site / "_pytest" / "runner.py").write_text("def run(): return 'real'\n")
    # Named by the test command, not by VIRTUAL_ENV: the caller passes the interpreter.
    state = WorkspaceState(state_dir, repo, "s1", interpreters=[env / "bin" / "python"])
    assert env in environments(repo, [env / "bin" / "python"], env={})
    state.take_baseline()
    (site / "_pytest" / "runner.py").write_text("def run(): return 'pass'\n")
    [(path, change, kind, flags)] = kinds(state)
    assert (path.split("/site-packages/")[1], change, kind, flags) == (
        "_pytest/runner.py",
        "modified",
        "config",
        ("interpreter",),
    )


def test_an_unchanged_environment_is_no_write_and_verification_resets_it(
    repo: Path, state_dir: Path
) -> None:
    site = make_venv(repo / "venv")
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    assert state.writes_since_verified() == []
    (site / "extra.pth").write_text("\n")
    assert len(state.writes_since_verified()) == 1
    state.mark_verified(state.snapshot())
    assert state.writes_since_verified() == []


@pytest.mark.parametrize("data", [b"", b"home = /usr/bin\n", b"x" * 100_000])
def test_small_files_are_digested_by_sha256(data: bytes) -> None:
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
