"""``go test -json``: each test's end, from the events the go command prints.

A test's id is its package's import path, a dot, and the test's name with its subtests:
``example.com/calc.TestAdd``, ``example.com/calc.TestAdd/negative``. A ``must_pass`` id may also
leave out the package (``TestAdd/negative``) when exactly one package has such a test. A package
that failed without any failing test (it did not build, or its binary crashed) is an error under
the package's own path; so is one the go command reports as ``FAIL\t<pkg> [build failed]``.

The events of a test's own output are wrapped by the go command, but ``test2json`` reads the test
binary's text: a test that prints a line of the form ``--- PASS: TestX`` can still confuse it.

Run with ``-count=2`` (``again``), each test binary runs all its tests, then all of them again, in
the same process: a test's first end is the first run's, its later ends the second run's.
"""

from __future__ import annotations

import json
import re

from donegate.checks.runners._outcomes import Outcome, Outcomes

_ENDS: dict[str, Outcome] = {"pass": "passed", "fail": "failed", "skip": "skipped"}
_BUILD_FAILED = re.compile(r"^FAIL\t(\S+) \[(?:build|setup) failed\]$")


def read(data: bytes, again: bool = False) -> Outcomes | None:
    """Outcomes from ``go test -json`` output (``again``: of ``-count=2``); None if no line of it
    is an event."""
    tests: dict[str, list[Outcome]] = {}
    short: dict[str, str] = {}
    failed_packages: list[str] = []
    events = 0
    for line in data.decode("utf-8", errors="replace").splitlines():
        event = _event(line)
        if event is None:
            # Older go commands print a package that did not build as a plain line of their own.
            broken = _BUILD_FAILED.match(line)
            if broken:
                events += 1
                failed_packages.append(broken[1])
            continue
        events += 1
        action, package, test = event
        if action not in _ENDS:
            continue
        if test:
            tests.setdefault(f"{package}.{test}", []).append(_ENDS[action])
            short[f"{package}.{test}"] = test
        elif action == "fail":
            failed_packages.append(package)
    if events == 0:
        return None
    # Without a second run, a test the team's own -count ran more than once counts as its worst.
    ended = [(test, ends[0] if again else _worst(ends)) for test, ends in tests.items()]
    for package in dict.fromkeys(failed_packages):
        if not any(t.startswith(f"{package}.") and o == "failed" for t, o in ended):
            ended.append((package, "error"))
    second = tuple((t, e) for t, ends in tests.items() for e in ends[1:]) if again else None
    return Outcomes("go", tuple(ended), short=short, again=second)


def _worst(ends: list[Outcome]) -> Outcome:
    return next((e for e in _WORST_FIRST if e in ends), ends[0])


_WORST_FIRST: tuple[Outcome, ...] = ("error", "failed", "skipped", "passed")


def _event(line: str) -> tuple[str, str, str] | None:
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict):
        return None
    action, package, test = event.get("Action"), event.get("Package"), event.get("Test", "")
    if not (isinstance(action, str) and isinstance(package, str) and isinstance(test, str)):
        return None
    return action, package, test
