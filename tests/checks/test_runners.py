"""``test_run`` with runners other than pytest, each on a small real project run by the real
toolchain: a passing project verifies; a failing test (named), a skipped required test, an empty
run and a report the agent left behind each do not.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from donegate.claim import Claim, Evidence
from tests.checks import runner_projects as rp
from tests.checks.support import collect_one, detail, only, write


@dataclass(frozen=True)
class Project:
    """One runner's project: its files, how to run it, its failing variant, its test ids."""

    runner: str
    files: dict[str, str]
    test_file: str
    failing: str
    command: Callable[[Path], list[str]]
    passing_id: str
    skipped_id: str
    empty_args: list[str]
    env: dict[str, str]
    link_node_modules: bool = False

    def make(self, root: Path, *, failing: bool = False) -> Path:
        write(root, self.files)
        if failing:
            write(root, {self.test_file: self.failing})
        if self.link_node_modules:
            (root / "node_modules").symlink_to(rp.node_modules(), target_is_directory=True)
        return root


def _node_bin(name: str) -> Callable[[Path], list[str]]:
    return lambda root: [str(root / "node_modules" / ".bin" / name)]


def _vitest() -> Project:
    rp.node_modules()
    return Project(
        "vitest",
        rp.VITEST,
        "src/sum.test.js",
        rp.VITEST_FAILING,
        lambda root: [*_node_bin("vitest")(root), "run"],
        "src/sum.test.js > sum > adds",
        "src/sum.test.js > sum > later",
        ["--testNamePattern", "no such test"],
        {},
        link_node_modules=True,
    )


def _jest() -> Project:
    rp.node_modules()
    return Project(
        "jest",
        rp.JEST,
        "src/sum.test.js",
        rp.JEST_FAILING,
        _node_bin("jest"),
        "src/sum.test.js > sum > adds",
        "src/sum.test.js > sum > later",
        ["--testNamePattern", "no such test"],
        {},
        link_node_modules=True,
    )


def _node() -> Project:
    node = rp.need("node", "Node 20 is part of the machine's toolchains")
    return Project(
        "node",
        rp.NODE,
        "test/sum.test.js",
        rp.NODE_FAILING,
        lambda root: [node, "--test"],
        "sum > adds",
        "sum > later",
        ["--test-name-pattern", "no such test"],
        {},
    )


def _go(cache: Path) -> Project:
    go = rp.need("go", "CI installs Debian's golang-go in .ci/run")
    return Project(
        "go",
        rp.GO,
        "sum/sum_test.go",
        rp.GO_FAILING,
        lambda root: [go, "test", "./..."],
        "example.com/calc/sum.TestAdd/small",
        "example.com/calc/sum.TestLater",
        ["-run", "NoSuchTest"],
        {"GOFLAGS": "-count=1"},
    )


def _cargo(cache: Path) -> Project:
    cargo = rp.need("cargo", "Rust's cargo is part of the machine's toolchains")
    return Project(
        "cargo",
        rp.CARGO,
        "src/lib.rs",
        rp.CARGO_FAILING,
        lambda root: [cargo, "test", "--offline"],
        "tests::adds",
        "tests::later",
        ["no_such_test"],
        # One build directory for every case: each run rebuilds only what changed.
        {"CARGO_TARGET_DIR": str(cache / "cargo-target")},
    )


PROJECTS = ("vitest", "jest", "node", "go", "cargo")


@pytest.fixture(scope="module", params=PROJECTS)
def project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Project:
    cache = tmp_path_factory.mktemp("runner-cache")
    makers: dict[str, Callable[[], Project]] = {
        "vitest": _vitest,
        "jest": _jest,
        "node": _node,
        "go": lambda: _go(cache),
        "cargo": lambda: _cargo(cache),
    }
    return makers[request.param]()


def check(project: Project, root: Path, args: Sequence[str] = (), extra: str = "") -> str:
    command = [*project.command(root), *args]
    env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in project.env.items())
    return f"""
        [[checks]]
        check_type = "test_run"
        command = {json.dumps(command)}
        env = {{ {env} }}
        timeout_s = 300
        {extra}
    """


def run(
    project: Project, root: Path, args: Sequence[str] = (), extra: str = ""
) -> tuple[Claim, Evidence]:
    done = collect_one(check(project, root, args, extra), root, "src/calc.txt")
    return done, only(done)


def state(claim: Claim) -> str:
    assert claim.verdict is not None
    return claim.verdict.state


def test_passing_project_verifies_with_the_runners_counts(project: Project, tmp_path: Path) -> None:
    root = project.make(tmp_path)
    must = f"must_pass = [{json.dumps(project.passing_id)}]"
    done, item = run(project, root, extra=must)
    assert item.observed_value == {
        "exit_code": 0,
        "passed": 1 if project.runner != "go" else 2,  # go counts TestAdd and TestAdd/small
        "failed": 0,
        "errors": 0,
        "skipped": 1,
    }, detail(item)
    assert detail(item)["counts_from"] == project.runner
    assert detail(item)["must_pass"] == {project.passing_id: "passed"}
    assert state(done) == "verified"


def test_failing_test_refutes_and_is_named(project: Project, tmp_path: Path) -> None:
    root = project.make(tmp_path, failing=True)
    done, item = run(project, root)
    assert isinstance(item.observed_value, dict)
    assert item.observed_value["failed"] == 1
    failing = detail(item)["failing"]
    assert isinstance(failing, list)
    wanted = project.passing_id.removesuffix("/small")  # the failing Go test has no subtest
    assert wanted in failing
    assert state(done) == "refuted"


def test_skipped_required_test_does_not_verify(project: Project, tmp_path: Path) -> None:
    root = project.make(tmp_path)
    must = f"must_pass = [{json.dumps(project.skipped_id)}]"
    done, item = run(project, root, extra=must)
    assert item.observed_value is None
    assert detail(item)["must_pass"] == {project.skipped_id: "skipped"}
    assert state(done) != "verified"


def test_required_test_that_does_not_exist_does_not_verify(
    project: Project, tmp_path: Path
) -> None:
    root = project.make(tmp_path)
    missing = project.passing_id.replace("adds", "subtracts").replace("TestAdd", "TestSub")
    done, item = run(project, root, extra=f"must_pass = [{json.dumps(missing)}]")
    assert detail(item)["must_pass"] == {missing: "absent"}
    assert state(done) != "verified"


def test_empty_run_does_not_verify(project: Project, tmp_path: Path) -> None:
    root = project.make(tmp_path)
    done, item = run(project, root, args=project.empty_args)
    assert item.observed_value is None
    assert "no test passed" in str(detail(item)["why_not_counted"]), detail(item)
    assert state(done) != "verified"


def test_report_left_in_the_tree_is_not_read(project: Project, tmp_path: Path) -> None:
    # The agent leaves passing reports of every kind behind, then the tests fail: the run is
    # judged by the report donegate asked for in its own scratch directory.
    root = project.make(tmp_path, failing=True)
    write(root, {"report.xml": PASSING_JUNIT, "report.json": "{}", "report-go": ""})
    done, item = run(project, root)
    assert isinstance(item.observed_value, dict)
    assert item.observed_value["failed"] == 1
    assert state(done) == "refuted"
    assert (root / "report.xml").read_text() == PASSING_JUNIT


PASSING_JUNIT = """<?xml version="1.0"?>
<testsuites><testsuite name="t">
<testcase classname="tests" name="adds"/>
</testsuite></testsuites>
"""
PY = sys.executable


def _junit_check(command: list[str], extra: str = "") -> str:
    return f"""
        [[checks]]
        check_type = "test_run"
        command = {json.dumps(command)}
        report = "junit:out/report.xml"
        timeout_s = 60
        {extra}
    """


def _writer(text: str) -> list[str]:
    script = "import pathlib, sys; p = pathlib.Path('out/report.xml'); "
    script += "p.parent.mkdir(exist_ok=True); p.write_text(sys.argv[1])"
    return [PY, "-c", script, text]


def test_junit_report_written_by_the_run_verifies(tmp_path: Path) -> None:
    toml = _junit_check(_writer(PASSING_JUNIT), 'must_pass = ["tests > adds"]')
    done = collect_one(toml, tmp_path, "src/calc.txt")
    item = only(done)
    assert item.observed_value == {
        "exit_code": 0,
        "passed": 1,
        "failed": 0,
        "errors": 0,
        "skipped": 0,
    }
    assert detail(item)["must_pass"] == {"tests > adds": "passed"}
    assert state(done) == "verified"


def test_stale_junit_report_planted_before_the_run_does_not_verify(tmp_path: Path) -> None:
    write(tmp_path, {"out/report.xml": PASSING_JUNIT})
    # Control: the planted file is a passing report, as a reader that trusts it would see.
    from donegate.checks.runners import _jsreports

    planted = _jsreports.junit((tmp_path / "out/report.xml").read_bytes(), "junit")
    assert planted is not None
    assert planted.counts()["passed"] == 1
    done = collect_one(_junit_check([PY, "-c", "pass"]), tmp_path, "src/calc.txt")
    item = only(done)
    assert item.observed_value is None
    assert "wrote no report" in str(detail(item)["why_not_counted"]), item
    assert not (tmp_path / "out/report.xml").exists()
    assert state(done) != "verified"


def test_junit_report_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    write(tmp_path, {"elsewhere.xml": PASSING_JUNIT})
    script = "import os; os.makedirs('out', exist_ok=True); "
    script += "os.symlink('../elsewhere.xml', 'out/report.xml')"
    done = collect_one(_junit_check([PY, "-c", script]), tmp_path, "src/calc.txt")
    item = only(done)
    assert (tmp_path / "out/report.xml").is_symlink()  # the attack happened
    assert item.observed_value is None
    assert "could not be opened" in str(detail(item)["why_not_counted"])
    assert state(done) != "verified"


def test_junit_failures_are_named(tmp_path: Path) -> None:
    failing = PASSING_JUNIT.replace(
        '<testcase classname="tests" name="adds"/>',
        '<testcase classname="tests" name="adds"><failure message="no"/></testcase>'
        '<testcase classname="tests" name="other"/>',
    )
    done = collect_one(_junit_check(_writer(failing)), tmp_path, "src/calc.txt")
    item = only(done)
    assert detail(item)["failing"] == ["tests > adds"]
    assert state(done) != "verified"


FORGING_PROCESSOR = """
    module.exports = (results) => {
      for (const file of results.testResults) {
        for (const test of file.testResults) test.status = 'passed';
        file.numFailingTests = 0;
        file.failureMessage = null;
      }
      results.numFailedTests = 0;
      results.numFailedTestSuites = 0;
      results.success = true;
      return results;
    };
"""


def test_jest_config_written_by_the_agent_makes_the_run_not_count(tmp_path: Path) -> None:
    project = _jest()
    root = project.make(tmp_path, failing=True)
    write(
        root,
        {
            "jest.config.js": "module.exports = { testResultsProcessor: './forge.js' };\n",
            "forge.js": FORGING_PROCESSOR,
        },
    )
    # Control: with runner files not protected, the forged report turns the failure into a pass.
    toml = check(project, root, extra="protect_runner_files = false")
    forged = only(collect_one(toml, root, "jest.config.js"))
    assert isinstance(forged.observed_value, dict)
    assert forged.observed_value["failed"] == 0
    assert forged.observed_value["passed"] == 1
    done = collect_one(check(project, root), root, "jest.config.js")
    item = only(done)
    assert item.observed_value is None
    assert detail(item)["protected_write"] == "jest.config.js"
    assert state(done) != "verified"


@pytest.mark.parametrize(
    "name", ["package.json", "vitest.config.ts", "jest.config.js", "Cargo.toml", "go.mod"]
)
def test_runner_config_files_are_runner_files(tmp_path: Path, name: str) -> None:
    toml = check(_node(), tmp_path)
    item = only(collect_one(toml, tmp_path, name))
    assert item.observed_value is None
    assert detail(item)["protected_write"] == name
