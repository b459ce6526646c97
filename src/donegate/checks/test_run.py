"""``test_run``: run the team's test command after the last write, and read what really ran.

Not a pass, whatever the exit code: a runner that is missing, a timeout, no test run (pytest exit
5, everything skipped or deselected), a ``must_pass`` test that did not actually pass, a status
that says 0 while the report lists failures, or a write to a protected file (an agent that edits
the test it must pass has shown nothing).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, JsonValue, model_validator

from donegate.checks import globs
from donegate.checks._junit import TestReport, case_outcome, read_junit, read_summary
from donegate.checks._process import RunResult, run_group
from donegate.checks.base import CheckContext, CheckSettings, Observation, PositiveSeconds
from donegate.workspace.runnerfiles import RUNNER_FILES

_COUNT_KEYS = ("passed", "failed", "errors", "skipped")
_FAILING = ("failed", "error")
MAX_FAILING_NAMED = 20
# pytest: 3 internal error, 4 usage error (a broken conftest), 5 no tests collected.
_PYTEST_NOTHING_RAN = {3: "pytest internal error", 4: "pytest usage error", 5: "no tests collected"}
_PYTEST_IN_SHELL = re.compile(r"(?:^|[\s/;&|(])(?:py\.test|pytest)(?:\s|$|;|&|\|)")


def _count_like(key: str, value: JsonValue) -> bool:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    return key in ("exit_code", *_COUNT_KEYS) and is_int


def _default_expected() -> dict[str, JsonValue]:
    return {"exit_code": 0}


class TestRunSettings(CheckSettings):
    """A ``test_run`` table: ``command`` is an argv list, or a string only with ``shell = true``."""

    __test__ = False

    command: list[Annotated[str, Field(min_length=1)]] | str
    shell: bool = False
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: PositiveSeconds = 900.0
    must_pass: list[str] = Field(default_factory=list)
    protect: list[str] = Field(default_factory=list)
    protect_runner_files: bool = True
    expected: dict[str, JsonValue] = Field(default_factory=_default_expected)

    @model_validator(mode="after")
    def _command_shape(self) -> TestRunSettings:
        if isinstance(self.command, str) != self.shell:
            raise ValueError("command is a list of arguments, or a string with shell = true")
        if not self.command:
            raise ValueError("command is empty")
        if not all(_count_like(k, v) for k, v in self.expected.items()):
            raise ValueError(
                "expected holds integers under exit_code, passed, failed, errors, skipped"
            )
        return self

    def default_target(self) -> str:
        """The command as written (the collector masks secrets in it)."""
        return self.command if isinstance(self.command, str) else shlex.join(self.command)

    def is_pytest(self) -> bool:
        """Does the command run pytest (so that donegate can ask it for a JUnit report)?"""
        if isinstance(self.command, str):
            return bool(_PYTEST_IN_SHELL.search(self.command))
        names = [Path(arg).name for arg in self.command[:4]]
        return any(n in ("pytest", "py.test") for n in names)


class TestRun:
    """The ``test_run`` collector."""

    __test__ = False
    settings_model = TestRunSettings

    def collect(self, settings: TestRunSettings, context: CheckContext) -> Observation:
        """Run the command unless a protected file was written, and judge what ran."""
        touched = _protected_write(settings, context)
        if touched is not None:
            return touched
        with tempfile.TemporaryDirectory(prefix="donegate-junit-") as scratch:
            junit = Path(scratch) / "junit.xml"
            argv, env = _invocation(settings, junit)
            cwd = context.run_dir / (settings.cwd or ".")
            run = run_group(argv, cwd, env, settings.timeout_s)
            report = _report(settings, junit, run)
        return _judge(settings, run, report, context)


TEST_RUN = TestRun()


def _protected_write(settings: TestRunSettings, context: CheckContext) -> Observation | None:
    patterns = [*settings.protect, *(RUNNER_FILES if settings.protect_runner_files else ())]
    # Content an agent wrote in an earlier session and no person accepted judges nothing either.
    for target in sorted(context.tainted):
        pattern = globs.first_match(patterns, target)
        if pattern is not None:
            return Observation.absent(
                f"{target!r} (protected by {pattern!r}) holds content an agent wrote that no "
                f"person has accepted; review it, then run `donegate accept {target}`",
                protected_write=target,
            )
    for mutation in context.mutations:
        target = globs.normalise(mutation.target, str(context.base_dir))
        pattern = globs.first_match(patterns, target)
        if pattern is not None:
            return Observation.absent(
                f"mutation {mutation.id} wrote {target!r}, which matches the protected pattern "
                f"{pattern!r}: a run after editing what judges the run shows nothing",
                protected_write=target,
            )
    return None


def _invocation(settings: TestRunSettings, junit: Path) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, **settings.env}
    if isinstance(settings.command, str):
        bash = shutil.which("bash") or "bash"
        argv = [bash, "-o", "pipefail", "-c", settings.command]
    else:
        argv = list(settings.command)
    if settings.is_pytest():
        if settings.shell:
            # The shell line is the team's; the report request travels in the environment.
            env["PYTEST_ADDOPTS"] = f"{env.get('PYTEST_ADDOPTS', '')} --junitxml={junit}".strip()
        else:
            argv.append(f"--junitxml={junit}")
    return argv, env


def _report(settings: TestRunSettings, junit: Path, run: RunResult) -> TestReport | None:
    if not settings.is_pytest():
        return None
    return read_junit(junit) or read_summary(run.output_tail)


def _judge(
    settings: TestRunSettings, run: RunResult, report: TestReport | None, context: CheckContext
) -> Observation:
    detail = _detail(run, report, context)
    why = _why_not_a_run(settings, run, report)
    if why is None and report is not None:
        why = _why_not_a_pass(settings, run, report, detail)
    if why is not None:
        return Observation.absent(why, **detail)
    observed: dict[str, JsonValue] = {"exit_code": run.returncode}
    if report is not None:
        observed.update(report.counts())
    return Observation.seen(observed, **detail)


def _why_not_a_run(
    settings: TestRunSettings, run: RunResult, report: TestReport | None
) -> str | None:
    """Why the command did not produce a result at all, if it did not."""
    if run.error is not None:
        return run.error
    if run.timed_out:
        return f"timed out after {settings.timeout_s:g} s; the process group was killed"
    assert run.returncode is not None
    if run.returncode < 0:
        return f"killed by signal {-run.returncode}"
    if settings.shell and run.returncode in (126, 127):
        return f"the shell could not run the command (exit {run.returncode})"
    if settings.is_pytest() and run.returncode in _PYTEST_NOTHING_RAN:
        return f"{_PYTEST_NOTHING_RAN[run.returncode]} (pytest exit {run.returncode}): no test ran"
    if settings.is_pytest() and report is None:
        return "pytest left neither a JUnit report nor a summary line: cannot tell what ran"
    return None


def _why_not_a_pass(
    settings: TestRunSettings, run: RunResult, report: TestReport, detail: dict[str, Any]
) -> str | None:
    """Why a run that finished still shows nothing, if it does not."""
    if report.passed == 0 and report.failed == 0 and report.errors == 0:
        return (
            f"no test passed: {report.skipped} skipped, {report.xfailed} xfailed, "
            f"{report.deselected} deselected"
        )
    if run.returncode == 0 and (report.failed or report.errors):
        return (
            f"exit status 0, but the report lists {report.failed} failed and {report.errors} "
            "errors: something rewrote the exit status"
        )
    statuses = {node: case_outcome(report, node) or "absent" for node in settings.must_pass}
    detail["must_pass"] = dict(statuses)
    unproven = {n: s for n, s in statuses.items() if s not in ("passed", "failed", "error")}
    if unproven:
        shown = ", ".join(f"{n} ({s})" for n, s in unproven.items())
        return f"must_pass tests did not run and pass: {shown}"
    return None


def _detail(run: RunResult, report: TestReport | None, context: CheckContext) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "duration_s": round(run.duration_s, 3),
        "output_tail": context.redactor.text(run.output_tail),
    }
    if report is not None:
        detail["counts_from"] = report.source
        detail["xfailed"] = report.xfailed
        detail["deselected"] = report.deselected
        # A collection error has no class name: "::tests.test_a" reads better as "tests.test_a".
        failing = [
            c.removeprefix("::") for c, outcome in report.cases.items() if outcome in _FAILING
        ]
        if failing:
            # Named in the gate's feedback, so the agent knows which tests to look at.
            detail["failing"] = failing[:MAX_FAILING_NAMED]
    return detail
