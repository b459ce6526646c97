"""The checks' own sandbox, against the attacks it is for, each played for real.

Each attack is first shown working with ``isolation = "off"`` (the run as it was before the
sandbox), then failing under the default. The code under test is the agent's: it may read what
the agent left outside the tree, write outside its copy, or ask a server for the answer.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from donegate.errors import InvalidInput
from donegate.sealed import _isolation
from tests.checks.support import collect_one, config_from, detail, only, write

pytestmark = pytest.mark.skipif(
    _isolation.bubblewrap() is None, reason="bubblewrap is not installed (.ci/run installs it)"
)

PYTEST = f'[{json.dumps(sys.executable)}, "-m", "pytest", "-q", "-p", "no:cacheprovider"]'


def check(extra: str = "", command: str = PYTEST) -> str:
    return f"""
        [[checks]]
        check_type = "test_run"
        command = {command}
        timeout_s = 120
        {extra}
    """


def state(toml: str, project: Path) -> str:
    done = collect_one(toml, project, "src/price.py")
    assert done.verdict is not None
    return done.verdict.state


# The task: price() must return 42. The agent's code returns whatever it finds left for it.
def cheat(reads: str) -> dict[str, str]:
    return {
        "src/price.py": f"""
            def price():
                {reads}
        """,
        "tests/test_price.py": """
            import sys
            sys.path.insert(0, "src")
            from price import price

            def test_price():
                assert price() == 42
        """,
    }


def test_a_file_the_agent_left_in_tmp_is_not_there_for_the_run(tmp_path: Path) -> None:
    left = Path("/tmp") / f"donegate-answer-{os.getpid()}-{tmp_path.name}"
    left.write_text("42")
    try:
        project = write(tmp_path / "p", cheat(f"return int(open({str(left)!r}).read())"))
        assert state(check('isolation = "off"'), project) == "verified"  # the attack works
        assert state(check(), project) != "verified"
    finally:
        left.unlink()


def test_the_run_writes_nowhere_but_its_own_places(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    marker = outside / "written-by-the-run"
    code = f"open({str(marker)!r}, 'w').write('x')\n                return 42"
    project = write(tmp_path / "p", cheat(code))
    assert state(check('isolation = "off"'), project) == "verified"
    assert marker.exists()  # the code under test reached outside its place
    marker.unlink()
    # Under the sandbox the run may pass (it wrote into its private /tmp), but nothing of it
    # reached the real file system.
    state(check(), project)
    assert not marker.exists()


def test_a_pth_file_in_the_user_site_packages_does_not_run(tmp_path: Path) -> None:
    python = _python_with_user_site(tmp_path)
    home = tmp_path / "home"
    site = _user_site(python, home)
    site.mkdir(parents=True)
    # Runs in every Python that starts and reads the user's site-packages: the answer, planted.
    (site / "zz_answer.pth").write_text("import os; os.environ['PLANTED_ANSWER'] = '42'\n")
    project = write(tmp_path / "p", cheat("import os; return int(os.environ['PLANTED_ANSWER'])"))
    command = f'[{json.dumps(str(python))}, "-m", "pytest", "-q", "-p", "no:cacheprovider"]'
    env = f"env = {{ HOME = {json.dumps(str(home))} }}"
    assert state(check(f'isolation = "off"\n{env}', command), project) == "verified"
    assert state(check(env, command), project) != "verified"


def test_no_network_unless_the_team_names_it(tmp_path: Path) -> None:
    with _answering_server() as port:
        fetch = f"import urllib.request; return int(urllib.request.urlopen('http://127.0.0.1:{port}/').read())"
        project = write(tmp_path / "p", cheat(fetch))
        assert state(check('isolation = "off"'), project) == "verified"
        assert state(check(), project) != "verified"
        assert state(check("network = true"), project) == "verified"


def test_the_evidence_says_how_the_run_was_isolated(tmp_path: Path) -> None:
    project = write(tmp_path / "p", cheat("return 42"))
    isolated = only(collect_one(check(), project, "src/price.py"))
    assert detail(isolated)["isolated_by"] == "bubblewrap"
    plain = only(collect_one(check('isolation = "off"'), project, "src/price.py"))
    assert "isolation is off" in str(detail(plain)["not_isolated"])


def test_a_machine_without_the_sandbox_is_said_and_required_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = write(tmp_path / "p", cheat("return 42"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))  # no bwrap to be found
    done = collect_one(check(), project, "src/price.py")
    assert done.verdict is not None
    assert done.verdict.state == "verified"
    assert "not installed" in str(detail(only(done))["not_isolated"])
    required = collect_one(check('isolation = "required"'), project, "src/price.py")
    assert required.verdict is not None
    assert required.verdict.state == "unverified"
    assert only(required).verifier.kind == "absent"
    assert "cannot be isolated" in str(detail(only(required))["why_not_counted"])


def _planting(answer: str) -> str:
    """Code under test that reads the answer from ``answer`` if a run before it left one there,
    and otherwise leaves it for the next run (this run fails)."""
    lines = [
        "import os",
        f"path = {answer}",
        "if os.path.exists(path):",
        "    return int(open(path).read())",
        "os.makedirs(os.path.dirname(path), exist_ok=True)",
        "open(path, 'w').write('42')",
        "return 0",
    ]
    return ("\n" + " " * 16).join(lines)


@pytest.fixture
def home() -> Iterator[Path]:
    """A home of the run's own outside ``/tmp`` (which the sandbox replaces with its own), as a
    person's is: seen by the run, read-only but for what the sandbox makes writable."""
    made = Path(tempfile.mkdtemp(prefix="donegate-home-", dir="/var/tmp"))
    try:
        yield made
    finally:
        shutil.rmtree(made)


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


@pytest.mark.parametrize(
    "answer",
    [
        "os.path.expanduser('~/.cache/calc/answer')",
        "os.path.join(os.environ.get('XDG_CACHE_HOME', os.path.expanduser('~/.cache')), 'a')",
        "os.path.join(os.environ.get('PIP_CACHE_DIR', os.path.expanduser('~/.cache/pip')), 'a')",
        "os.path.join(os.environ.get('GOCACHE', os.path.expanduser('~/.cache/go-build')), 'a')",
    ],
    ids=["home-cache", "xdg-cache", "pip-cache", "go-cache"],
)
def test_a_cache_entry_one_run_plants_is_not_there_for_the_next(
    tmp_path: Path, home: Path, answer: str
) -> None:
    (home / ".cache" / "go-build").mkdir(parents=True)  # the person's own Go cache
    project = write(tmp_path / "p", cheat(_planting(answer)))
    env = f"env = {{ HOME = {json.dumps(str(home))} }}"
    off = check(f'isolation = "off"\n{env}')
    assert state(off, project) == "refuted"  # the first run plants the answer...
    assert state(off, project) == "verified"  # ...that the next one reads: the attack works
    for planted in _files(home):
        planted.unlink()
    assert state(check(env), project) != "verified"
    assert state(check(env), project) != "verified"
    assert not _files(home)  # nothing of either run is left for a later one


def test_a_cache_entry_the_agent_left_is_not_read_by_the_run(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = home / ".cache"
    cache.mkdir()
    (cache / "answer").write_text("42")  # by the agent's own shell, outside any run
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))  # as the hook inherits it from the host
    read = "import os; return int(open(os.environ['XDG_CACHE_HOME'] + '/answer').read())"
    project = write(tmp_path / "p", cheat(read))
    env = f"env = {{ HOME = {json.dumps(str(home))} }}"
    assert state(check(f'isolation = "off"\n{env}'), project) == "verified"
    assert state(check(env), project) != "verified"


@pytest.mark.parametrize("warm", [False, True], ids=["no-cache", "the-persons-go-cache"])
def test_go_builds_under_the_sandbox_and_leave_the_cache_as_it_was(
    tmp_path: Path, home: Path, warm: bool
) -> None:
    from tests.checks import runner_projects as rp

    go = rp.need("go", "CI installs Debian's golang-go in .ci/run")
    project = write(tmp_path / "p", rp.GO)
    cache = home / ".cache" / "go-build"
    if warm:  # the person's own build of the project fills their cache
        built = {**os.environ, "HOME": str(home), "GOCACHE": str(cache)}
        subprocess.run([go, "test", "./..."], cwd=project, env=built, check=True)
    before = sorted(_files(home))
    command = json.dumps([go, "test", "./..."])
    env = f'env = {{ HOME = {json.dumps(str(home))}, GOFLAGS = "-count=1" }}'
    project.joinpath("sum", "sum.go").write_text(rp.GO["sum/sum.go"] + "\n// changed\n")
    done = only(collect_one(check(env, command), project, "sum/sum.go"))
    assert detail(done)["isolated_by"] == "bubblewrap"
    counts = {"passed": 2, "failed": 0, "errors": 0, "skipped": 1}
    assert done.observed_value == {"exit_code": 0, **counts}, detail(done)["output_tail"]
    assert sorted(_files(home)) == before  # the person's cache is left as it was


def test_a_relative_writable_place_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(
        InvalidInput, match=r"writable\[0\]: .*got 'build/out', expected an absolute path"
    ):
        config_from(check('writable = ["build/out"]'), tmp_path)
    config_from(check(f"writable = [{json.dumps(str(tmp_path))}]"), tmp_path)


def _python_with_user_site(tmp_path: Path) -> Path:
    """A virtual environment that reads the user's site-packages (as a system Python does),
    with this one's packages (pytest) on its path."""
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        check=True,
    )
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import site; print(site.getsitepackages()[0])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = [p for p in sys.path if p.endswith("site-packages")]
    (Path(site) / "ours.pth").write_text("\n".join(ours) + "\n")
    return python


def _user_site(python: Path, home: Path) -> Path:
    found = subprocess.run(
        [str(python), "-c", "import site; print(site.getusersitepackages())"],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(home)},
    ).stdout.strip()
    return Path(found)


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"42")

    def log_message(self, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


@contextmanager
def _answering_server() -> Iterator[int]:
    server = _Server(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_the_sandbox_probe_is_started_once_per_process_and_always_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process that decides many stops (a server, a batch) asks bubblewrap once: a probe
    started after the answer was known would be waited for by nobody."""
    asked: dict[str, object] = {}
    monkeypatch.setattr(_isolation, "_asked", asked)
    monkeypatch.setattr(_isolation, "_answered", {}, raising=False)
    _isolation.probe_soon()
    assert len(asked) == 1
    probe = next(iter(asked.values()))
    assert _isolation.wrap(["true"], _isolation.Isolation(), [], [], os.environ, Path.cwd()).by
    assert asked == {}
    assert isinstance(probe, subprocess.Popen)
    assert probe.returncode == 0  # waited for
    for _ in range(3):
        _isolation.probe_soon()
    assert asked == {}
