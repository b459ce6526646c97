"""``test_run`` against real pytest runs on small projects made in tmp_path.

Each cheating pattern from the research note that concerns tests has a case here: a run that
shows nothing must never read as a pass.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from donegate.claim import Claim, Evidence
from tests.checks.support import collect_one, write

PY = json.dumps(sys.executable)
PYTEST = f'[{PY}, "-m", "pytest", "-q", "-p", "no:cacheprovider"'

PASSING = {
    "tests/test_billing.py": """
        def test_zip_update():
            assert 1 + 1 == 2

        def test_other():
            assert True
    """
}
FAILING = {
    "tests/test_billing.py": """
        def test_zip_update():
            assert 1 + 1 == 3

        def test_other():
            assert True
    """
}


def check(command: str, extra: str = "") -> str:
    return f"""
        [[checks]]
        check_type = "test_run"
        command = {command}
        timeout_s = 60
        {extra}
    """


def only(claim: Claim) -> Evidence:
    assert len(claim.evidence) == 1
    return claim.evidence[0]


def detail(item: Evidence) -> dict[str, object]:
    extra = item.model_extra or {}
    value = extra["detail"]
    assert isinstance(value, dict)
    return value


def state(claim: Claim) -> str:
    assert claim.verdict is not None
    return claim.verdict.state


def test_passing_run_verifies_with_counts_from_the_witness(tmp_path: Path) -> None:
    write(tmp_path, PASSING)
    done = collect_one(check(PYTEST + "]"), tmp_path, "src/billing.py")
    item = only(done)
    assert item.verifier.kind == "independent"
    assert item.verifier.id.startswith("donegate/")
    assert item.observed_value == {
        "exit_code": 0,
        "passed": 2,
        "failed": 0,
        "errors": 0,
        "skipped": 0,
    }
    assert detail(item)["counts_from"] == "witness"
    assert item.covers == ["m1"]
    assert state(done) == "verified"


def test_junit_report_is_written_outside_the_workspace(tmp_path: Path) -> None:
    write(tmp_path, PASSING)
    collect_one(check(PYTEST + "]"), tmp_path, "src/billing.py")
    assert not list(tmp_path.rglob("*.xml"))


def test_failing_run_refutes(tmp_path: Path) -> None:
    write(tmp_path, FAILING)
    done = collect_one(check(PYTEST + "]"), tmp_path, "src/billing.py")
    assert only(done).observed_value == {
        "exit_code": 1,
        "passed": 1,
        "failed": 1,
        "errors": 0,
        "skipped": 0,
    }
    assert state(done) == "refuted"


def test_no_tests_collected_is_absent(tmp_path: Path) -> None:
    write(tmp_path, {"tests/test_nothing.py": "x = 1\n"})
    done = collect_one(check(PYTEST + "]"), tmp_path, "src/billing.py")
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "observed_value" not in item.model_fields_set
    assert "no tests collected" in str(detail(item)["why_not_counted"])
    assert state(done) == "unverified"


def test_all_skipped_is_absent(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tests/test_skip.py": """
                import pytest

                @pytest.mark.skip(reason="later")
                def test_a():
                    assert False

                @pytest.mark.xfail(reason="known")
                def test_b():
                    assert False
            """
        },
    )
    done = collect_one(check(PYTEST + "]"), tmp_path, "src/billing.py")
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "no test passed: 1 skipped, 1 xfailed" in str(detail(item)["why_not_counted"])
    assert state(done) == "unverified"


def test_pytest_usage_error_is_absent(tmp_path: Path) -> None:
    write(tmp_path, PASSING)
    done = collect_one(check(PYTEST + ', "--no-such-option"]'), tmp_path, "src/billing.py")
    assert "usage error" in str(detail(only(done))["why_not_counted"])
    assert state(done) == "unverified"


def test_conftest_written_by_the_agent_makes_the_run_not_count(tmp_path: Path) -> None:
    forced = """
        import pytest

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome = "passed"
    """
    write(tmp_path, {**FAILING, "conftest.py": forced})
    done = collect_one(check(PYTEST + "]"), tmp_path, "src/billing.py", "conftest.py")
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "'conftest.py'" in str(detail(item)["why_not_counted"])
    assert state(done) == "unverified"


@pytest.mark.parametrize("name", ["tests/conftest.py", "sitecustomize.py", "venv/lib/evil.pth"])
def test_runner_files_anywhere_make_the_run_not_count(tmp_path: Path, name: str) -> None:
    write(tmp_path, PASSING)
    done = collect_one(check(PYTEST + "]"), tmp_path, name)
    assert only(done).verifier.kind == "absent"
    assert state(done) == "unverified"


def test_conftest_that_rewrites_the_exit_status_is_caught_by_the_report(tmp_path: Path) -> None:
    # Not declared as a mutation: the JUnit report still lists the failure.
    rewrite = """
        def pytest_sessionfinish(session, exitstatus):
            session.exitstatus = 0
    """
    write(tmp_path, {**FAILING, "conftest.py": rewrite})
    done = collect_one(check(PYTEST + "]"), tmp_path, "src/billing.py")
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "exit status 0, but the report lists 1 failed" in str(detail(item)["why_not_counted"])
    assert state(done) == "unverified"


@pytest.mark.parametrize(
    "target", ["tests/test_billing.py", "./tests/test_billing.py", "{root}/tests/test_billing.py"]
)
def test_edited_protected_test_makes_the_run_not_count(tmp_path: Path, target: str) -> None:
    write(tmp_path, PASSING)
    config = check(PYTEST + "]", 'protect = ["tests/**"]')
    done = collect_one(config, tmp_path, "src/billing.py", target.format(root=tmp_path))
    item = only(done)
    assert item.verifier.kind == "absent"
    why = str(detail(item)["why_not_counted"])
    assert "tests/test_billing.py" in why
    assert "tests/**" in why
    assert state(done) == "unverified"


@pytest.mark.parametrize("pattern", ["tests/", "/tests/", "tests/**", "test_*.py"])
def test_protect_reads_its_patterns_as_the_workspace_does(tmp_path: Path, pattern: str) -> None:
    """``tests/`` protects everything below it, as it ignores everything below it: the run's
    protection read it as the name ``tests`` alone, and let a test edit judge the run."""
    write(tmp_path, PASSING)
    config = check(PYTEST + "]", f"protect = [{pattern!r}]")
    done = collect_one(config, tmp_path, "src/billing.py", "tests/test_billing.py")
    assert only(done).verifier.kind == "absent"
    assert state(done) == "unverified"


def test_protect_ignores_other_writes(tmp_path: Path) -> None:
    write(tmp_path, PASSING)
    config = check(PYTEST + "]", 'protect = ["tests/**"]')
    assert state(collect_one(config, tmp_path, "src/tests_helper.py")) == "verified"


def test_hanging_test_is_killed_with_its_process_group(tmp_path: Path) -> None:
    # The child beats into a file: its pid may be another namespace's (an isolated run), its
    # heartbeat is the same everywhere.
    beats = tmp_path / "child.beats"
    child = f"import time\nwhile True:\n open({str(beats)!r}, 'a').write('.'); time.sleep(0.05)"
    hang = f"""
        import subprocess, sys, time

        def test_hangs():
            subprocess.Popen([sys.executable, "-c", {child!r}])
            time.sleep(300)
    """
    write(tmp_path, {"tests/test_hang.py": hang})
    # Long enough for pytest to start on a loaded machine (with a fresh bytecode cache).
    config = check(PYTEST + "]").replace("timeout_s = 60", "timeout_s = 20")
    done = collect_one(config, tmp_path, "src/billing.py")
    item = only(done)
    assert item.verifier.kind == "absent"
    assert "timed out after 20 s" in str(detail(item)["why_not_counted"])
    assert state(done) == "unverified"
    assert beats.stat().st_size > 0  # the child did run
    assert not _beating(beats)


def _beating(beats: Path) -> bool:
    before = beats.stat().st_size
    time.sleep(1.0)
    return beats.stat().st_size != before


MUST = """
    import pytest

    def test_ok():
        assert True

    @pytest.mark.skip(reason="later")
    def test_skipped():
        assert True

    @pytest.mark.xfail(reason="known")
    def test_xfailed():
        assert False

    def test_deselected():
        assert True

    class TestGroup:
        def test_in_class(self):
            assert True
"""


@pytest.mark.parametrize(
    ("node", "status"),
    [
        ("tests/test_must.py::test_skipped", "skipped"),
        ("tests/test_must.py::test_xfailed", "xfailed"),
        ("tests/test_must.py::test_deselected", "deselected"),
        ("tests/test_must.py::test_never_written", "absent"),
    ],
)
def test_must_pass_that_did_not_pass_is_absent(tmp_path: Path, node: str, status: str) -> None:
    write(tmp_path, {"tests/test_must.py": MUST})
    command = PYTEST + ', "-k", "not deselected"]'
    done = collect_one(check(command, f"must_pass = [{json.dumps(node)}]"), tmp_path, "src/a.py")
    item = only(done)
    assert item.verifier.kind == "absent"
    assert f"{node} ({status})" in str(detail(item)["why_not_counted"])
    assert state(done) == "unverified"


def test_must_pass_that_passed_verifies(tmp_path: Path) -> None:
    write(tmp_path, {"tests/test_must.py": MUST})
    nodes = json.dumps(
        ["tests/test_must.py::test_ok", "tests/test_must.py::TestGroup::test_in_class"]
    )
    done = collect_one(check(PYTEST + "]", f"must_pass = {nodes}"), tmp_path, "src/a.py")
    assert detail(only(done))["must_pass"] == {
        "tests/test_must.py::test_ok": "passed",
        "tests/test_must.py::TestGroup::test_in_class": "passed",
    }
    assert state(done) == "verified"


def test_pipe_to_tail_cannot_mask_the_exit_status(tmp_path: Path) -> None:
    write(tmp_path, FAILING)
    command = json.dumps(f"{sys.executable} -m pytest -q -p no:cacheprovider | tail -n 3")
    done = collect_one(check(command, "shell = true"), tmp_path, "src/billing.py")
    item = only(done)
    assert isinstance(item.observed_value, dict)
    assert item.observed_value["exit_code"] == 1
    assert detail(item)["counts_from"] == "witness"
    assert state(done) == "refuted"


def test_trailing_true_cannot_mask_failures(tmp_path: Path) -> None:
    write(tmp_path, FAILING)
    command = json.dumps(f"{sys.executable} -m pytest -q -p no:cacheprovider; true")
    done = collect_one(check(command, "shell = true"), tmp_path, "src/billing.py")
    assert only(done).verifier.kind == "absent"
    assert state(done) == "unverified"


def test_a_wrapper_that_drops_the_witness_does_not_count(tmp_path: Path) -> None:
    # A wrapper that drops the options donegate appends: only pytest's summary line is left, and
    # a summary line is text any process can print. Before the witness this read as "refuted".
    write(tmp_path, {**FAILING, "run.py": "import sys, pytest\nsys.exit(pytest.main(['-q']))\n"})
    done = collect_one(check(f'[{PY}, "run.py", "pytest"]'), tmp_path, "src/billing.py")
    item = only(done)
    assert "witness inside pytest left no report" in str(detail(item)["why_not_counted"])
    assert detail(item)["summary_counts"] == {"passed": 1, "failed": 1, "errors": 0, "skipped": 0}
    assert state(done) == "unverified"


def test_missing_runner_is_absent(tmp_path: Path) -> None:
    done = collect_one(check('["donegate-no-such-runner-xyz"]'), tmp_path, "src/a.py")
    why = str(detail(only(done))["why_not_counted"])
    assert "program 'donegate-no-such-runner-xyz' is not installed" in why
    assert state(done) == "unverified"


def test_missing_runner_in_a_shell_is_absent(tmp_path: Path) -> None:
    done = collect_one(check('"donegate-no-such-runner-xyz"', "shell = true"), tmp_path, "a.py")
    assert only(done).verifier.kind == "absent"
    assert state(done) == "unverified"


def test_plain_command_is_judged_by_its_exit_code(tmp_path: Path) -> None:
    ok = collect_one(check(f'[{PY}, "-c", "pass"]'), tmp_path, "src/a.py")
    bad = collect_one(check(f'[{PY}, "-c", "raise SystemExit(2)"]'), tmp_path, "src/a.py")
    assert only(ok).observed_value == {"exit_code": 0}
    assert state(ok) == "verified"
    assert state(bad) == "refuted"


def test_output_tail_is_bounded_and_masks_secrets(tmp_path: Path) -> None:
    script = "print('x' * 20000); print('postgresql://app:hunter2@db/x')"
    done = collect_one(check(f"[{PY}, {json.dumps('-c')}, {json.dumps(script)}]"), tmp_path, "a")
    tail = str(detail(only(done))["output_tail"])
    assert len(tail) <= 4000
    assert "hunter2" not in tail
    assert "postgresql://app:***@db/x" in tail


def test_covers_globs_choose_mutations(tmp_path: Path) -> None:
    write(tmp_path, PASSING)
    done = collect_one(
        check(PYTEST + "]", 'covers = ["src/**"]'), tmp_path, "src/billing.py", "docs/readme.md"
    )
    assert only(done).covers == ["m1"]
    assert state(done) == "unverified"  # m2 is covered by nothing
