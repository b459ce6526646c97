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

import shlex
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, Field, JsonValue, model_validator

from donegate.checks import runners
from donegate.checks.base import CheckContext, CheckSettings, Observation, PositiveSeconds
from donegate.checks.runners import _outcomes
from donegate.checks.runners._nodeid import NodeId, NodeIdError
from donegate.checks.runners._outcomes import Outcomes
from donegate.checks.test_run import _environment, _integrity, _mustpass
from donegate.sealed import _isolation, _launch
from donegate.sealed._isolation import Isolation
from donegate.sealed._launch import Launch, Place, Refusal, Reports, Started
from donegate.sealed._process import RunResult
from donegate.sealed._witness import WitnessReport

_COUNT_KEYS = ("passed", "failed", "errors", "skipped")
MAX_FAILING_NAMED = 20
FAILING_SHOWN = 3
_PROVEN = _outcomes.PROVEN
# pytest: 3 internal error, 4 usage error (a broken conftest), 5 no tests collected.
_PYTEST_NOTHING_RAN = {3: "pytest internal error", 4: "pytest usage error", 5: "no tests collected"}
# A shell's own statuses: what the line names is not there (127), or cannot be run (126). The
# code under test can exit so too: never a pass, and the environment's want only when donegate
# finds a program of the line missing itself (``_environment``).
_NOT_FOUND = 127
_SHELL_COULD_NOT = {
    126: "runner not executable: the shell could not run a program of the command",
    _NOT_FOUND: "runner not found: the shell found no program of that name",
}


def _count_like(key: str, value: JsonValue) -> bool:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    return key in ("exit_code", *_COUNT_KEYS) and is_int


def _absolute(place: str) -> str:
    if not place.startswith("/"):
        raise ValueError(
            f"got {place!r}, expected an absolute path (a relative one would be read from "
            "wherever the hook happens to run)"
        )
    return place


def _default_expected() -> dict[str, JsonValue]:
    return {"exit_code": 0}


class TestRunSettings(CheckSettings):
    """A ``test_run`` table: ``command`` is an argv list, or a string only with ``shell = true``."""

    __test__ = False

    command: list[Annotated[str, Field(min_length=1)]] | str
    shell: bool = False
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: PositiveSeconds = _launch.DEFAULT_TIMEOUT_S
    must_pass: list[str] = Field(default_factory=list)
    protect: list[str] = Field(default_factory=list)
    protect_runner_files: bool = True
    runner: runners.Runner | None = None
    report: str | None = None
    # The run's own sandbox (see donegate.sealed._isolation): where the machine can, by default.
    isolation: _isolation.Mode = "auto"
    network: bool = False
    writable: list[Annotated[str, Field(min_length=1), AfterValidator(_absolute)]] = Field(
        default_factory=list
    )
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
            runners.report_flag_path(self.report)
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

    def launch(self) -> Launch:
        """What these settings run, and how."""
        command = self.command if isinstance(self.command, str) else tuple(self.command)
        return Launch(
            command=command,
            shell=self.shell,
            cwd=self.cwd,
            env=dict(self.env),
            timeout_s=self.timeout_s,
            protect=tuple(self.protect),
            protect_runner_files=self.protect_runner_files,
            runner=self.runner,
            report=self.report,
            again=tuple(self.must_pass),
            isolation=Isolation(self.isolation, self.network, tuple(self.writable)),
        )

    def runner_kind(self) -> runners.Runner | None:
        """The runner: as configured, ``junit`` with a ``report``, else told from the command."""
        return self.launch().runner_kind()

    def default_target(self) -> str:
        """The command as written (the collector masks secrets in it)."""
        return self.command if isinstance(self.command, str) else shlex.join(self.command)

    def is_pytest(self) -> bool:
        """Does the command run pytest (so that donegate can ask it for a JUnit report)?"""
        return self.launch().is_pytest()


def failing_text(names: Sequence[str], total: int) -> str:
    """The failing tests in a few words: the first :data:`FAILING_SHOWN`, and how many in all."""
    total = max(total, len(names))
    shown = ", ".join(names[:FAILING_SHOWN])
    more = total - min(len(names), FAILING_SHOWN)
    tests = "test" if total == 1 else "tests"
    return f"{total} {tests} failed: {shown}" + (f" and {more} more" if more else "")


def failing_total(observed: object) -> int:
    """Failed plus erroring tests in an ``observed_value`` (0 when it holds no counts)."""
    if not isinstance(observed, dict):
        return 0
    counts = [observed.get("failed"), observed.get("errors")]
    return sum(c for c in counts if isinstance(c, int) and not isinstance(c, bool))


class TestRun:
    """The ``test_run`` collector."""

    __test__ = False
    settings_model = TestRunSettings

    def collect(self, settings: TestRunSettings, context: CheckContext) -> Observation:
        """Run the command unless a protected file was written, and judge what ran.

        A run that ``context.prestarted`` holds is used when it was started for exactly these
        settings and this context; otherwise it is stopped and the command starts anew.
        """
        launch, place = settings.launch(), _place(context)
        started = _adopted(context.prestarted, launch, place)
        if started is None:
            begun = _launch.start(launch, place)
            if isinstance(begun, Refusal):
                return Observation.absent(begun.why, **begun.detail)
            started = begun
        if context.on_spawn is not None:
            _announce(started, context.on_spawn)
        run, reports = started.finish()
        judged = _judge(settings, run, reports, context)
        return _environment_said(_isolation_said(judged, started), settings, context, run)


TEST_RUN = TestRun()


def _place(context: CheckContext) -> Place:
    return Place(
        base_dir=context.base_dir,
        run_dir=context.run_dir,
        mutations=tuple((m.id, m.target) for m in context.mutations),
        tainted=context.tainted,
        pythonpath=context.pythonpath,
        bytecode=context.bytecode,
        lasting=context.workdir is not None and context.workdir_lasts,
    )


def _adopted(prestarted: Started | None, launch: Launch, place: Place) -> Started | None:
    if prestarted is None:
        return None
    if prestarted.fits(launch, place):
        return prestarted
    prestarted.close()  # started for other settings or another claim: it shows nothing here
    return None


def _announce(started: Started, on_spawn: Callable[[], None]) -> None:
    try:
        on_spawn()
    except BaseException:
        started.close()
        raise


def _isolation_said(observation: Observation, started: Started) -> Observation:
    """The observation, its detail saying what sandbox the run had (or why it had none)."""
    said: dict[str, JsonValue] = (
        {"isolated_by": started.isolated_by}
        if started.isolated_by is not None
        else {"not_isolated": started.not_isolated or "unknown"}
    )
    return Observation(observation.observed, {**observation.detail, **said}, observation.why_not)


def _environment_said(
    observation: Observation, settings: TestRunSettings, context: CheckContext, run: RunResult
) -> Observation:
    """A run that did not count, said as the environment's want when that is its cause, with
    ``environment`` in its detail (the gate then lets the stop go unverified and tells the
    person: sending the agent back would change nothing)."""
    if observation.observed is not None:
        return observation
    project = (context.base_dir, context.run_dir)
    if isinstance(settings.command, str):
        if run.returncode != _NOT_FOUND:  # a shell finds its programs only when it runs them
            return observation
        cwd = context.run_dir / (settings.cwd or ".")
        lack = _environment.missing_in_shell(settings.command, settings.env, project, cwd)
    else:
        lack = _environment.missing(settings.command, settings.env, project, settings.is_pytest())
    if lack is None:
        return observation
    if lack.in_project:  # the agent's tree, which it can restore: told to the agent
        return Observation.absent(
            f"{lack.words} (in the project: restore it)", **observation.detail
        )
    return Observation.absent(lack.words, **{**observation.detail, "environment": lack.words})


def _judge(
    settings: TestRunSettings, run: RunResult, reports: Reports, context: CheckContext
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
    settings: TestRunSettings, run: RunResult, reports: Reports, detail: dict[str, Any]
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
    once = outcomes.passed_once()
    if once:  # run twice in one process, they did not pass both times
        detail["passed_only_once"] = once[:MAX_FAILING_NAMED]
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
    if settings.shell and run.returncode in _SHELL_COULD_NOT:
        return f"{_SHELL_COULD_NOT[run.returncode]} (exit {run.returncode})"
    if settings.is_pytest() and run.returncode in _PYTEST_NOTHING_RAN:
        return f"{_PYTEST_NOTHING_RAN[run.returncode]} (pytest exit {run.returncode}): no test ran"
    return None


def _why_not_trusted(reports: Reports, context: CheckContext, detail: dict[str, Any]) -> str | None:
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
