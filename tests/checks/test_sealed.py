"""Sealed runs: the checks run on a private copy of the bytes donegate hashed, and nothing else.

The attacks are played for real: a background process that flips the live tree while donegate's
pytest runs, a file changed between the snapshot and the copy, a FIFO swapped in, a module that
would shadow the runner; each test first shows what the attack does without the seal.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from donegate.collect import collect
from donegate.sealed._importroots import import_roots
from donegate.sealed.copy import LOCK_FILE, SEALED_DIR, Sealed, seal, sweep
from donegate.workspace import Entry, Snapshot
from donegate.workspace.snapshot import blob_id
from tests.checks.support import claim_with, config_from, detail, only, state, write

BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
PROJECT = {
    "pyproject.toml": """
        [tool.pytest.ini_options]
        pythonpath = ["src"]
    """,
    "tests/test_calc.py": """
        import calc

        def test_add():
            assert calc.add(2, 3) == 5
    """,
}


def project(root: Path, calc: str) -> Path:
    write(root, PROJECT)
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "calc.py").write_text(calc)
    return root


def pytest_check(token: str = "sealed") -> str:
    # The token names this test's pytest runs, so that a flipper can tell them from any other.
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-o", f"junit_suite_name={token}"]
    return f"""
        [[checks]]
        check_type = "test_run"
        command = {json.dumps(command)}
        timeout_s = 120
    """


def run_collect(root: Path, sealed: Sealed | None = None, token: str = "sealed") -> str:
    done = collect(claim_with("src/calc.py"), config_from(pytest_check(token), root), sealed=sealed)
    return state(done)


# --- the copy ----------------------------------------------------------------------------------


def test_copy_holds_the_hashed_files_links_inside_the_tree_and_ignored_environments(
    tmp_path: Path,
) -> None:
    live = project(tmp_path / "live", FIXED)
    (live / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (live / "run.sh").chmod(0o755)
    (live / "calc_link.py").symlink_to("src/calc.py")
    (live / "outside").symlink_to(tmp_path / "elsewhere")
    write(live, {"node_modules/left/index.js": "x", "src/__pycache__/calc.cpython-311.pyc": "x"})
    write(live, {"data/.gitkeep": "", "build/hidden.py": "x = 1\n"})
    snapshot = Snapshot.take(live, ignore=("data/", "build/"))
    assert "node_modules/left/index.js" not in snapshot.entries
    with seal(snapshot, state_dir=tmp_path / "state", site_dirs=()) as sealed:
        copy = sealed.root
        assert sealed.findings == []
        assert (copy / "src/calc.py").read_text() == FIXED
        assert not (copy / "src/calc.py").is_symlink()
        assert os.access(copy / "run.sh", os.X_OK)
        assert os.readlink(copy / "calc_link.py") == "src/calc.py"
        assert os.readlink(copy / "outside") == str(tmp_path / "elsewhere")
        # Runners find what the snapshot leaves out; caches and ignored code stay out.
        assert os.readlink(copy / "node_modules") == str(live / "node_modules")
        assert os.readlink(copy / "data") == str(live / "data")
        # Importable code is never left to an ignore rule: the snapshot holds build/hidden.py.
        assert set(sealed.linked) == {"node_modules", "data"}
        assert (copy / "build/hidden.py").read_text() == "x = 1\n"
        # A .pyc that does not match its source is planted bytecode: seen, hashed and copied
        # (the runner reads a fresh bytecode cache anyway).
        assert "src/__pycache__/calc.cpython-311.pyc" in snapshot.entries
        assert sealed.pythonpath == (str(copy / "src"),)
        assert copy.parent.parent == (tmp_path / "state" / SEALED_DIR).resolve()
        assert stat.S_IMODE(copy.parent.parent.stat().st_mode) == 0o700
    assert list((tmp_path / "state" / SEALED_DIR).iterdir()) == []


def crash_inside(snapshot: Snapshot, state_dir: Path) -> None:
    with seal(snapshot, state_dir=state_dir) as sealed:
        (sealed.root / "src").chmod(0o500)  # a test that left a read-only directory behind
        raise RuntimeError("a check crashed")


def test_copy_is_removed_when_the_block_raises(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    with pytest.raises(RuntimeError):
        crash_inside(Snapshot.take(live), tmp_path / "s")
    assert list((tmp_path / "s" / SEALED_DIR).iterdir()) == []


# --- the tree changes after it was hashed ------------------------------------------------------


def test_file_changed_between_snapshot_and_copy_is_a_finding_and_no_check_counts(
    tmp_path: Path,
) -> None:
    live = project(tmp_path / "live", BROKEN)
    snapshot = Snapshot.take(live)  # donegate hashed the broken code
    (live / "src/calc.py").write_text(FIXED)  # the agent puts the fix in just after
    assert run_collect(live) == "verified"  # unsealed, the run judges bytes nobody hashed
    with seal(snapshot, state_dir=tmp_path / "state") as sealed:
        assert not sealed.counts
        assert sealed.findings == [
            f"src/calc.py: changed after donegate hashed it (hashed "
            f"{snapshot.entries['src/calc.py'].digest[:12]}, copied "
            f"{Snapshot.take(live).entries['src/calc.py'].digest[:12]})"
        ]
        done = collect(claim_with("src/calc.py"), config_from(pytest_check(), live), sealed=sealed)
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "src/calc.py: changed after donegate hashed it" in str(detail(item)["why_not_counted"])
    assert state(done) == "unverified"


def test_deleted_and_special_files_are_findings_and_nothing_hangs(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    write(live, {"gone.txt": "a", "fifo.txt": "b"})
    snapshot = Snapshot.take(live)
    (live / "gone.txt").unlink()
    (live / "fifo.txt").unlink()
    os.mkfifo(live / "fifo.txt")  # opening it for reading would block forever
    with seal(snapshot, state_dir=tmp_path / "state") as sealed:
        assert sealed.findings == [
            "fifo.txt: no longer a regular file (prw-r--r--)",
            "gone.txt: deleted after donegate hashed it",
        ]


def test_file_unreadable_at_hashing_or_copying_is_a_finding(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    snapshot = Snapshot.take(live)
    entries = {**snapshot.entries, "opaque.bin": Entry("unreadable:3:1:1")}
    hashed = Snapshot(live, snapshot.taken_at, "walk", "sha1", entries)
    (live / "src").chmod(0o300)  # listing and reading denied (unless this runs as root)
    try:
        with seal(hashed, state_dir=tmp_path / "state") as sealed:
            findings = sealed.findings
    finally:
        (live / "src").chmod(0o755)
    assert findings[0] == "opaque.bin: donegate could not read it when hashing (unreadable:3:1:1)"
    if os.geteuid() != 0:
        assert findings[1:] == ["src/calc.py: could not be copied (Permission denied)"]


def test_symlink_retargeted_after_the_snapshot_is_a_finding(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    (live / "link.py").symlink_to("src/calc.py")
    snapshot = Snapshot.take(live)
    (live / "link.py").unlink()
    (live / "link.py").symlink_to("/etc/hostname")
    with seal(snapshot, state_dir=tmp_path / "state") as sealed:
        assert [f.split(":")[0] for f in sealed.findings] == ["link.py"]


# --- a background process flips the live tree while the check runs -----------------------------


FLIPPER = """
import os, sys, time
target, token, during, otherwise, ready, stop = sys.argv[1:]
# Read from files: on its own command line the token would make this process look like pytest.
token, during, otherwise = (open(path).read() for path in (token, during, otherwise))

def pytest_running():
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if token.encode() in f.read():
                    return True
        except OSError:
            pass
    return False

def put(text):
    with open(target) as f:
        if f.read() == text:
            return
    with open(target, "w") as f:
        f.write(text)

put(otherwise)
open(ready, "w").close()
while not os.path.exists(stop):
    put(during if pytest_running() else otherwise)
    time.sleep(0.002)
"""


class Flipper:
    """A real process that writes one text while a pytest named by ``token`` runs, another else."""

    def __init__(self, scratch: Path) -> None:
        self.token = f"flip-{uuid.uuid4().hex}"
        self.scratch = scratch
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, target: Path, during: str, otherwise: str) -> None:
        files = self.scratch
        (files / "during").write_text(during)
        (files / "otherwise").write_text(otherwise)
        (files / "token").write_text(self.token)
        argv = [sys.executable, "-c", FLIPPER, str(target)]
        argv += [str(files / n) for n in ("token", "during", "otherwise", "ready", "stop")]
        self.proc = subprocess.Popen(argv)
        while not (files / "ready").exists():
            time.sleep(0.01)

    def stop(self) -> None:
        if self.proc is not None:
            (self.scratch / "stop").touch()
            self.proc.wait()


@pytest.fixture
def flipper(tmp_path: Path) -> Iterator[Flipper]:
    (tmp_path / "flip").mkdir()
    flip = Flipper(tmp_path / "flip")
    yield flip
    flip.stop()


def test_fix_put_in_only_while_pytest_runs_fools_the_live_run_not_the_sealed_one(
    tmp_path: Path, flipper: Flipper
) -> None:
    token = flipper.token
    live = project(tmp_path / "live", BROKEN)
    flipper.start(live / "src/calc.py", FIXED, BROKEN)
    assert (live / "src/calc.py").read_text() == BROKEN
    # Without the seal, the broken code the agent leaves behind verifies.
    assert run_collect(live, token=token) == "verified"
    assert (live / "src/calc.py").read_text() == BROKEN
    snapshot = Snapshot.take(live)
    with seal(snapshot, state_dir=tmp_path / "state") as sealed:
        assert sealed.findings == []
        assert run_collect(live, sealed, token) == "refuted"
    assert (live / "src/calc.py").read_text() == BROKEN


def test_fix_taken_out_while_pytest_runs_cannot_refute_the_hashed_fix(
    tmp_path: Path, flipper: Flipper
) -> None:
    token = flipper.token
    live = project(tmp_path / "live", FIXED)
    flipper.start(live / "src/calc.py", BROKEN, FIXED)
    assert run_collect(live, token=token) == "refuted"  # the live run judged other bytes
    with seal(Snapshot.take(live), state_dir=tmp_path / "state") as sealed:
        assert run_collect(live, sealed, token) == "verified"  # the hashed bytes pass


# --- evidence names the workspace --------------------------------------------------------------


def test_evidence_names_workspace_paths_not_the_copy(tmp_path: Path) -> None:
    live = project(tmp_path / "live", BROKEN)
    write(
        live, {"tests/test_where.py": "import os\n\ndef test_where():\n    assert 0, os.getcwd()\n"}
    )
    with seal(Snapshot.take(live), state_dir=tmp_path / "state") as sealed:
        done = collect(claim_with("src/calc.py"), config_from(pytest_check(), live), sealed=sealed)
        tail = str(detail(only(done))["output_tail"])
        assert str(sealed.root) not in json.dumps(done.to_json_dict())
    assert f"AssertionError: {live}" in tail
    assert state(done) == "refuted"


def test_config_outside_the_sealed_workspace_counts_no_check(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    other = project(tmp_path / "other", FIXED)
    with seal(Snapshot.take(live), state_dir=tmp_path / "state") as sealed:
        done = collect(claim_with("src/calc.py"), config_from(pytest_check(), other), sealed=sealed)
    assert "outside the sealed workspace" in str(detail(only(done))["why_not_counted"])
    assert state(done) == "unverified"


# --- stale copies ------------------------------------------------------------------------------

KILLED_HOOK = """
import sys, time
from pathlib import Path
from donegate.workspace import Entry, Snapshot
from donegate.workspace.snapshot import blob_id
from donegate.sealed.copy import seal
with seal(Snapshot.take(sys.argv[1]), state_dir=sys.argv[2], site_dirs=()) as sealed:
    Path(sys.argv[3]).write_text(str(sealed.root))
    time.sleep(600)
"""


def test_copy_of_a_killed_hook_is_swept_and_a_live_one_is_kept(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    hooks, copies = [], []
    for name in ("killed", "alive"):
        told = tmp_path / name
        argv = [sys.executable, "-c", KILLED_HOOK, str(live), str(state_dir), str(told)]
        hooks.append(subprocess.Popen(argv))
        while not told.exists() or not told.read_text():
            time.sleep(0.05)
        copies.append(Path(told.read_text()).parent)
    killed, alive = hooks
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    parent = state_dir / SEALED_DIR
    assert sweep(parent) == []  # both younger than a minute: maybe still taking their lock
    later = time.time() + 120
    assert sweep(parent, now=lambda: later) == [copies[0]]
    assert (copies[1] / LOCK_FILE).exists()
    alive.send_signal(signal.SIGKILL)
    alive.wait()


# --- editable installs -------------------------------------------------------------------------

SRC_LAYOUT = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "srcproj"
        version = "0.1"
    """,
    "src/srcpkg/__init__.py": "VALUE = 1\n",
    "tests/test_origin.py": """
        import os
        import srcpkg

        def test_imported_from_the_expected_tree():
            assert srcpkg.__file__.startswith(os.environ["EXPECTED_ROOT"]), srcpkg.__file__
    """,
}
FLAT_LAYOUT = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "flatproj"
        version = "0.1"

        [tool.setuptools]
        packages = ["flatpkg"]
    """,
    "flatpkg/__init__.py": "VALUE = 1\n",
    "tests/test_origin.py": """
        import os
        import flatpkg

        def test_imported_from_the_expected_tree():
            assert flatpkg.__file__.startswith(os.environ["EXPECTED_ROOT"]), flatpkg.__file__
    """,
}


@pytest.fixture(scope="module")
def editable(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Path]]:
    """A virtualenv with two projects installed by ``pip install -e`` (src and flat layouts)."""
    base = tmp_path_factory.mktemp("editable")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site_dir = next(venv.glob("lib/python*/site-packages"))
    # pytest from donegate's own environment, after the project's own paths.
    (site_dir / "zz_tools.pth").write_text(next(p for p in sys.path if p.endswith("site-packages")))
    projects = {"src": write(base / "src", SRC_LAYOUT), "flat": write(base / "flat", FLAT_LAYOUT)}
    for root in projects.values():
        pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin/python"), "install", "-q"]
        pip += ["--no-deps", "-e", str(root)]  # builds with setuptools from the package index
        subprocess.run(pip, check=True, capture_output=True)
    return venv, site_dir, projects


def run_origin_test(venv: Path, cwd: Path, expected: Path, pythonpath: tuple[str, ...]) -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["EXPECTED_ROOT"] = str(expected)
    env["PYTHONSAFEPATH"] = "1"  # as donegate's runner: the working directory is not on the path
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(pythonpath)
    argv = [str(venv / "bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False).returncode


@pytest.mark.parametrize("layout", ["src", "flat"])
def test_project_installed_editable_imports_the_copy(
    tmp_path: Path, editable: tuple[Path, Path, dict[str, Path]], layout: str
) -> None:
    venv, site_dir, projects = editable
    live = projects[layout]
    with seal(Snapshot.take(live), state_dir=tmp_path, site_dirs=[site_dir]) as sealed:
        place = sealed.root.parent
        assert sealed.findings == []
        # Without the seal's import path, the editable install imports the live tree.
        assert run_origin_test(venv, sealed.root, live, ()) == 0
        assert run_origin_test(venv, sealed.root, place, ()) == 1
        assert run_origin_test(venv, sealed.root, place, sealed.pythonpath) == 0


def test_finder_and_pth_mappings_become_import_roots(tmp_path: Path) -> None:
    live, copy, site_dir = tmp_path / "live", tmp_path / "copy", tmp_path / "site"
    for root in (live, copy):
        write(root, {"libs/one/src/one/__init__.py": "", "lib/two/__init__.py": ""})
    write(site_dir, {"a.pth": f"{live}/libs/one/src\n/elsewhere\n# comment\n"})
    write(site_dir, {"b.pth": "import __editable___two_finder; __editable___two_finder.install()"})
    finder = f"MAPPING: dict[str, str] = {{'two': '{live}/lib/two', 'far': '/far/away'}}\n"
    write(site_dir, {"__editable___two_finder.py": finder})
    roots = import_roots(live, copy, tmp_path / "links", [site_dir])
    assert roots == (
        (str(copy / "libs/one/src"), str(tmp_path / "links")),
        [],
    )
    assert os.readlink(tmp_path / "links/two") == str(copy / "lib/two")


def test_module_that_would_shadow_the_runner_is_a_finding(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    pytest_py = "import sys\nprint('the agent is the runner'); sys.exit(0)\n"
    write(live, {"src/pytest.py": pytest_py})
    with seal(Snapshot.take(live), state_dir=tmp_path / "state", site_dirs=()) as sealed:
        # What the finding prevents: first on the path, the copy's pytest.py is the runner.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sealed.pythonpath)}
        ran = subprocess.run(
            [sys.executable, "-m", "pytest"], env=env, capture_output=True, text=True, check=False
        )
        assert "the agent is the runner" in ran.stdout
        assert sealed.findings == [
            "src: module 'pytest' would shadow the test runner's on the sealed run's import path "
            "(first on it, where an editable install put it last)"
        ]


def test_sealed_source_is_the_snapshot_even_for_a_git_tree(tmp_path: Path) -> None:
    live = project(tmp_path / "live", FIXED)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
    }
    env["GIT_COMMITTER_EMAIL"] = "t@e"
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=live, env=env, check=True)
    snapshot = Snapshot.take(live)
    assert snapshot.origin == "git"
    with seal(snapshot, state_dir=tmp_path / "state", site_dirs=()) as sealed:
        assert sealed.findings == []
        assert not (sealed.root / ".git").exists()
        assert run_collect(live, sealed) == "verified"


def test_symlinked_directory_whose_files_the_snapshot_holds_is_copied_as_a_directory(
    tmp_path: Path,
) -> None:
    live = project(tmp_path / "live", FIXED)
    write(tmp_path, {"outside/shared.py": "SHARED = 1\n"})
    (live / "shared").symlink_to(tmp_path / "outside")
    entries = dict(Snapshot.take(live).entries)
    entries["shared/shared.py"] = Entry(blob_id("sha1", b"SHARED = 1\n"))
    hashed = Snapshot(live, datetime.now(UTC), "walk", "sha1", entries)
    with seal(hashed, state_dir=tmp_path / "state", site_dirs=()) as sealed:
        assert sealed.findings == []
        assert not (sealed.root / "shared").is_symlink()
        assert (sealed.root / "shared/shared.py").read_text() == "SHARED = 1\n"
