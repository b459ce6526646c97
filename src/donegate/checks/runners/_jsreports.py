"""JUnit XML (Vitest, any JUnit writer) and Jest's JSON report, as ``Outcomes``.

Test ids, as ``must_pass`` names them:

- JUnit (``runner = "junit"``, Vitest): ``classname > name`` as the report gives them. Vitest
  writes the test file as the class name and ``describe > test`` as the name, so an id reads
  ``src/sum.test.ts > sum > adds``.
- Jest: the test file relative to the run's directory, then each ``describe`` title, then the
  test's title, joined by `` > ``: ``src/sum.test.js > sum > adds``.
- ``node --test`` (its JUnit reporter nests suites): the suite titles, then the test's name,
  joined by `` > ``: ``sum > adds``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from donegate.checks.runners._outcomes import Outcome, Outcomes

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

SEP = " > "


def junit(data: bytes, runner: str) -> Outcomes | None:
    """The cases of a JUnit XML report, keyed ``classname > name``; None if unreadable."""
    root = _parse(data)
    if root is None:
        return None
    tests: list[tuple[str, Outcome]] = []
    for case in root.iter("testcase"):
        parts = [case.get("classname", ""), case.get("name", "")]
        tests.append((SEP.join(p for p in parts if p), _case_outcome(case)))
    return Outcomes(runner, tuple(tests))


# The suite donegate's preload (``_again.cjs``) runs each test file again in: its cases are the
# second run's. The code under test can name a suite so too; it can only add cases that way, and
# a required test passes only if every case of its id in the second run passed.
AGAIN_SUITE = "donegate: run again"


def node_junit(data: bytes, again: bool = False) -> Outcomes | None:
    """The cases of ``node --test``'s JUnit report, keyed by their suites' names and their own
    (``again``: the second run's cases apart, under :data:`AGAIN_SUITE`)."""
    root = _parse(data)
    if root is None:
        return None
    tests: list[tuple[str, Outcome]] = []
    _walk_suites(root, [], tests)
    if not again:
        return Outcomes("node", tuple(tests))
    prefix = AGAIN_SUITE + SEP
    first = tuple((t, o) for t, o in tests if not t.startswith(prefix))
    second = tuple((t.removeprefix(prefix), o) for t, o in tests if t.startswith(prefix))
    return Outcomes("node", first, again=second)


def _walk_suites(element: ET.Element, suites: list[str], into: list[tuple[str, Outcome]]) -> None:
    for child in element:
        if child.tag == "testsuite":
            _walk_suites(child, [*suites, child.get("name", "")], into)
        elif child.tag == "testcase":
            into.append((SEP.join([*suites, child.get("name", "")]), _case_outcome(child)))


def _parse(data: bytes) -> ET.Element | None:
    # Imported here, after the run: the parser is not needed to start the command.
    import xml.etree.ElementTree as ET

    try:
        return ET.fromstring(data)
    except ET.ParseError:
        return None


def _case_outcome(case: ET.Element) -> Outcome:
    if case.find("error") is not None:
        return "error"
    if case.find("failure") is not None:
        return "failed"
    if case.find("skipped") is not None:
        return "skipped"
    return "passed"


_JEST_STATUS: dict[str, Outcome] = {
    "passed": "passed",
    "failed": "failed",
    "pending": "skipped",
    "skipped": "skipped",
    "todo": "skipped",
    "disabled": "skipped",
}


def jest(data: bytes, run_dir: Path) -> Outcomes | None:
    """The tests of Jest's ``--json`` report; a test file that failed to run is an error."""
    try:
        report = json.loads(data)
        files = report["testResults"]
        tests: list[tuple[str, Outcome]] = []
        problems: list[str] = []
        for file in files:
            name = _relative(str(file["name"]), run_dir)
            assertions = file.get("assertionResults") or []
            for one in assertions:
                titles = [*one.get("ancestorTitles", []), one["title"]]
                tests.append((SEP.join([name, *map(str, titles)]), _jest_status(one)))
            if file.get("status") == "failed" and not assertions:
                # The file did not load (a syntax error, a missing import): nothing in it ran.
                tests.append((name, "error"))
                problems.append(str(file.get("message", ""))[:500])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return Outcomes("jest", tuple(tests), tuple(problems))


def _jest_status(assertion: dict[str, Any]) -> Outcome:
    return _JEST_STATUS.get(str(assertion.get("status")), "error")


def _relative(name: str, run_dir: Path) -> str:
    for root in (run_dir, run_dir.resolve()):
        if Path(name).is_relative_to(root):
            return Path(name).relative_to(root).as_posix()
    return Path(os.path.normpath(name)).as_posix()
