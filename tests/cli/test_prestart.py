"""``donegate collect`` starting its test command before loading the models: the run started
early is the run that counts, exactly once, and one that nothing takes over is stopped."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from donegate.cli import main
from donegate.cli.prestart import Flags, prestart
from donegate.exitcodes import ExitCode
from donegate.instant import Instant
from donegate.sealed import _launch

PY = json.dumps(sys.executable)


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DONEGATE_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch) -> list[_launch.Started]:
    """Every run started, early or not."""
    made: list[_launch.Started] = []
    real = _launch.start

    def counted(launch: _launch.Launch, place: _launch.Place) -> _launch.Started | _launch.Refusal:
        begun = real(launch, place)
        if isinstance(begun, _launch.Started):
            made.append(begun)
        return begun

    monkeypatch.setattr(_launch, "start", counted)
    return made


def config(tmp_path: Path, code: str, extra: str = "") -> Path:
    path = tmp_path / "donegate.toml"
    body = f"""
        {extra}
        [[checks]]
        check_type = "test_run"
        command = [{PY}, "-c", {json.dumps(code)}]
        """
    path.write_text(textwrap.dedent(body))
    return path


def flags(path: Path, *more: str) -> list[str]:
    return ["collect", "--config", str(path), "--task-id", "t-1", *more]


def test_the_run_started_early_is_the_one_that_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], starts: list[_launch.Started]
) -> None:
    runs = tmp_path / "runs"
    path = config(tmp_path, f"open({str(runs)!r}, 'a').write('x')")
    code = main(flags(path, "--mutation", "file_write:src/a.py", "--json"))
    out = json.loads(capsys.readouterr().out)
    assert code == ExitCode.VERIFIED
    assert len(starts) == 1
    assert runs.read_text() == "x"
    mutation, evidence = out["mutations"][0], out["evidence"][0]
    assert Instant.parse(mutation["at"]).key < Instant.parse(evidence["at"]).key


def test_a_run_nothing_takes_over_is_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], starts: list[_launch.Started]
) -> None:
    path = config(tmp_path, "import time; time.sleep(60)", '[policy]\non_unverified = "nope"')
    began = time.monotonic()
    assert main(flags(path)) == ExitCode.INVALID_INPUT
    assert time.monotonic() - began < 30
    assert "policy.on_unverified" in capsys.readouterr().err
    (early,) = starts
    assert not early.fits(early.launch, early.place)  # stopped, not waited for


def test_a_run_started_for_other_arguments_is_not_taken_over(tmp_path: Path) -> None:
    path = config(tmp_path, "pass")
    early = prestart(flags(path, "--mutation", "file_write:a.py")[1:])
    assert early is not None
    try:
        assert early.run_for(Flags(path, "t-1", "", ("file_write:b.py",))) is None
        assert early.run_for(Flags(path, "t-1", "", ("file_write:a.py",))) is early.started
    finally:
        early.close()


@pytest.mark.parametrize(
    "more",
    [
        ["claim.json"],
        ["--help"],
        ["--config", "other.toml"],
        ["--mutation", "no-colon"],
        ["--mutation"],
        ["--json=yes"],
    ],
)
def test_what_it_does_not_recognise_is_left_to_click(tmp_path: Path, more: list[str]) -> None:
    assert prestart(flags(config(tmp_path, "pass"), *more)[1:]) is None


@pytest.mark.parametrize(
    "extra",
    [
        'shell = "yes"',
        "timeout_s = -5",
        'runner = "pytest"',
        "env = { A = 1 }",
        "unknown = 1",
    ],
)
def test_a_check_it_does_not_recognise_is_left_to_the_models(tmp_path: Path, extra: str) -> None:
    path = config(tmp_path, "pass")
    path.write_text(path.read_text() + extra + "\n")
    assert prestart(flags(path)[1:]) is None


def test_a_protected_write_starts_nothing_early(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], starts: list[_launch.Started]
) -> None:
    path = config(tmp_path, "pass")
    assert main(flags(path, "--mutation", "file_write:conftest.py")) == ExitCode.UNVERIFIED
    assert starts == []
    assert "protected pattern 'conftest.py'" in capsys.readouterr().err


def test_a_warm_bytecode_store_starts_the_command_without_loading_openssl(
    tmp_path: Path, state_dir: Path
) -> None:
    """``hashlib`` loads OpenSSL, 3 ms before the command can start: the store's prefix is
    named with CPython's own SHA-256, and a library source whose stat holds is not read."""
    path = config(tmp_path, "import json")
    assert main(flags(path, "--mutation", "file_write:src/a.py")) == ExitCode.VERIFIED
    assert list(state_dir.glob("bytecode/*/prefixes/*/**/json/*.pyc"))  # the run's imports
    code = (
        "import sys; from donegate.cli.prestart import prestart; "
        f"early = prestart({flags(path, '--mutation', 'file_write:src/a.py')[1:]!r}); "
        "print(early is not None, 'hashlib' in sys.modules); early.close()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"]
