"""Runners other than pytest: which one a command runs, the flags that ask it for a report, and
the report read back as ``Outcomes``.

donegate adds the reporter flags itself and points them at a fresh path in the run's private
scratch directory, so no file the agent left behind can stand in for the report. The one
exception is ``report = "junit:PATH"``, for a runner donegate cannot pass flags to: that file is
removed before the run and read afterwards only if this run created it (``_reportfile``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from donegate.checks.runners import _reportfile
from donegate.record import Record

if TYPE_CHECKING:
    from donegate.checks.runners._outcomes import Outcomes

Runner = Literal["pytest", "vitest", "jest", "go", "cargo", "node", "junit"]
RUNNERS: tuple[Runner, ...] = ("pytest", "vitest", "jest", "go", "cargo", "node", "junit")
_PACKAGE_MANAGERS = ("npm", "pnpm", "yarn")


def detect(argv: list[str]) -> Runner | None:
    """The runner an argv list starts, judged from its first few words; None if unknown."""
    head = [Path(arg).name for arg in argv[:4]]
    if any(name in ("pytest", "py.test") for name in head):
        return "pytest"
    for name in ("vitest", "jest"):
        if name in head:
            return "vitest" if name == "vitest" else "jest"
    if head and head[0] == "go" and "test" in head[1:]:
        return "go"
    if head and head[0] == "cargo" and "test" in head[1:]:
        return "cargo"
    if head and head[0] in ("node", "nodejs") and "--test" in argv:
        return "node"
    return None


class RunnerCommandError(ValueError):
    """The command is not one donegate can add its reporter flags to."""


class RunnerReport(Record):
    """Where one run's report goes, and what was there before (for a configured path)."""

    runner: Runner
    path: Path
    before: _reportfile.Before | None = None


def with_reporter(runner: Runner, argv: list[str], scratch: Path) -> tuple[list[str], Path]:
    """``argv`` with the flags that make ``runner`` write its report to a fresh scratch path."""
    report = scratch / f"report-{runner}"
    if runner == "vitest":
        flags = ["--reporter=default", "--reporter=junit", f"--outputFile.junit={report}"]
        return [*_script_args(argv), *flags], report
    if runner == "jest":
        return [*_script_args(argv), "--json", f"--outputFile={report}"], report
    if runner == "node":
        at = argv.index("--test") + 1 if "--test" in argv else _fail(runner, "node --test")
        ours = [
            "--test-reporter=spec",
            "--test-reporter-destination=stdout",
            "--test-reporter=junit",
            f"--test-reporter-destination={report}",
        ]
        return [*argv[:at], *ours, *argv[at:]], report
    if runner == "go":
        at = _subcommand(argv, "go test") + 1
        return _tee([*argv[:at], "-json", *argv[at:]], report), report
    if runner == "cargo":
        _subcommand(argv, "cargo test")
        return _tee(argv, report), report
    raise RunnerCommandError(f"donegate cannot add reporter flags for runner {runner!r}")


def _script_args(argv: list[str]) -> list[str]:
    # `npm test` (or pnpm, yarn) hands what follows `--` to the script's runner.
    if Path(argv[0]).name in _PACKAGE_MANAGERS and "--" not in argv:
        return [*argv, "--"]
    return argv


def _subcommand(argv: list[str], usage: str) -> int:
    if "test" not in argv[1:4]:
        _fail(usage.split(maxsplit=1)[0], usage)
    return argv.index("test", 1)


def _fail(runner: str, usage: str) -> int:
    raise RunnerCommandError(
        f"runner {runner!r} needs a command of the form `{usage} ...` (an argv list) so that "
        "donegate can ask it for a report"
    )


def _tee(argv: list[str], report: Path) -> list[str]:
    # The report is the runner's standard output: a copy goes to the scratch file, the output
    # still reaches the evidence's tail, and the exit status stays the runner's (pipefail).
    script = 'set -o pipefail; "${@:2}" | tee -- "$1"'
    return [bash(), "-c", script, "donegate-tee", str(report), *argv]


def bash() -> str:
    """The path of ``bash``, for a shell command or a tee (``bash`` when it is not on PATH)."""
    import shutil  # only a run that needs a shell pays for it

    return shutil.which("bash") or "bash"


def read(report: RunnerReport, run_dir: Path) -> tuple[Outcomes | None, str | None]:
    """The run's outcomes, or None and why there are none to believe."""
    if report.before is not None:
        data, why = _reportfile.read_fresh(report.before)
    else:
        data, why = _reportfile.read(report.path)
    if data is None:
        return None, why
    outcomes = _parse(report.runner, data, run_dir)
    if outcomes is None:
        return None, f"the {report.runner} report could not be read: it is not the expected format"
    return outcomes, None


def _parse(runner: Runner, data: bytes, run_dir: Path) -> Outcomes | None:
    # The readers are imported after the run: starting the command needs none of them.
    from donegate.checks.runners import _gotest, _jsreports, _libtest

    if runner == "go":
        return _gotest.read(data)
    if runner == "cargo":
        return _libtest.read(data)
    if runner == "jest":
        return _jsreports.jest(data, run_dir)
    if runner == "node":
        return _jsreports.node_junit(data)
    return _jsreports.junit(data, runner)


def report_flag_path(report: str) -> Path:
    """The path of ``report = "junit:PATH"``."""
    kind, _, path = report.partition(":")
    if kind != "junit" or not path:
        raise ValueError('report is "junit:PATH", the JUnit XML file the command writes')
    return Path(path)
