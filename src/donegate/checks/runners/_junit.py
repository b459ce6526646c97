"""Test counts: from a JUnit XML report, or failing that from pytest's summary line.

A skipped or xfailed test is not a passed one (Terminal-Bench's parser counted them as passed);
the report keeps every case's own outcome, to be compared with what the witness saw (the witness's
node ids decide which tests ran; JUnit's ``classname::name`` only cross-checks them).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

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
    case_list: tuple[tuple[str, CaseOutcome], ...] = ()

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
    # Imported here, after the run: the parser is not needed to start the command.
    import xml.etree.ElementTree as ET

    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    cases: list[tuple[str, CaseOutcome]] = []
    tally: dict[CaseOutcome, int] = dict.fromkeys(
        ("passed", "failed", "error", "skipped", "xfailed"), 0
    )
    for case in root.iter("testcase"):
        outcome = _case_outcome(case)
        tally[outcome] += 1
        cases.append((f"{case.get('classname', '')}::{case.get('name', '')}", outcome))
    return TestReport(
        passed=tally["passed"],
        failed=tally["failed"],
        errors=tally["error"],
        skipped=tally["skipped"],
        xfailed=tally["xfailed"],
        cases=dict(cases),
        case_list=tuple(cases),
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


def disagreements(report: TestReport, expected: Counter[tuple[str, CaseOutcome]]) -> list[str]:
    """Where the JUnit cases differ from ``expected`` (``classname::name`` and outcome, counted).

    Each line says both sides, e.g. ``tests.test_a::test_x: witness says failed, JUnit passed``.
    """
    seen = Counter(report.case_list)
    lines = []
    for key, outcome in sorted((expected - seen).keys()):
        others = sorted({o for k, o in seen if k == key} - {outcome})
        junit = ", ".join(others) or "has no such case"
        lines.append(f"{key}: witness says {outcome}, JUnit {junit}")
    for key, outcome in sorted((seen - expected).keys()):
        if not any(k == key for k, _ in expected):
            lines.append(f"{key}: JUnit says {outcome}, the witness saw no such test")
    return lines
