"""Test modules rewritten by the run's own pytest when it is not donegate's (``_rewrites``).

A project pinning another pytest had its test modules rewritten by pytest at every stop: the
store keeps only donegate's compiles, and donegate's pytest cannot make another version's. Here
the run's pytest makes them, in a process of donegate's that imports nothing of the tree and runs
nothing of ``site``; donegate keeps its output only for the bytes it reads itself. The tests run
real pytest processes in real kept copies; "another version" is played by telling the store that
donegate's own pytest is some other one (the run's is then foreign to it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from donegate.sealed import _bytecode, _isolation, _launch, _rewrites
from donegate.sealed.copy import seal
from donegate.workspace import Snapshot
from tests.checks.test_sealed import BROKEN, FIXED, project, run_collect

pytestmark = pytest.mark.skipif(
    _isolation.bubblewrap() is None, reason="the child runs in the checks' sandbox: no bwrap here"
)
VERSION = __import__("_pytest._version").__version__


def learned(state_dir: Path) -> str:
    return "\n".join(p.read_text() for p in (state_dir / "bytecode").glob("*/prefixes/*.list"))


@pytest.fixture
def foreign_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    """donegate's pytest is "another version": the run's rewrites are not its to make."""
    monkeypatch.setattr(_bytecode, "_own_pytest", lambda: "0.0.0")
    monkeypatch.setattr(_bytecode, "MIN_LEARN_S", 120.0)  # time to learn every module


def test_the_run_s_pytest_rewrites_a_kept_copy_s_tests_and_they_still_judge(
    tmp_path: Path, foreign_pytest: None
) -> None:
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        assert run_collect(live, sealed) == "verified"
    rewritten = f"tests/test_calc.cpython-311-pytest-{VERSION}.pyc"
    assert rewritten in learned(state_dir)
    entries = list((state_dir / "bytecode").rglob(f"test_calc.cpython-311-pytest-{VERSION}.pyc-*"))
    assert len(entries) == 1
    # The next runs read it (assertions rewritten by the run's pytest): the broken code is
    # still refuted, the fixed code verified.
    (live / "src" / "calc.py").write_text(BROKEN)
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        assert run_collect(live, sealed) == "refuted"
    (live / "src" / "calc.py").write_text(FIXED)
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        assert run_collect(live, sealed) == "verified"
    assert entries[0].exists()
    assert rewritten in learned(state_dir)


def test_a_fresh_copy_s_rewrites_are_never_kept(tmp_path: Path, foreign_pytest: None) -> None:
    live = project(tmp_path / "live", FIXED)
    with seal(Snapshot.take(live), state_dir=tmp_path / "state", site_dirs=()) as sealed:
        assert run_collect(live, sealed) == "verified"
    assert "test_calc" not in learned(tmp_path / "state")


def test_a_run_that_is_not_judged_teaches_nothing(tmp_path: Path, foreign_pytest: None) -> None:
    """A run stopped before it ends (a void run: the written code can shape its verdict, or a
    run started early for another claim) is closed, not finished: its pytest compiles nothing
    for the store, whatever the run did to the environment it would compile with."""
    live = project(tmp_path / "live", FIXED)
    state_dir = tmp_path / "state"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    launch = _launch.plain_launch({"checks": [{"check_type": "test_run", "command": argv}]})
    assert launch is not None
    with seal(Snapshot.take(live), state_dir=state_dir, site_dirs=(), keep=True) as sealed:
        place = _launch.Place(
            base_dir=live,
            run_dir=sealed.root,
            pythonpath=sealed.pythonpath,
            bytecode=sealed.bytecode,
            lasting=sealed.lasting,
        )
        started = _launch.start(launch, place)
        assert isinstance(started, _launch.Started)
        started._wait()  # it ran to its end, and is then closed unjudged
        started.close()
    assert "test_calc" not in learned(state_dir)


def test_bytes_the_child_did_not_read_from_the_source_are_not_kept(tmp_path: Path) -> None:
    """The store keeps the child's bytecode only under the digest of what donegate reads."""
    source = tmp_path / "tree" / "tests" / "test_a.py"
    source.parent.mkdir(parents=True)
    source.write_text("def test_a():\n    assert 1\n")
    rel = f"{str(source.parent).lstrip(os.sep)}/test_a.cpython-311-pytest-8.0.0.pyc"
    digest = __import__("hashlib").sha256(source.read_bytes()).hexdigest()
    pyc = _bytecode._magic() + b"\0" * 12 + b"code"
    prefix = _bytecode._Prefix(tmp_path / "store", "key")
    prefix._learn_theirs(rel, "8.0.0", "0" * 64, pyc)  # another text than the source's
    prefix._learn_theirs(rel, "8.1.0", digest, pyc)  # another pytest than the name's
    prefix._learn_theirs(rel, "8.0.0", digest, b"\0\0\0\0" + pyc[4:])  # another Python's
    assert prefix.links == {}
    prefix._learn_theirs(rel, "8.0.0", digest, pyc)
    assert list(prefix.links) == [rel]
    assert (prefix.path / rel).read_bytes() == pyc


# A rewriter that takes every assertion out: what a planted pytest would make of a test module.
_EMPTYING = """
import ast, importlib.util, marshal

def rewrite_asserts(tree, source, path, config):
    tree.body = [ast.Pass() if isinstance(node, ast.Assert) else node for node in tree.body]
    ast.fix_missing_locations(tree)

def _write_pyc_fp(fp, source_hash, co):
    fp.write(importlib.util.MAGIC_NUMBER + b"\\x03\\0\\0\\0" + source_hash[:8] + marshal.dumps(co))
"""


def _plant_pytest(where: Path, version: str) -> None:
    """A ``_pytest`` package that says it is ``version`` and rewrites away every assertion."""
    (where / "_pytest" / "assertion").mkdir(parents=True)
    (where / "_pytest" / "__init__.py").write_text("")
    (where / "_pytest" / "_version.py").write_text(f"version = {version!r}\n")
    (where / "_pytest" / "assertion" / "__init__.py").write_text("")
    (where / "_pytest" / "assertion" / "rewrite.py").write_text(_EMPTYING)


def _child(python: str, source: Path, cwd: Path, *flags: str) -> str:
    """What the child script prints for ``source``, run by ``python`` with ``flags`` in ``cwd``."""
    done = subprocess.run(
        [python, *flags, "-c", _rewrites._CHILD],
        input=f"{source}\n",
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout + done.stderr


def test_a_pytest_planted_in_the_tree_is_not_the_one_that_compiles(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _plant_pytest(tree, "6.6.6")
    source = tree / "test_a.py"
    source.write_text("def test_a():\n    assert 1\n")
    # Without -I, run in the tree as the test command is, the planted package is imported.
    assert "6.6.6" in _child(sys.executable, source, tree)
    got = list(_rewrites.rewritten(sys.executable, [str(source)], [tmp_path], 60))
    assert [(g.source, g.version) for g in got] == [(str(source), VERSION)]


def test_a_pth_line_of_the_environment_does_not_run_in_the_child(tmp_path: Path) -> None:
    """An environment whose ``.pth`` file swaps in another pytest: ``site`` is not run."""
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=False)
    python = str(env_dir / "bin" / "python")
    site_dir = next((env_dir / "lib").glob("python3*/site-packages"))
    for package in ("_pytest", "pytest", "pluggy", "iniconfig", "packaging", "pygments", "py"):
        found = Path(__import__(package).__file__ or "")
        found = found.parent if found.name == "__init__.py" else found
        (site_dir / found.name).symlink_to(found)
    _plant_pytest(tmp_path / "elsewhere", "6.6.6")
    (site_dir / "swap.pth").write_text(
        f"import sys; sys.path.insert(0, {str(tmp_path / 'elsewhere')!r})\n"
    )
    source = tmp_path / "test_a.py"
    source.write_text("def test_a():\n    assert 1\n")
    # With site, as the test command runs, the .pth line puts the other pytest first.
    assert "6.6.6" in _child(python, source, tmp_path, "-I")
    got = list(_rewrites.rewritten(python, [str(source)], [tmp_path], 60))
    assert [(g.source, g.version) for g in got] == [(str(source), VERSION)]
