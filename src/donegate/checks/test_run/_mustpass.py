"""``must_pass``: each configured node id, found among the witness's tests exactly.

The witness's node ids are relative to pytest's rootdir. A team may have written its ids relative
to the directory pytest was started in, or to the configuration's directory; each such reading is
mapped once, exactly, to a rootdir-relative id. If more than one reading names tests, the id is
ambiguous and proves nothing. A required id that names no test proves nothing either: there is
no fallback to a test of the same name elsewhere.

A test passes only if it passed twice: in the run, and again once the run was over, in the same
process and in the reverse order (the witness runs it again). Code that counts its calls, or
flips a toggle, to hand each test the answer it expects cannot pass both.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from donegate.checks.runners._nodeid import NodeId, normal_path
from donegate.sealed._witness import WitnessReport

# Worst first: one failing parametrization decides for the whole function.
AGAIN_FAILED = "failed when run again, in another order"
NOT_AGAIN = "not run again"
_RANK = (
    "error",
    "failed",
    AGAIN_FAILED,
    NOT_AGAIN,
    "ambiguous",
    "absent",
    "deselected",
    "not run",
    "skipped",
    "xfailed",
)
PROVEN = frozenset({"passed", "failed", "error"})


@dataclass(frozen=True, slots=True)
class Requirement:
    """How one ``must_pass`` id fared: its status, the id it was mapped to, the tests it covers."""

    configured: str
    status: str
    mapped: str | None = None
    tests: tuple[str, ...] = ()


def resolve(configured: str, report: WitnessReport, bases: Sequence[Path]) -> Requirement:
    """Match ``configured`` against the report, reading its path from ``bases`` in turn."""
    wanted = NodeId.parse(configured)
    readings = _readings(wanted, report, bases)
    if not readings:
        return Requirement(configured, "absent")
    if len(readings) > 1:
        shown = " or ".join(str(r) for r in readings)
        return Requirement(configured, "ambiguous", mapped=shown)
    ((reading, tests),) = readings.items()
    mapped = str(reading) if str(reading) != configured else None
    if not tests:  # only its file is known, and it failed to collect
        return Requirement(configured, "error", mapped)
    status = _worst([_status(t, report) for t in tests])
    return Requirement(configured, status, mapped, tuple(str(t) for t in tests))


def _readings(
    wanted: NodeId, report: WitnessReport, bases: Sequence[Path]
) -> dict[NodeId, list[NodeId]]:
    known = sorted(report.known(), key=str)
    readings: dict[NodeId, list[NodeId]] = {}
    for base in (report.rootdir, *bases):
        path = _relative_to_root(base, wanted.path, report.rootdir)
        if path is None:
            continue
        reading = wanted.with_path(path)
        tests = [t for t in known if reading.covers(t)]
        if tests or _collect_failed(path, report):
            readings.setdefault(reading, tests)
    return readings


def _relative_to_root(base: Path, path: str, rootdir: Path) -> str | None:
    full = os.path.normpath(os.path.join(base, normal_path(path)))
    relative = os.path.relpath(full, os.path.normpath(rootdir))
    if relative == ".." or relative.startswith("../"):
        return None
    return normal_path(relative)


def _collect_failed(path: str, report: WitnessReport) -> bool:
    return report.collect_problems.get(path) == "error"


def _status(test: NodeId, report: WitnessReport) -> str:
    if test in report.tests:
        outcome = report.tests[test]
        status = {"xpassed": "passed", "incomplete": "not run"}.get(outcome, outcome)
        return _again(test, report) if status == "passed" else status
    return "deselected" if test in report.deselected else "not run"


def _again(test: NodeId, report: WitnessReport) -> str:
    """A test that passed in the run, as it fared when run again."""
    second = report.again.get(test)
    if second in ("passed", "xpassed"):
        return "passed"
    return NOT_AGAIN if second is None else AGAIN_FAILED


def _worst(statuses: list[str]) -> str:
    return next((s for s in _RANK if s in statuses), "passed")
