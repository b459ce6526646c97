"""A test command parked in a kept copy while the stop takes its snapshot (``_launch.park``).

A parked run's interpreter starts, and imports pytest, before the copy is brought up to date; it
is given its run once the copy is ready. What it then does must be what a cold start of the same
command at the same place does. Each test runs real pytest processes (in the checks' sandbox
where the machine has bubblewrap) and plays what could make the two differ: a module of the
project named like one the parked interpreter loaded early (or looked for and did not find), a
test module rewritten after the bytecode store was checked, a directory bound anew. Each shows
first, with the defence taken out, that the parked run would have run other code than the cold
start.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from donegate.sealed import _bytecode, _launch
from donegate.sealed._process import RunResult
from tests.checks.support import write

PROJECT = {
    "tests/test_calc.py": """
        import calc

        def test_add():
            assert calc.add(2, 3) == 5
    """,
    "src/calc.py": "def add(a, b):\n    return a + b\n",
    # What the run saw, from inside it: written at configure time into its working directory.
    "conftest.py": """
        import json, os, sys

        def pytest_configure(config):
            seen = {
                "path": sys.path,
                "argv0": sys.argv[0],
                "env": dict(os.environ),
                "cwd": os.getcwd(),
                "safe_path": sys.flags.safe_path,
                "stdin_is_null": os.path.samestat(os.fstat(0), os.stat(os.devnull)),
                "main": getattr(sys.modules["__main__"].__spec__, "name", None),
                "warm": "-c" in sys.orig_argv,
            }
            with open("seen.json", "w") as out:
                json.dump(seen, out)
    """,
}


class Kept:
    """A project and a kept copy of it, where a run of ``command`` happens."""

    def __init__(self, root: Path, command: tuple[str, ...] | None = None) -> None:
        self.live = write(root / "live", PROJECT)
        self.copy = root / "state" / "sealed" / "kept-x" / "tree"
        shutil.copytree(self.live, self.copy)
        python = sys.executable
        argv = command or (python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
        self.launch = _launch.Launch(command=argv)
        self.place = _launch.Place(
            base_dir=self.live,
            run_dir=self.copy,
            pythonpath=(str(self.copy / "src"),),  # as the import roots of an editable install
            bytecode=root / "state" / "bytecode",
            lasting=True,
        )

    def cold(self) -> tuple[RunResult, dict[str, object]]:
        started = _launch.start(self.launch, self.place)
        assert isinstance(started, _launch.Started)
        return self._ended(started)

    def parked(self, meanwhile: object = None) -> tuple[RunResult, dict[str, object]]:
        """A run parked before the import roots are known, then given its run."""
        started = _launch.park(self.launch, self.place._replace(pythonpath=()))
        assert started is not None
        if callable(meanwhile):
            meanwhile()
        assert started.release(self.place)
        return self._ended(started)

    def _ended(self, started: _launch.Started) -> tuple[RunResult, dict[str, object]]:
        assert started.invocation is not None
        assert started.invocation.witness is not None
        scratch = str(started.invocation.witness.plugin_dir.parent)
        seen_file = self.copy / "seen.json"
        seen_file.unlink(missing_ok=True)
        run, _ = started.finish()
        if not seen_file.exists():
            return run, {}
        # Each run has a scratch directory and a witness of its own, named at random.
        module = started.invocation.witness.module
        text = seen_file.read_text().replace(scratch, "<scratch>")
        seen = json.loads(text.replace(module.rpartition("_")[2], "<witness>"))
        return run, seen


def test_a_parked_run_is_the_run_a_cold_start_makes(tmp_path: Path) -> None:
    kept = Kept(tmp_path)
    cold_run, cold = kept.cold()
    parked_run, parked = kept.parked()
    assert cold_run.returncode == parked_run.returncode == 0, parked_run.output_tail
    assert cold.pop("warm") is False
    assert parked.pop("warm") is True  # not started again: pytest was loaded before the copy
    assert parked == cold
    assert parked["stdin_is_null"] is True
    assert str(kept.copy / "src") in parked["path"]  # type: ignore[operator]


@pytest.fixture
def unchecked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parked interpreter without its check of the modules the project provides."""
    text = _launch._PARKER.read_text()
    check = "if any(PathFinder.find_spec(name, added) is not None for name in sorted(names)):"
    assert check in text
    parker = tmp_path / "parker-unchecked.py"
    parker.write_text(text.replace(check, "if False:"))
    monkeypatch.setattr(_launch, "_PARKER", parker)


# A module of the project named like one the parked interpreter met before the project's import
# roots were on its path: its name, and what the cold start makes of it.
PLANTED = {
    # loaded by every Python that starts, from the first directory of its path that has it
    "sitecustomize.py": "open('planted', 'w').close()\n",
    # one of pytest's own: a cold start imports the project's, and fails
    "iniconfig.py": "open('planted', 'w').close()\nraise ImportError('planted')\n",
    # looked for (by pickle, for Jython) and not found: a cold start finds the project's
    "org/__init__.py": "open('planted', 'w').close()\n",
}


@pytest.mark.parametrize("planted", sorted(PLANTED))
def test_a_module_of_the_project_named_like_one_met_early_makes_the_run_cold(
    tmp_path: Path, planted: str
) -> None:
    kept = Kept(tmp_path)
    write(kept.copy / "src", {planted: PLANTED[planted]})
    marker = kept.copy / "planted"
    cold_run, _ = kept.cold()
    assert marker.exists()
    marker.unlink()
    parked_run, seen = kept.parked()
    assert marker.exists()  # the project's module was loaded, as at the cold start
    assert parked_run.returncode == cold_run.returncode
    assert seen.get("warm") in (None, False)  # started again, cold


@pytest.mark.parametrize("planted", sorted(PLANTED))
def test_without_the_check_a_parked_run_misses_the_project_s_module(
    tmp_path: Path, planted: str, unchecked: None
) -> None:
    kept = Kept(tmp_path)
    write(kept.copy / "src", {planted: PLANTED[planted]})
    parked_run, seen = kept.parked()
    assert not (kept.copy / "planted").exists()  # another run than the cold start's
    assert parked_run.returncode == 0
    assert seen["warm"] is True


def test_a_parked_run_whose_working_directory_was_made_anew_is_not_given_its_run(
    tmp_path: Path,
) -> None:
    kept = Kept(tmp_path)
    started = _launch.park(kept.launch, kept.place)
    assert started is not None
    try:
        # The copy's directory goes and comes back: the parked run's sandbox holds the old one.
        shutil.move(kept.copy, kept.copy.with_name("old"))
        shutil.copytree(kept.copy.with_name("old"), kept.copy)
        assert not started.release(kept.place)
    finally:
        started.close()
    assert not started.running


def test_a_parked_run_is_not_given_a_run_after_a_protected_write(tmp_path: Path) -> None:
    kept = Kept(tmp_path)
    started = _launch.park(kept.launch, kept.place)
    assert started is not None
    try:
        written = kept.place._replace(mutations=(("m1", "conftest.py"),))
        assert not started.release(written)  # start() refuses it, and says why
        assert isinstance(_launch.start(kept.launch, written), _launch.Refusal)
    finally:
        started.close()


def test_bytes_a_job_writes_into_a_parked_run_s_pipe_run_nothing(tmp_path: Path) -> None:
    """A process of the same user can open the parked run's pipe through ``/proc`` and write a
    run of its own into it. The pipe only says "go": the run is read from a file in the run's
    scratch directory, in donegate's state directory; anything else in the pipe ends the run
    unrun, and the check counts a run that ended so as a failure."""
    kept = Kept(tmp_path)
    started = _launch.park(kept.launch, kept.place)
    assert started is not None
    running = started._running
    assert running is not None
    assert running.proc.stdin is not None
    pipe = f"/proc/{os.getpid()}/fd/{running.proc.stdin.fileno()}"
    forged = {"argv": ["/bin/sh", "-c", "touch forged"], "env": {}, "path": [], "parked": {}}
    job = f"open({pipe!r}, 'wb').write({json.dumps(forged).encode() + b'go'!r})"
    subprocess.run([sys.executable, "-c", job], check=True)
    assert started.release(kept.place)  # donegate cannot tell: it writes its run, and "go"
    run, _ = started.finish()
    assert run.returncode == _launch.PARKED_NOT_GIVEN
    assert not (kept.copy / "forged").exists()
    assert not (kept.copy / "seen.json").exists()


def test_a_parked_run_never_given_its_run_runs_nothing(tmp_path: Path) -> None:
    kept = Kept(tmp_path)
    started = _launch.park(kept.launch, kept.place)
    assert started is not None
    started.close()
    assert not (kept.copy / "seen.json").exists()


def test_only_a_python_m_pytest_argv_in_a_kept_copy_is_parked(tmp_path: Path) -> None:
    kept = Kept(tmp_path)
    assert _launch.parkable(kept.launch, kept.place)
    assert not _launch.parkable(kept.launch, kept.place._replace(lasting=False))
    shell = kept.launch._replace(command="python -m pytest", shell=True)
    assert not _launch.parkable(shell, kept.place)
    script = kept.launch._replace(command=("pytest", "-q"))
    assert not _launch.parkable(script, kept.place)
    options = kept.launch._replace(command=(sys.executable, "-X", "dev", "-m", "pytest"))
    assert not _launch.parkable(options, kept.place)


# --- pytest before 9: its rewritten test modules are checked by mtime and size ------------------


@pytest.fixture(scope="module")
def pytest8(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv with pytest 8, whose rewritten modules are trusted on their source's whole
    seconds of mtime and size (pytest 9 checks a hash of the source)."""
    venv = tmp_path_factory.mktemp("pytest8") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin/python"), "install", "-q"]
    subprocess.run([*pip, "pytest>=8,<9"], check=True, capture_output=True)
    return venv


def _rewritten_links(kept: Kept) -> list[Path]:
    return list((kept.place.bytecode or Path()).rglob("test_calc.*-pytest-8.*.pyc"))


def test_a_test_module_rewritten_while_the_run_was_parked_is_read_again(
    tmp_path: Path, pytest8: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _kept_with_learned_rewrites(tmp_path, pytest8, monkeypatch)
    cold_run, _ = kept.cold()
    assert cold_run.returncode == 0
    parked_run, _ = kept.parked(meanwhile=lambda: _same_size_same_mtime_rewrite(kept))
    assert parked_run.returncode == 1, parked_run.output_tail  # the module as it is now
    assert "assert 5 == 6" in parked_run.output_tail


def test_without_the_recheck_a_parked_run_runs_the_test_module_as_it_was(
    tmp_path: Path, pytest8: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _kept_with_learned_rewrites(tmp_path, pytest8, monkeypatch)
    monkeypatch.setattr(_bytecode, "recheck", lambda prefix, roots: None)
    parked_run, _ = kept.parked(meanwhile=lambda: _same_size_same_mtime_rewrite(kept))
    assert parked_run.returncode == 0  # the test as it was: a pass the tree does not earn


ABOVE = {
    "pyproject.toml": "[tool.pytest.ini_options]\n",  # the rootdir: the copy's top
    "conftest.py": """
        import pytest

        @pytest.fixture
        def expected():
            return 5
    """,
    "sub/tests/test_sum.py": """
        def test_sum(expected):
            assert 2 + 3 == expected
    """,
}


@pytest.mark.parametrize("told", ["the whole copy", "only the run's directory"])
def test_a_conftest_above_the_run_s_directory_rewritten_while_parked_is_read_again(
    tmp_path: Path, pytest8: Path, monkeypatch: pytest.MonkeyPatch, told: str
) -> None:
    monkeypatch.setattr(_bytecode, "MIN_LEARN_S", 120.0)
    # Outside /tmp, as a kept copy is (in the state directory): the run's sandbox shows of the
    # real /tmp only the run's own directory, and the conftest above it would not be seen.
    outside = Path(tempfile.mkdtemp(prefix="donegate-test-", dir="/var/tmp"))
    try:
        _conftest_above(tmp_path, outside, pytest8, told)
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def _conftest_above(tmp_path: Path, outside: Path, pytest8: Path, told: str) -> None:
    copy = write(outside / "copy", ABOVE)
    python = str(pytest8 / "bin/python")
    launch = _launch.Launch(command=(python, "-m", "pytest", "-q", "-p", "no:cacheprovider"))
    place = _launch.Place(
        base_dir=tmp_path / "live" / "sub",
        run_dir=copy / "sub",
        bytecode=tmp_path / "state" / "bytecode",
        lasting=True,
    )
    started = _launch.start(launch, place)
    assert isinstance(started, _launch.Started)
    run, _ = started.finish()
    assert run.returncode == 0, run.output_tail
    assert list(place.bytecode.rglob("conftest.*-pytest-8.*.pyc")), "not learned"  # type: ignore[union-attr]
    parked = _launch.park(launch, place)
    assert parked is not None
    conftest = copy / "conftest.py"
    before = conftest.stat()
    conftest.write_text(conftest.read_text().replace("return 5", "return 6"))
    os.utime(conftest, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert parked.release(place, [copy] if told == "the whole copy" else [])
    run, _ = parked.finish()
    if told == "the whole copy":
        assert run.returncode == 1, run.output_tail  # the conftest as it is now
    else:
        assert run.returncode == 0  # the conftest as it was: a pass the tree does not earn


def _kept_with_learned_rewrites(
    tmp_path: Path, venv: Path, monkeypatch: pytest.MonkeyPatch
) -> Kept:
    monkeypatch.setattr(_bytecode, "MIN_LEARN_S", 120.0)  # time to learn every module
    python = str(venv / "bin/python")
    kept = Kept(tmp_path, (python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"))
    (kept.copy / "conftest.py").unlink()  # its bytes are not the point here
    run, _ = kept.cold()
    assert run.returncode == 0, run.output_tail
    assert _rewritten_links(kept), "the store learned no rewritten test module"
    return kept


def _same_size_same_mtime_rewrite(kept: Kept) -> None:
    """The test module rewritten in the copy (as a refresh writes it) with its size, and its
    mtime put back: a rewrite within the same second as the last run's compile looks so."""
    test = kept.copy / "tests" / "test_calc.py"
    before = test.stat()
    text = test.read_text()
    test.write_text(text.replace("== 5", "== 6"))
    assert test.stat().st_size == before.st_size
    os.utime(test, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_the_parked_program_and_donegate_agree_on_how_it_is_given_its_run() -> None:
    """The program is never imported (it runs as it loads): its words, read from its text."""
    text = _launch._PARKER.read_text()
    assert f"\nNOT_GIVEN = {_launch.PARKED_NOT_GIVEN}\n" in text
    assert f'\nRUN_FILE_VAR = "{_launch._RUN_FILE_VAR}"\n' in text
    assert f'\nGO = b"{_launch._GO.decode()}"\n' in text
