"""Test counts: from a JUnit XML report, or failing that from pytest's summary line.

A skipped or xfailed test is not a passed one (Terminal-Bench's parser counted them as passed);
the report keeps every case's own outcome so that a ``must_pass`` test can be looked up.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

CaseOutcome = Literal["passed", "failed", "error", "skipped", "xfailed"]

_SUMMARY_COUNT = re.compile(
    r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)"
)
_SUMMARY_LINE = re.compile(r"\bin \d+(?:\.\d+)?s\b")


@dataclass(frozen=True, slots=True)
class TestReport:
    """Counts of one run, and each case's outcome keyed by ``classname::name``."""

    __test__ = False  # not a pytest test class, despite the name

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    xfailed: int = 0
    deselected: int = 0
    source: Literal["junit", "summary"] = "junit"
    cases: dict[str, CaseOutcome] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """The counts an ``observed_value`` carries."""
        return {
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "skipped": self.skipped + self.xfailed,
        }


def read_junit(path: Path) -> TestReport | None:
    """Parse a JUnit XML file; None if it is missing or unreadable."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    cases: dict[str, CaseOutcome] = {}
    tally: dict[CaseOutcome, int] = dict.fromkeys(
        ("passed", "failed", "error", "skipped", "xfailed"), 0
    )
    for case in root.iter("testcase"):
        outcome = _case_outcome(case)
        tally[outcome] += 1
        cases[f"{case.get('classname', '')}::{case.get('name', '')}"] = outcome
    return TestReport(
        passed=tally["passed"],
        failed=tally["failed"],
        errors=tally["error"],
        skipped=tally["skipped"],
        xfailed=tally["xfailed"],
        cases=cases,
    )


def _case_outcome(case: ET.Element) -> CaseOutcome:
    if case.find("error") is not None:
        return "error"
    if case.find("failure") is not None:
        return "failed"
    skipped = case.find("skipped")
    if skipped is not None:
        return "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
    return "passed"


def read_summary(output: str) -> TestReport | None:
    """Counts from the last pytest summary line in ``output`` (``3 passed, 1 skipped in 0.1s``)."""
    for line in reversed(output.splitlines()):
        if not _SUMMARY_LINE.search(line):
            continue
        found = {word.rstrip("s"): int(n) for n, word in _SUMMARY_COUNT.findall(line)}
        if found or "no tests ran" in line:
            return TestReport(
                passed=found.get("passed", 0),
                failed=found.get("failed", 0),
                errors=found.get("error", 0),
                skipped=found.get("skipped", 0),
                xfailed=found.get("xfailed", 0),
                deselected=found.get("deselected", 0),
                source="summary",
            )
    return None


def case_key(node_id: str) -> str:
    """A pytest node id (``tests/test_a.py::TestX::test_y[1]``) as JUnit's ``classname::name``."""
    parts = node_id.split("::")
    module = parts[0].removesuffix(".py").replace("/", ".")
    classname = ".".join([module, *parts[1:-1]])
    return f"{classname}::{parts[-1]}"


def case_outcome(report: TestReport, node_id: str) -> CaseOutcome | None:
    """The outcome of ``node_id`` in the report, or None when it did not run."""
    wanted = case_key(node_id)
    if wanted in report.cases:
        return report.cases[wanted]
    # pytest writes classnames relative to its rootdir, which may sit above the working directory.
    return next((o for key, o in report.cases.items() if key.endswith("." + wanted)), None)
