"""The runners' report readers on real report text, the settings, and the flags donegate adds;
plus the attacks that need one toolchain: a Rust test that prints a forged result line, a Go
package that does not build.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from pydantic import ValidationError

from donegate.checks import runners
from donegate.checks.runners import _gotest, _jsreports, _libtest, _outcomes, _reportfile
from donegate.checks.test_run import TestRunSettings
from tests.checks import runner_projects as rp
from tests.checks.support import collect_one, detail, only, write


def _go_events(*events: tuple[str, str, str]) -> bytes:
    lines = [
        json.dumps({"Action": a, "Package": p, "Test": t} if t else {"Action": a, "Package": p})
        for a, p, t in events
    ]
    return "\n".join(lines).encode()


def test_go_short_ids_match_one_package_and_are_ambiguous_across_two() -> None:
    report = _go_events(
        ("pass", "example.com/a", "TestX"),
        ("pass", "example.com/b", "TestX"),
        ("pass", "example.com/b", "TestY/sub"),
        ("pass", "example.com/a", ""),
    )
    outcomes = _gotest.read(report)
    assert outcomes is not None
    assert _outcomes.status("TestY/sub", outcomes) == "passed"
    assert _outcomes.status("example.com/a.TestX", outcomes) == "passed"
    assert _outcomes.status("TestX", outcomes) == "ambiguous"
    assert _outcomes.status("TestZ", outcomes) == "absent"


def test_go_package_failing_without_a_failed_test_is_an_error() -> None:
    outcomes = _gotest.read(_go_events(("fail", "example.com/broken", "")))
    assert outcomes is not None
    assert outcomes.failing() == ["example.com/broken"]
    assert outcomes.counts()["errors"] == 1


def test_go_output_without_events_is_no_report() -> None:
    assert _gotest.read(b"ok  \texample.com/a\t0.01s\n") is None


LIBTEST = """
running 2 tests
test tests::later ... ignored
test tests::adds ... ok

test result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests calc

running 1 test
test src/lib.rs - add (line 3) ... FAILED

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
"""


def test_libtest_lines_and_result_lines() -> None:
    outcomes = _libtest.read(LIBTEST.encode())
    assert outcomes is not None
    assert outcomes.counts() == {"passed": 1, "failed": 1, "errors": 0, "skipped": 1}
    assert outcomes.failing() == ["src/lib.rs - add (line 3)"]
    assert not outcomes.problems


def test_libtest_forged_line_makes_the_counts_disagree() -> None:
    forged = LIBTEST.replace(
        "test tests::adds ... ok\n", "test tests::adds ... ok\ntest x ... ok\n"
    )
    outcomes = _libtest.read(forged.encode())
    assert outcomes is not None
    assert outcomes.problems


def test_libtest_without_a_result_line_is_no_report() -> None:
    assert _libtest.read(b"error[E0425]: cannot find value `x`\n") is None


def test_jest_file_that_did_not_load_is_an_error(tmp_path: Path) -> None:
    report = {
        "testResults": [
            {
                "name": str(tmp_path / "src/a.test.js"),
                "status": "failed",
                "message": "boom",
                "assertionResults": [],
            }
        ]
    }
    outcomes = _jsreports.jest(json.dumps(report).encode(), tmp_path)
    assert outcomes is not None
    assert outcomes.failing() == ["src/a.test.js"]


def test_junit_that_is_not_xml_is_no_report() -> None:
    assert _jsreports.junit(b"<testsuites", "junit") is None


@pytest.mark.parametrize(
    ("argv", "runner"),
    [
        (["npx", "vitest", "run"], "vitest"),
        (["node_modules/.bin/jest"], "jest"),
        (["go", "test", "./..."], "go"),
        (["cargo", "test"], "cargo"),
        (["node", "--test"], "node"),
        (["python", "-m", "pytest"], "pytest"),
        (["npm", "test"], None),
        (["go", "build"], None),
    ],
)
def test_runner_told_from_the_command(argv: list[str], runner: str | None) -> None:
    assert runners.detect(argv) == runner


def test_reporter_flags_follow_double_dash_for_a_package_manager(tmp_path: Path) -> None:
    argv, report = runners.with_reporter("vitest", ["npm", "test"], tmp_path)
    assert argv[:3] == ["npm", "test", "--"]
    assert f"--outputFile.junit={report}" in argv
    go, _ = runners.with_reporter("go", ["go", "test", "./..."], tmp_path)
    assert go[-4:] == ["go", "test", "-json", "./..."]


def test_runner_that_cannot_take_flags_is_refused(tmp_path: Path) -> None:
    with pytest.raises(runners.RunnerCommandError):
        runners.with_reporter("go", ["make", "check"], tmp_path)


@pytest.mark.parametrize(
    "table",
    [
        {"command": ["x"], "runner": "junit"},
        {"command": ["x"], "runner": "go", "report": "junit:a.xml"},
        {"command": ["x"], "report": "xml:a.xml"},
        {"command": ["go", "test"], "must_pass": [" "]},
    ],
)
def test_settings_refused(table: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        TestRunSettings.model_validate({"check_type": "test_run", **table})


def test_runner_ids_are_not_read_as_pytest_node_ids() -> None:
    settings = TestRunSettings.model_validate(
        {"check_type": "test_run", "command": ["go", "test", "./..."], "must_pass": ["TestAdd/x"]}
    )
    assert settings.runner_kind() == "go"
    assert not settings.is_pytest()


def test_shell_command_with_a_flag_runner_is_refused(tmp_path: Path) -> None:
    toml = """
        [[checks]]
        check_type = "test_run"
        command = "go test ./..."
        shell = true
        runner = "go"
    """
    item = only(collect_one(toml, tmp_path, "src/calc.txt"))
    assert item.observed_value is None
    assert "argv command" in str(detail(item)["why_not_counted"])


def test_rust_test_printing_a_forged_result_line_is_not_believed(tmp_path: Path) -> None:
    cargo = rp.need("cargo", "Rust's cargo is part of the machine's toolchains")
    # The required test does not exist; a passing test prints the line libtest would print.
    forged = rp.CARGO["src/lib.rs"].replace(
        "fn adds() {",
        'fn adds() {\n                println!("\\ntest tests::required ... ok");',
    )
    write(tmp_path, {**rp.CARGO, "src/lib.rs": forged})
    command = [cargo, "test", "--offline", "--", "--nocapture"]
    toml = f"""
        [[checks]]
        check_type = "test_run"
        command = {json.dumps(command)}
        must_pass = ["tests::required"]
        timeout_s = 300
    """
    item = only(collect_one(toml, tmp_path, "src/calc.txt"))
    output = str(detail(item)["output_tail"])
    # Control: read line by line alone, the forged line proves the required test.
    naive = _libtest.read(output.encode())
    assert naive is not None
    assert _outcomes.status("tests::required", naive) == "passed"
    assert item.observed_value is None
    assert "does not add up" in str(detail(item)["why_not_counted"])


def test_go_package_that_does_not_build_is_named(tmp_path: Path) -> None:
    go = rp.need("go", "CI installs Debian's golang-go in .ci/run")
    broken = textwrap.dedent(rp.GO_FAILING).replace("Add(1, 2)", "Add(1, 2, 3)")
    write(tmp_path, {**rp.GO, "sum/sum_test.go": broken})
    toml = f"""
        [[checks]]
        check_type = "test_run"
        command = {json.dumps([go, "test", "./..."])}
        env = {{ GOFLAGS = "-count=1" }}
        timeout_s = 300
    """
    item = only(collect_one(toml, tmp_path, "src/calc.txt"))
    assert detail(item)["failing"] == ["example.com/calc/sum"]
    assert item.observed_value != {"exit_code": 0}


def test_report_file_older_than_the_run_or_the_same_inode_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "report.xml"
    path.write_text("<testsuites/>")
    found = path.stat()
    data, why = _reportfile.read(path)
    assert data == b"<testsuites/>"  # control: a plain read takes it
    later = _reportfile.Before(path, None, found.st_mtime_ns + 10**9)
    assert _reportfile.read_fresh(later) == (
        None,
        f"the report {str(path)!r} is older than the run",
    )
    same = _reportfile.Before(path, (found.st_dev, found.st_ino), found.st_mtime_ns)
    data, why = _reportfile.read_fresh(same)
    assert data is None
    assert "was there before the run" in str(why)


def test_clearing_removes_a_planted_report_and_refuses_a_directory(tmp_path: Path) -> None:
    planted = tmp_path / "report.xml"
    planted.write_text("<testsuites/>")
    before = _reportfile.clear(planted)
    assert not planted.exists()
    assert before.problem is None
    (tmp_path / "dir.xml").mkdir()
    assert "is a directory" in str(_reportfile.clear(tmp_path / "dir.xml").problem)
