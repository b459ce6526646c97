"""What a stop's verdict says, through the real hook on real git projects run by the real
toolchains: a refuted run names its failing tests (the first few, and how many) for every runner.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from donegate.demo import project
from donegate.demo.project import payload, run_hook
from donegate.ledger import Ledger
from tests.checks import runner_projects as rp

SESSION = "sess-messages"
PY = sys.executable


def configured(command: list[str], **extra: Any) -> str:
    """A ``donegate.toml`` with one ``test_run`` of ``command``, blocking when not verified."""
    lines = "".join(f"{key} = {_toml(value)}\n" for key, value in extra.items())
    return (
        '[policy]\nid = "code-change"\nrequires = ["test_run"]\non_unverified = "block"\n\n'
        f'[[checks]]\ncheck_type = "test_run"\ncommand = {json.dumps(command)}\n'
        f"timeout_s = 300\n{lines}"
    )


def _toml(value: object) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def committed(root: Path, files: dict[str, str], config: str) -> Path:
    """``files`` and ``config`` written into ``root`` and committed."""
    for name, text in {**files, "donegate.toml": config}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    project.git(root, "init", "-q")
    project.git(root, "add", "-A")
    project.git(root, "commit", "-q", "-m", "tests pass")
    return root


def stopped_after(root: Path, state: Path, path: str, text: str) -> dict[str, Any]:
    """The receipt of a stop after the agent wrote ``text`` to ``path``, and the host's answer."""
    started = run_hook(payload("SessionStart", SESSION, root, source="startup"), state)
    assert started.exit_code == 0, started.stderr
    (root / path).write_text(textwrap.dedent(text))
    run = run_hook(payload("Stop", SESSION, root, last_assistant_message="Done."), state)
    assert run.exit_code == 0, run.stderr
    with Ledger(state) as ledger:
        [receipt] = ledger.recent(10, session=SESSION)
    return {"receipt": receipt, "answer": run.answer}


def _linked(root: Path) -> None:
    (root / "node_modules").symlink_to(rp.node_modules(), target_is_directory=True)
    (root / ".gitignore").write_text("node_modules\n")


def _vitest(root: Path) -> tuple[str, str, str]:
    _linked(root)
    bin_ = str(root / "node_modules" / ".bin" / "vitest")
    committed(root, rp.VITEST, configured([bin_, "run"], runner="vitest"))
    return "src/sum.test.js", rp.VITEST_FAILING, "src/sum.test.js > sum > adds"


def _jest(root: Path) -> tuple[str, str, str]:
    _linked(root)
    bin_ = str(root / "node_modules" / ".bin" / "jest")
    committed(root, rp.JEST, configured([bin_], runner="jest"))
    return "src/sum.test.js", rp.JEST_FAILING, "src/sum.test.js > sum > adds"


def _node(root: Path) -> tuple[str, str, str]:
    node = rp.need("node", "Node 20 is part of the machine's toolchains")
    committed(root, rp.NODE, configured([node, "--test"]))
    return "test/sum.test.js", rp.NODE_FAILING, "sum > adds"


def _go(root: Path) -> tuple[str, str, str]:
    go = rp.need("go", "CI installs Debian's golang-go in .ci/run")
    committed(root, rp.GO, configured([go, "test", "./..."], env={"GOFLAGS": "-count=1"}))
    return "sum/sum_test.go", rp.GO_FAILING, "example.com/calc/sum.TestAdd"


def _cargo(root: Path) -> tuple[str, str, str]:
    cargo = rp.need("cargo", "Rust's cargo is part of the machine's toolchains")
    target = {"CARGO_TARGET_DIR": str(root.parent / "cargo-target")}
    committed(root, rp.CARGO, configured([cargo, "test", "--offline"], env=target))
    return "src/lib.rs", rp.CARGO_FAILING, "tests::adds"


RUNNERS: dict[str, Callable[[Path], tuple[str, str, str]]] = {
    "vitest": _vitest,
    "jest": _jest,
    "node": _node,
    "go": _go,
    "cargo": _cargo,
}


@pytest.mark.parametrize("runner", list(RUNNERS))
def test_a_refuted_run_names_its_failing_test_in_the_reason(runner: str, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    path, failing, test_id = RUNNERS[runner](root)
    stop = stopped_after(root, tmp_path / "state", path, failing)
    receipt = stop["receipt"]
    assert stop["answer"]["decision"] == "block"
    assert receipt.verdict == "refuted"
    reason = receipt.claim["verdict"]["reason"]
    assert reason.endswith(f"observed 1; 1 test failed: {test_id}.") or (
        runner == "cargo" and reason.endswith(f"observed 101; 1 test failed: {test_id}.")
    ), reason


JUNIT_WRITER = (
    "import pathlib; p = pathlib.Path('out/report.xml'); p.parent.mkdir(exist_ok=True); "
    "p.write_text(pathlib.Path('report.xml.in').read_text()); raise SystemExit(1)"
)


def _junit_cases(failing: int) -> str:
    cases = "".join(
        f'<testcase classname="tests" name="t{i}">'
        + ('<failure message="no"/>' if i < failing else "")
        + "</testcase>"
        for i in range(6)
    )
    return f'<?xml version="1.0"?><testsuites><testsuite name="t">{cases}</testsuite></testsuites>'


def test_a_refuted_junit_run_names_the_first_failing_tests_and_how_many(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    config = configured([PY, "-c", JUNIT_WRITER], report="junit:out/report.xml")
    committed(root, {"report.xml.in": _junit_cases(0), ".gitignore": "out/\n"}, config)
    stop = stopped_after(root, tmp_path / "state", "report.xml.in", _junit_cases(5))
    reason = stop["receipt"].claim["verdict"]["reason"]
    assert reason.endswith(
        "exit_code expected 0, observed 1; 5 tests failed: tests > t0, tests > t1, tests > t2 "
        "and 2 more."
    ), reason


def pytest_less(place: Path) -> Path:
    """The python of a new virtualenv at ``place``, which has no pytest."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(place)], check=True)
    return place / "bin" / "python"


def zip_project(root: Path, command: list[str]) -> Path:
    """The demo's zipcode project, its tests run by ``command``."""
    project.create(root)
    toml = root / "donegate.toml"
    toml.write_text(
        toml.read_text().replace(json.dumps(project.pytest_command()), json.dumps(command))
    )
    (root / ".gitignore").write_text(".venv/\n")
    project.git(root, "add", "-A")
    project.git(root, "commit", "-q", "-m", "the team's command")
    return root


def test_an_interpreter_without_pytest_lets_the_stop_go_unverified_and_tells_the_person(
    tmp_path: Path,
) -> None:
    python = pytest_less(tmp_path / "envs" / "team")
    root = zip_project(tmp_path / "repo", project.pytest_command(str(python)))
    stop = stopped_after(root, tmp_path / "state", "zipcode.py", project.FIXED)
    assert "decision" not in stop["answer"]  # not sent back: the agent cannot install it
    notice = stop["answer"]["systemMessage"]
    assert f"NOT verified: the checks could not run: the checks' interpreter {python} " in notice
    assert "has no pytest" in notice
    receipt = stop["receipt"]
    assert (receipt.verdict, receipt.reason) == ("unverified", "verifier_unavailable")


def test_a_test_command_not_installed_lets_the_stop_go_unverified(tmp_path: Path) -> None:
    root = zip_project(tmp_path / "repo", ["donegate-no-such-runner", "tests"])
    stop = stopped_after(root, tmp_path / "state", "zipcode.py", project.FIXED)
    assert "decision" not in stop["answer"]
    assert "'donegate-no-such-runner' is not installed" in stop["answer"]["systemMessage"]
    assert stop["receipt"].verdict == "unverified"


def test_an_interpreter_in_the_project_without_pytest_is_the_agents_to_restore(
    tmp_path: Path,
) -> None:
    # The agent writes the project, so it can have removed pytest from a virtualenv there (to
    # pass its failure off as the environment's): it is sent back, told what to restore.
    root = tmp_path / "repo"
    python = root / ".venv" / "bin" / "python"
    zip_project(root, project.pytest_command(str(python)))
    pytest_less(root / ".venv")  # ignored by git, as a project's virtualenv is
    stop = stopped_after(root, tmp_path / "state", "zipcode.py", project.FIXED)
    assert stop["answer"]["decision"] == "block"
    assert f"the checks' interpreter {python} has no pytest" in stop["answer"]["reason"]
    assert "(in the project: restore it)" in stop["answer"]["reason"]
    assert stop["receipt"].verdict == "unverified"
