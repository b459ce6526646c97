"""An environment inside the workspace is digested file by file, with no cap, and a write there
that no installer made (its distribution's RECORD says otherwise) is told apart; a shim is
followed to its real interpreter."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.workspace import WorkspaceState
from donegate.workspace.interpreter import (
    Resolver,
    environments,
    not_installed,
    site_packages,
)


def make_venv(where: Path) -> Path:
    """A real virtual environment (no pip: nothing to download), its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    [site] = site_packages(where)
    return site


def install(
    site: Path, name: str, files: dict[str, str], scripts: dict[str, str] | None = None
) -> None:
    """``files`` (paths in ``site``) and ``scripts`` (in ``bin/``), recorded as pip records."""
    info = f"{name}-1.0.dist-info"
    rows = []
    programs = {f"../../../bin/{n}": t for n, t in (scripts or {}).items()}
    for rel, text in {**files, **programs}.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        raw = hashlib.sha256(text.encode()).digest()
        rows.append(f"{rel},sha256={base64.urlsafe_b64encode(raw).rstrip(b'=').decode()},0")
    (site / info).mkdir()
    (site / info / "RECORD").write_text("\n".join([*rows, f"{info}/RECORD,,"]) + "\n")


def writes(state: WorkspaceState) -> list[tuple[str, str]]:
    return [(w.path.split(">/", 1)[1], w.change) for w in state.writes_since_verified()]


def why(repo: Path, state: WorkspaceState) -> dict[str, str]:
    found = not_installed(repo, state.writes_since_verified())
    return {path.split(">/", 1)[1]: reason for path, reason in found.items()}


def test_a_package_past_five_thousand_files_edited_in_place_is_a_write_naming_the_file(
    repo: Path, state_dir: Path
) -> None:
    site = make_venv(repo / ".venv")
    for n in range(6000):
        (site / "_pytest" / f"d{n // 500}").mkdir(parents=True, exist_ok=True)
        (site / "_pytest" / f"d{n // 500}" / f"m{n}.py").write_text("x = 1\n")
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    (site / "_pytest" / "d11" / "m5999.py").write_text("x = 2\n")
    rel = "lib/" + site.relative_to(repo / ".venv" / "lib").as_posix()
    assert writes(state) == [(f"{rel}/_pytest/d11/m5999.py", "modified")]
    assert why(repo, state) == {
        f"{rel}/_pytest/d11/m5999.py": "changed in place, and no installed distribution's "
        "RECORD lists it"
    }


def test_an_installed_dependency_edited_in_place_is_no_installers(
    repo: Path, state_dir: Path
) -> None:
    site = make_venv(repo / ".venv")
    install(site, "dep", {"dep/__init__.py": "def f():\n    return 1\n"}, {"dep-cli": "#!py\n"})
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    (site / "dep" / "__init__.py").write_text("def f():\n    return 2\n")
    (repo / ".venv" / "bin" / "dep-cli").write_text("#!py\nexit\n")
    rel = "lib/" + site.relative_to(repo / ".venv" / "lib").as_posix()
    found = why(repo, state)
    assert sorted(found) == ["bin/dep-cli", f"{rel}/dep/__init__.py"]
    for path in found:
        assert found[path].startswith("its content is sha256=")
        assert f", where {rel}/dep-1.0.dist-info/RECORD lists sha256=" in found[path]


def test_bytecode_caches_are_not_digested(repo: Path, state_dir: Path) -> None:
    """A sealed run reads bytecode only from donegate's own prefix: a cache a run writes beside
    the sources changes nothing it imports."""
    site = make_venv(repo / ".venv")
    install(site, "dep", {"dep/__init__.py": "X = 1\n"})
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    subprocess.run([str(repo / ".venv/bin/python"), "-c", "import dep"], check=True, env=env)
    assert (site / "dep" / "__pycache__").is_dir()
    assert writes(state) == []


@pytest.mark.parametrize(
    ("act", "expected"),
    [
        ("restore", None),  # written again with the installed bytes: the install's own
        ("delete", "deleted, though"),
        ("rewrite-record", "an installed distribution's RECORD rewritten in place"),
        ("add-pth", "run at every start of the interpreter"),
        ("add-module", None),  # added beside a package, unrecorded: left to the checks
    ],
)
def test_what_no_installer_did(repo: Path, state_dir: Path, act: str, expected: str | None) -> None:
    site = make_venv(repo / ".venv")
    install(site, "dep", {"dep/__init__.py": "X = 1\n"})
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    record = site / "dep-1.0.dist-info" / "RECORD"
    target = {
        "restore": site / "dep" / "__init__.py",
        "delete": site / "dep" / "__init__.py",
        "rewrite-record": record,
        "add-pth": site / "zz.pth",
        "add-module": site / "dep" / "extra.py",
    }[act]
    if act == "restore":
        target.unlink()
        target.write_text("X = 1\n")
    elif act == "delete":
        target.unlink()
    elif act == "rewrite-record":
        target.write_text(target.read_text() + "dep/extra.py,,\n")
    else:
        target.write_text("import os\n")
    key = target.relative_to(repo / ".venv").as_posix()
    assert key in [p for p, _ in writes(state)]
    found = why(repo, state).get(key)
    assert (found is None) if expected is None else (found or "").startswith(expected)


def test_an_honest_install_into_the_projects_venv_is_an_installers(
    repo: Path, state_dir: Path
) -> None:
    site = make_venv(repo / ".venv")
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    install(site, "fresh", {"fresh/__init__.py": "A = 1\n", "fresh.pth": "/nowhere\n"})
    assert len(writes(state)) == 3
    assert why(repo, state) == {}


def test_any_venv_of_the_root_is_found_and_digested_in_full(repo: Path) -> None:
    site = make_venv(repo / "env311")
    assert environments(repo, env={}) == [repo / "env311"]
    assert (site / "pip").exists() is False  # nothing to download


def write_shim(where: Path, body: str) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    shim = where / "python"
    shim.write_text(f"#!/bin/sh\n{body}\n")
    shim.chmod(0o755)
    return shim


def test_a_shim_is_followed_to_the_real_environment(tmp_path: Path, repo: Path) -> None:
    real = tmp_path / "versions" / "3.11"
    make_venv(real)
    shim = write_shim(tmp_path / "shims", f'exec {real}/bin/python "$@"')
    resolver = Resolver(repo)
    assert environments(repo, [shim], env={}, resolver=resolver) == [real]
    assert resolver.unresolved == []


def test_a_console_script_is_followed_by_its_shebang(tmp_path: Path, repo: Path) -> None:
    real = tmp_path / "pipx" / "venvs" / "tool"
    make_venv(real)
    script = tmp_path / "local" / "bin" / "pytest"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!{real}/bin/python\nimport sys\n")
    assert Resolver(repo).prefix(str(script)) == real


def test_a_shims_answer_is_kept_while_its_keys_hold(tmp_path: Path, repo: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    shim = write_shim(tmp_path / "shims", "exit 1")
    asked: list[list[str]] = []

    def ask(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
        asked.append(argv)
        assert cwd == repo
        assert not any(k.startswith("PYTHON") for k in env)
        return f"{real}\n"

    cache = tmp_path / "state" / "shims.json"
    env = {"PATH": os.defpath, "PYTHONHOME": "/elsewhere"}
    for tree in ("t1", "t1", "t2"):
        assert Resolver(repo, cache, tree, env, ask).prefix(str(shim)) == real
    assert len(asked) == 2  # once for t1, once for t2
    shim.write_text("#!/bin/sh\nexit 2\n")  # the shim itself changed: asked again
    Resolver(repo, cache, "t2", env, ask).prefix(str(shim))
    assert len(asked) == 3
    assert asked[0] == [str(shim), "-c", "import sys; print(sys.prefix)"]


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (OSError("it did not answer within 10 s"), "it did not answer within 10 s"),
        ("", "it answered '', not an environment's directory"),
        ("relative/path\n", "it answered 'relative/path', not an environment's directory"),
    ],
)
def test_a_shim_that_cannot_answer_is_unresolved(
    tmp_path: Path, repo: Path, answer: str | OSError, why: str
) -> None:
    shim = write_shim(tmp_path / "shims", "exit 1")

    def ask(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
        if isinstance(answer, OSError):
            raise answer
        return answer

    resolver = Resolver(repo, None, "t1", {}, ask)
    assert environments(repo, [shim], env={}, resolver=resolver) == []
    assert resolver.unresolved == [(str(shim), why)]


def test_a_real_shim_that_fails_says_how(tmp_path: Path, repo: Path) -> None:
    shim = write_shim(tmp_path / "shims", "echo 'pyenv: version 9.9 is not installed' >&2; exit 1")
    resolver = Resolver(repo)
    assert resolver.prefix(str(shim)) is None
    assert resolver.unresolved == [(str(shim), "it exited 1: pyenv: version 9.9 is not installed")]


def test_programs_that_are_not_pythons_are_never_run(tmp_path: Path, repo: Path) -> None:
    """``make``, ``npm``, a shell script: no ``-c`` is handed to them."""
    tool = tmp_path / "tools" / "bin" / "make-tests"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\nexit 9\n")

    def ask(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
        raise AssertionError(f"ran {argv}")

    assert Resolver(repo, ask=ask).prefix(str(tool)) == tmp_path / "tools"
