"""``donegate collect`` and ``verify --enforce`` on the command line: exit codes and output."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from donegate.cli import main
from donegate.exitcodes import ExitCode
from donegate.sealed import _bytecode

PY = json.dumps(sys.executable)


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state directory of the test's own (collect keeps its bytecode store there)."""
    monkeypatch.setenv("DONEGATE_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def config(tmp_path: Path, code: str, policy: str = "") -> Path:
    path = tmp_path / "donegate.toml"
    path.write_text(
        textwrap.dedent(
            f"""
            {policy}
            [[checks]]
            check_type = "test_run"
            command = [{PY}, "-c", {json.dumps(code)}]
            """
        )
    )
    return path


def flags(path: Path) -> list[str]:
    return [
        "collect",
        "--config",
        str(path),
        "--task-id",
        "t-9",
        "--mutation",
        "file_write:src/a.py",
    ]


def test_claim_from_flags_verified_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([*flags(config(tmp_path, "pass")), "--claimed-outcome", "fixed it", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == ExitCode.VERIFIED
    assert out["task"] == {"id": "t-9"}
    assert out["claimed_outcome"] == "fixed it"
    assert out["mutations"][0]["kind"] == "file_write"
    assert out["mutations"][0]["target"] == "src/a.py"
    assert out["evidence"][0]["verifier"]["kind"] == "independent"
    assert out["verdict"]["state"] == "verified"


def test_claim_file_refuted_summary_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claim = {
        "spec_version": "0.1",
        "task": {"id": "t-1"},
        "claimed_outcome": "done",
        "mutations": [
            {"id": "m1", "kind": "file_write", "target": "a", "at": "2020-01-01T00:00:00Z"}
        ],
    }
    (tmp_path / "claim.json").write_text(json.dumps(claim))
    path = config(tmp_path, "raise SystemExit(1)")
    code = main(["collect", str(tmp_path / "claim.json"), "--config", str(path)])
    captured = capsys.readouterr()
    assert code == ExitCode.REFUTED
    assert captured.out == ""
    assert captured.err.startswith("refuted: t-1")


def test_absent_check_is_unverified_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config(tmp_path, "pass").with_name("donegate.toml")
    path.write_text(path.read_text().replace(PY, '"donegate-no-such-runner"'))
    assert main(flags(path)) == ExitCode.UNVERIFIED
    assert "why: the test command's program 'donegate-no-such-runner' is not installed" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("mode", "code", "warned"),
    [
        ("block", ExitCode.REFUTED, False),
        ("warn", ExitCode.OK, True),
        ("record", ExitCode.OK, False),
    ],
)
def test_enforce_on_collect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, code: int, warned: bool
) -> None:
    path = config(tmp_path, "raise SystemExit(1)", f'[policy]\non_unverified = "{mode}"')
    assert main([*flags(path), "--json"]) == ExitCode.REFUTED
    capsys.readouterr()
    assert main([*flags(path), "--json", "--enforce"]) == code
    assert ("warning: claim refuted" in capsys.readouterr().err) == warned


def test_enforce_on_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claim = {
        "spec_version": "0.1",
        "task": {"id": "t-1"},
        "claimed_outcome": "done",
        "policy": {"on_unverified": "warn"},
    }
    (tmp_path / "claim.json").write_text(json.dumps(claim))
    assert main(["verify", str(tmp_path / "claim.json")]) == ExitCode.UNVERIFIED
    assert main(["verify", str(tmp_path / "claim.json"), "--enforce"]) == ExitCode.OK
    assert "warning: claim unverified" in capsys.readouterr().err


def test_bad_config_is_exit_4_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config(tmp_path, "pass")
    path.write_text(path.read_text() + "timeout_s = -5\n")
    assert main(flags(path)) == ExitCode.INVALID_INPUT
    assert "checks[0].timeout_s" in capsys.readouterr().err


def test_missing_config_is_exit_4(tmp_path: Path) -> None:
    assert main(flags(tmp_path / "nope.toml")) == ExitCode.INVALID_INPUT


@pytest.mark.parametrize(
    "argv",
    [
        ["collect"],
        ["collect", "claim.json", "--task-id", "x"],
        ["collect", "--task-id", "x", "--mutation", "no-colon"],
    ],
)
def test_usage_errors_are_exit_2(tmp_path: Path, argv: list[str]) -> None:
    assert main([*argv, "--config", str(config(tmp_path, "pass"))]) == ExitCode.USAGE


def test_collect_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == ExitCode.OK
    assert "collect" in capsys.readouterr().out


def test_a_run_leaves_its_imports_compiled_in_the_state_directory(
    tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The learning budget is time: on a loaded machine 0.2 s may not reach json's modules.
    monkeypatch.setattr(_bytecode, "MIN_LEARN_S", 60.0)
    main([*flags(config(tmp_path, "import json"))])
    tag = sys.implementation.cache_tag
    (manifest,) = state_dir.glob(f"bytecode/{tag}/prefixes/*.list")
    assert f"/json/decoder.{tag}.pyc\n" in manifest.read_text()


def test_without_a_usable_state_directory_collect_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("DONEGATE_STATE_DIR", str(blocker))
    assert main([*flags(config(tmp_path, "import json"))]) == ExitCode.VERIFIED


def test_a_project_run_in_place_keeps_its_tests_compiled_and_an_edit_is_still_run(
    tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest rewrites a test module's assertions at every run under a fresh cache: the store
    keeps its compile, and drops it once the module changes, however the change is hidden."""
    monkeypatch.setattr(_bytecode, "MIN_LEARN_S", 60.0)  # all the first run imported is kept
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    module = project / "tests" / "test_zip.py"
    module.write_text("def test_zip():\n    assert '94107' == '94107'\n")
    path = project / "donegate.toml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    path.write_text(f'[[checks]]\ncheck_type = "test_run"\ncommand = {json.dumps(command)}\n')
    assert main(flags(path)) == ExitCode.VERIFIED
    (manifest,) = state_dir.glob("bytecode/*/prefixes/*.list")
    assert "/tests/test_zip.cpython-" in manifest.read_text()
    assert main(flags(path)) == ExitCode.VERIFIED  # from the store
    stamp = module.stat().st_mtime_ns
    module.write_text("def test_zip():\n    assert '94107' == '94108'\n")  # the same size
    os.utime(module, ns=(stamp, stamp))
    assert main(flags(path)) != ExitCode.VERIFIED
