"""``test_run``: run the team's test command after the last write, and read what really ran.

Not a pass, whatever the exit code: a runner that is missing, a timeout, no test run (pytest exit
5, everything skipped or deselected), a ``must_pass`` test that did not actually pass, a status
that says 0 while the report lists failures, or a write to a protected file (an agent that edits
the test it must pass has shown nothing).

The runner is donegate's: the command runs in an environment donegate builds (``_runenv``), a
pytest run without the working directory first on ``sys.path`` and with a fresh bytecode cache,
and with donegate's witness loaded inside it (``_witness``). The witness's report is what ran;
a run whose judge the agent wrote, whose machinery was replaced, or whose JUnit report disagrees
with the witness does not count (``_integrity``); ``must_pass`` ids are matched exactly
(``_mustpass``).

Vitest, Jest, ``node --test``, ``go test`` and ``cargo test`` are told by donegate where to write
their report (``_runners``); a runner that writes JUnit XML to a path of its own is read through
``report = "junit:PATH"``. Their reports are judged alike (``_outcomes``): no test passed is not
a pass, failing tests are named, ``must_pass`` ids are matched exactly in the runner's naming.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, JsonValue, model_validator

from donegate.checks import (
    _bytecode,
    _integrity,
    _mustpass,
    _outcomes,
    _reportfile,
    _runenv,
    _runners,
    _witness,
    globs,
)
from donegate.checks._junit import TestReport, read_junit, read_summary
from donegate.checks._nodeid import NodeId, NodeIdError
from donegate.checks._outcomes import Outcomes
from donegate.checks._process import RunResult, run_group
from donegate.checks._witness import WitnessReport, WitnessSetup
from donegate.checks.base import CheckContext, CheckSettings, Observation, PositiveSeconds
from donegate.workspace.runnerfiles import JUDGE_FILES, RUNNER_FILES

_COUNT_KEYS = ("passed", "failed", "errors", "skipped")
MAX_FAILING_NAMED = 20
_PROVEN = _outcomes.PROVEN
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
    runner: _runners.Runner | None = None
    report: str | None = None
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
        if self.report is not None:
            _runners.report_flag_path(self.report)
            if self.runner not in (None, "junit"):
                raise ValueError('report = "junit:PATH" goes with runner = "junit" (or no runner)')
        elif self.runner == "junit":
            raise ValueError('runner = "junit" needs report = "junit:PATH"')
        for node in self.must_pass:
            if self.runner_kind() not in (None, "pytest"):  # the runner's own naming
                if not node.strip():
                    raise ValueError("must_pass: an empty test id")
                continue
            try:
                NodeId.parse(node)
            except NodeIdError as exc:
                raise ValueError(f"must_pass: {exc}") from None
        return self

    def runner_kind(self) -> _runners.Runner | None:
        """The runner: as configured, ``junit`` with a ``report``, else told from the command."""
        if self.runner is not None:
            return self.runner
        if self.report is not None:
            return "junit"
        if self.is_pytest():
            return "pytest"
        return None if isinstance(self.command, str) else _runners.detect(self.command)

    def default_target(self) -> str:
        """The command as written (the collector masks secrets in it)."""
        return self.command if isinstance(self.command, str) else shlex.join(self.command)

    def is_pytest(self) -> bool:
        """Does the command run pytest (so that donegate can ask it for a JUnit report)?"""
        if self.runner is not None or self.report is not None:
            return self.runner == "pytest"
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
        # Made for this run only, 0700, with a random name: the report paths cannot be pre-made.
        with tempfile.TemporaryDirectory(prefix="donegate-run-") as scratch:
            try:
                invocation = _invocation(settings, context, Path(scratch))
            except _runners.RunnerCommandError as exc:
                return Observation.absent(str(exc))
            cwd = context.run_dir / (settings.cwd or ".")
            run = _run(settings, invocation, cwd, context, Path(scratch))
            reports = _read_reports(invocation, run, cwd)
        return _judge(settings, run, reports, context)


TEST_RUN = TestRun()


def _run(
    settings: TestRunSettings,
    invocation: _Invocation,
    cwd: Path,
    context: CheckContext,
    scratch: Path,
) -> RunResult:
    """Run the command with bytecode only from a cache of donegate's (see ``_bytecode``), so that
    a ``.pyc`` planted in a ``__pycache__`` directory is never used."""
    # Runs of one command import much alike, in any project: they share their bytecode.
    key = json.dumps([settings.command, settings.cwd])
    # The store is for the libraries: the project's code changes at every edit, and a sealed
    # copy or this run's scratch has a new path at every run.
    project = (context.base_dir, context.run_dir, scratch, *map(Path, context.pythonpath))
    with _bytecode.run_prefix(context.bytecode, key, scratch / "pycache", project) as prefix:
        env = {**invocation.env, "PYTHONPYCACHEPREFIX": str(prefix)}
        return run_group(invocation.argv, cwd, env, settings.timeout_s, context.on_spawn)


def _protected_write(settings: TestRunSettings, context: CheckContext) -> Observation | None:
    always = (*RUNNER_FILES, *JUDGE_FILES) if settings.protect_runner_files else ()
    patterns = [*settings.protect, *always]
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


@dataclass(frozen=True, slots=True)
class _Invocation:
    argv: list[str]
    env: dict[str, str]
    junit: Path | None = None
    witness: WitnessSetup | None = None
    runner_report: _runners.RunnerReport | None = None


@dataclass(frozen=True, slots=True)
class _Reports:
    witness: WitnessReport | None = None
    junit: TestReport | None = None
    summary: TestReport | None = None
    outcomes: Outcomes | None = None
    unread: str | None = None


def _invocation(settings: TestRunSettings, context: CheckContext, scratch: Path) -> _Invocation:
    env = _runenv.base_environment(settings.env)
    team_path = settings.env.get("PYTHONPATH", "").split(os.pathsep)
    code_path = _runenv.search_path(context.pythonpath, team_path)
    if isinstance(settings.command, str):
        bash = shutil.which("bash") or "bash"
        argv = [bash, "-o", "pipefail", "-c", settings.command]
    else:
        argv = list(settings.command)
    if not settings.is_pytest():
        _set(env, "PYTHONPATH", code_path)
        return _runner_invocation(settings, argv, env, context, scratch)
    return _pytest_invocation(settings, argv, env, code_path, scratch)


def _runner_invocation(
    settings: TestRunSettings,
    argv: list[str],
    env: dict[str, str],
    context: CheckContext,
    scratch: Path,
) -> _Invocation:
    runner = settings.runner_kind()
    if runner is None:
        return _Invocation(argv, env)
    if settings.report is not None:
        # The runner writes where the team configured: a file found there now is stale.
        cwd = context.run_dir / (settings.cwd or ".")
        path = cwd / _runners.report_flag_path(settings.report)
        before = _reportfile.clear(path)
        return _Invocation(argv, env, runner_report=_runners.RunnerReport(runner, path, before))
    if settings.shell:
        raise _runners.RunnerCommandError(
            f"runner {runner!r}: donegate adds its reporter flags to an argv command, not to a "
            'shell line; give command as a list, or have it write JUnit to report = "junit:PATH"'
        )
    argv, path = _runners.with_reporter(runner, argv, scratch)
    return _Invocation(argv, env, runner_report=_runners.RunnerReport(runner, path))


def _pytest_invocation(
    settings: TestRunSettings,
    argv: list[str],
    env: dict[str, str],
    code_path: str | None,
    scratch: Path,
) -> _Invocation:
    witness = _witness.prepare(scratch)
    junit = scratch / "junit.xml"
    ours = ["-p", witness.module, f"--junitxml={junit}"]
    # The witness gives these back as the team set them, so that the code under test (and the
    # processes it starts) sees the team's environment, not where the reports go.
    restore = {name: settings.env.get(name) for name in ("PYTHONSAFEPATH", "PYTEST_ADDOPTS")}
    restore["PYTHONPATH"] = code_path
    # No working directory first on sys.path: a pytest.py there cannot replace the runner.
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONPATH"] = _runenv.search_path([code_path or ""], [str(witness.plugin_dir)]) or ""
    env[witness.env_var] = witness.settings(restore, cwd_last=True)
    if settings.shell:
        # The shell line is the team's; donegate's options travel in the environment.
        env["PYTEST_ADDOPTS"] = shlex.join([*shlex.split(env.get("PYTEST_ADDOPTS", "")), *ours])
    else:
        argv = [*argv, *ours]
    return _Invocation(argv, env, junit, witness)


def _set(env: dict[str, str], name: str, value: str | None) -> None:
    if value is None:
        env.pop(name, None)
    else:
        env[name] = value


def _read_reports(invocation: _Invocation, run: RunResult, run_dir: Path) -> _Reports:
    if invocation.runner_report is not None:
        outcomes, unread = _runners.read(invocation.runner_report, run_dir)
        return _Reports(outcomes=outcomes, unread=unread)
    if invocation.witness is None or invocation.junit is None:
        return _Reports()
    return _Reports(
        witness=_witness.read_report(invocation.witness.report),
        junit=read_junit(invocation.junit),
        summary=read_summary(run.output_tail),
    )


def _judge(
    settings: TestRunSettings, run: RunResult, reports: _Reports, context: CheckContext
) -> Observation:
    detail = _detail(run, context)
    why = _why_not_a_run(settings, run)
    report = reports.witness
    if why is None and settings.is_pytest():
        why = _why_not_trusted(reports, context, detail)
    if why is None and settings.runner_kind() not in (None, "pytest"):
        return _judge_runner(settings, run, reports, detail)
    if why is None and report is None and settings.must_pass:
        why = (
            "must_pass needs a runner donegate reads (pytest, or a runner key: vitest, jest, "
            "node, go, cargo, junit): nothing else reports which tests ran"
        )
    if why is None and report is not None:
        why = _why_not_a_pass(settings, run, report, context, detail)
    if why is not None:
        return Observation.absent(why, **detail)
    observed: dict[str, JsonValue] = {"exit_code": run.returncode}
    if report is not None:
        observed.update(report.counts())
    return Observation.seen(observed, **detail)


def _judge_runner(
    settings: TestRunSettings, run: RunResult, reports: _Reports, detail: dict[str, Any]
) -> Observation:
    """Judge a run of a runner other than pytest by the report donegate asked it for."""
    outcomes = reports.outcomes
    detail["counts_from"] = settings.runner_kind()
    if outcomes is None:
        return Observation.absent(reports.unread or "the runner left no report", **detail)
    why = _why_runner_not_a_pass(settings, run, outcomes, detail)
    if why is not None:
        return Observation.absent(why, **detail)
    observed: dict[str, JsonValue] = {"exit_code": run.returncode, **outcomes.counts()}
    return Observation.seen(observed, **detail)


def _why_runner_not_a_pass(
    settings: TestRunSettings, run: RunResult, outcomes: Outcomes, detail: dict[str, Any]
) -> str | None:
    failing = outcomes.failing()
    if failing:
        # Named in the gate's feedback, so the agent knows which tests to look at.
        detail["failing"] = failing[:MAX_FAILING_NAMED]
    if outcomes.problems:
        detail["report_problems"] = list(outcomes.problems[:MAX_FAILING_NAMED])
    if settings.runner_kind() == "cargo" and outcomes.problems:
        return f"the report does not add up: {outcomes.problems[0]}"
    counts = outcomes.counts()
    if counts["passed"] == 0 and counts["failed"] == 0 and counts["errors"] == 0:
        return f"no test passed: {counts['skipped']} skipped, none run"
    if run.returncode == 0 and (counts["failed"] or counts["errors"]):
        return (
            f"exit status 0, but the report lists {counts['failed']} failed and "
            f"{counts['errors']} errors: something rewrote the exit status"
        )
    if not settings.must_pass:
        return None
    found = {node: _outcomes.status(node, outcomes) for node in settings.must_pass}
    detail["must_pass"] = found
    unproven = [f"{node} ({status})" for node, status in found.items() if status not in _PROVEN]
    if unproven:
        return f"must_pass tests did not run and pass: {', '.join(unproven)}"
    return None


def _why_not_a_run(settings: TestRunSettings, run: RunResult) -> str | None:
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
    return None


def _why_not_trusted(
    reports: _Reports, context: CheckContext, detail: dict[str, Any]
) -> str | None:
    """Why what pytest reported cannot be believed, if it cannot."""
    report = reports.witness
    if report is None:
        if reports.summary is not None:
            detail["summary_counts"] = reports.summary.counts()
        return (
            "donegate's witness inside pytest left no report: pytest was replaced, did not load "
            "it, or the run was cut short, so what ran cannot be told"
        )
    detail.update(_integrity.described(report))
    why = _integrity.why_not_trusted(report, context)
    if why is None:
        why = _integrity.why_not_cross_checked(report, reports.junit)
    return why


def _why_not_a_pass(
    settings: TestRunSettings,
    run: RunResult,
    report: WitnessReport,
    context: CheckContext,
    detail: dict[str, Any],
) -> str | None:
    """Why a run that finished still shows nothing, if it does not."""
    failing = report.failing()
    if failing:
        # Named in the gate's feedback, so the agent knows which tests to look at.
        detail["failing"] = failing[:MAX_FAILING_NAMED]
    counts, outcomes = report.counts(), list(report.tests.values())
    if counts["passed"] == 0 and counts["failed"] == 0 and counts["errors"] == 0:
        return (
            f"no test passed: {outcomes.count('skipped')} skipped, {outcomes.count('xfailed')} "
            f"xfailed, {len(report.deselected)} deselected"
        )
    if run.returncode == 0 and (counts["failed"] or counts["errors"]):
        return (
            f"exit status 0, but the report lists {counts['failed']} failed and "
            f"{counts['errors']} errors: something rewrote the exit status"
        )
    return _must_pass(settings, report, context, detail)


def _must_pass(
    settings: TestRunSettings, report: WitnessReport, context: CheckContext, detail: dict[str, Any]
) -> str | None:
    if not settings.must_pass:
        return None
    bases = (report.invocation_dir, context.run_dir)
    found = [_mustpass.resolve(node, report, bases) for node in settings.must_pass]
    detail["must_pass"] = {r.configured: r.status for r in found}
    mapped = {r.configured: r.mapped for r in found if r.mapped is not None}
    if mapped:
        detail["must_pass_mapped"] = {**mapped, "rootdir": str(report.rootdir)}
    unproven = [r for r in found if r.status not in _mustpass.PROVEN]
    if unproven:
        shown = ", ".join(f"{r.configured} ({r.status})" for r in unproven)
        return f"must_pass tests did not run and pass: {shown}"
    return None


def _detail(run: RunResult, context: CheckContext) -> dict[str, Any]:
    return {
        "duration_s": round(run.duration_s, 3),
        "output_tail": context.redactor.text(run.output_tail),
    }
