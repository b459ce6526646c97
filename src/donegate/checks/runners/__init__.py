"""Runners other than pytest: which one a command runs, the flags that ask it for a report, and
the report read back as ``Outcomes``.

donegate adds the reporter flags itself and points them at a fresh path in the run's private
scratch directory, so no file the agent left behind can stand in for the report. The one
exception is ``report = "junit:PATH"``, for a runner donegate cannot pass flags to: that file is
removed before the run and read afterwards only if this run created it (``_reportfile``).

``must_pass`` tests run a second time in the same process where the runner allows it at the cost
of one more run of the tests (:func:`repeats`): ``go test`` with ``-count=2`` (a test binary runs
its tests, then all of them again), and ``node --test`` with a preload of donegate's that loads
each test file again, in a suite of its own, in the process that ran it (the modules it tests are
kept, so a counter in them carries over). The others cannot: ``cargo test``'s harness runs each
test once and has no repeat; Jest and Vitest give each test file a fresh module registry and
have no flag to run a file's tests twice in one (a second file, or a second run, starts over).
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
    """Where one run's report goes, what was there before (for a configured path), and whether
    the runner was told to run its tests twice (``again``)."""

    runner: Runner
    path: Path
    before: _reportfile.Before | None = None
    again: bool = False


def repeats(runner: Runner) -> bool:
    """Whether donegate can have ``runner`` run its tests a second time in the same process."""
    return runner in ("go", "node")


# Loaded into each `node --test` child (and the parent, where it does nothing): once the test
# file has been loaded, it is loaded again inside a suite of donegate's, in the same process. A
# CommonJS file is taken out of the module cache (only it: the modules it requires stay); an ES
# module is imported again under another URL.
_NODE_AGAIN = """'use strict';
const main = process.argv[1];
if (main && process.env.NODE_TEST_CONTEXT) {
  const { describe } = require('node:test');
  const { pathToFileURL } = require('node:url');
  setImmediate(() => {
    describe(%s, async () => {
      const resolved = require.resolve(main);
      if (require.cache[resolved]) {
        delete require.cache[resolved];
        require(resolved);
      } else {
        await import(pathToFileURL(resolved).href + '?donegate-again');
      }
    });
  });
}
"""


def with_reporter(
    runner: Runner, argv: list[str], scratch: Path, again: bool = False
) -> tuple[list[str], Path]:
    """``argv`` with the flags that make ``runner`` write its report to a fresh scratch path, and
    (``again``, where it :func:`repeats`) run its tests a second time in the same process."""
    if again and runner == "go":
        argv = _go_twice(argv)
    if again and runner == "node":
        argv = _node_twice(argv, scratch)
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


def _go_twice(argv: list[str]) -> list[str]:
    """``go test`` with ``-count=2`` last among its flags (the last -count wins: the team's
    ``-count=1``, written or in GOFLAGS, comes first), unless it asks for more already."""
    end = argv.index("-args") if "-args" in argv else len(argv)
    counts = [a.split("=", 1)[1] for a in argv[:end] if a.startswith(("-count=", "--count="))]
    if counts and counts[-1].isdigit() and int(counts[-1]) >= 2:
        return argv
    return [*argv[:end], "-count=2", *argv[end:]]


def _node_twice(argv: list[str], scratch: Path) -> list[str]:
    import json  # only a run that repeats writes the preload

    preload = scratch / "donegate-again.cjs"
    from donegate.checks.runners._jsreports import AGAIN_SUITE

    preload.write_text(_NODE_AGAIN % json.dumps(AGAIN_SUITE))
    return [argv[0], "--require", str(preload), *argv[1:]]


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
    outcomes = _parse(report.runner, data, run_dir, report.again)
    if outcomes is None:
        return None, f"the {report.runner} report could not be read: it is not the expected format"
    return outcomes, None


def _parse(runner: Runner, data: bytes, run_dir: Path, again: bool) -> Outcomes | None:
    # The readers are imported after the run: starting the command needs none of them.
    from donegate.checks.runners import _gotest, _jsreports, _libtest

    if runner == "go":
        return _gotest.read(data, again)
    if runner == "cargo":
        return _libtest.read(data)
    if runner == "jest":
        return _jsreports.jest(data, run_dir)
    if runner == "node":
        return _jsreports.node_junit(data, again)
    return _jsreports.junit(data, runner)


def report_flag_path(report: str) -> Path:
    """The path of ``report = "junit:PATH"``."""
    kind, _, path = report.partition(":")
    if kind != "junit" or not path:
        raise ValueError('report is "junit:PATH", the JUnit XML file the command writes')
    return Path(path)
