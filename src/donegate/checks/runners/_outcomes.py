"""What a non-pytest runner's report says ran: each test's id in the runner's own naming, its end.

Every runner module (``_gotest``, ``_libtest``, ``_jsreports``) turns its report into one of
these, so that ``test_run`` judges them all alike: no test passed is not a pass, a status of 0
beside failures is not believed, and ``must_pass`` ids are matched exactly.

Where donegate had the runner run its tests a second time in the same process (``must_pass`` set,
and a runner that can: see :func:`donegate.checks.runners.repeats`), ``tests`` holds the first
run, as a single run would have reported it, and ``again`` the second: a required test passes only
if it passed in both, so that code counting its calls, or flipping a toggle, cannot pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Outcome = Literal["passed", "failed", "error", "skipped"]
# Worst first: a required id seen twice (two packages, two test binaries) counts as its worst.
_RANK: tuple[str, ...] = ("error", "failed", "ambiguous", "absent", "skipped")
PROVEN = frozenset({"passed", "failed", "error"})
TWICE_FAILED = "did not pass when run twice"
NOT_AGAIN = "not run again"


@dataclass(frozen=True, slots=True)
class Outcomes:
    """Each test's outcome in order, as ``(id, outcome)`` pairs (an id may repeat)."""

    runner: str
    tests: tuple[tuple[str, Outcome], ...] = ()
    problems: tuple[str, ...] = ()
    # A shorter id a ``must_pass`` entry may use for a test (Go: the name without its package).
    short: dict[str, str] = field(default_factory=dict)
    # The second run of the same tests in the same process, when there was one.
    again: tuple[tuple[str, Outcome], ...] | None = None

    def counts(self) -> dict[str, int]:
        """The counts an ``observed_value`` carries."""
        ends = [outcome for _, outcome in self.tests]
        return {
            "passed": ends.count("passed"),
            "failed": ends.count("failed"),
            "errors": ends.count("error"),
            "skipped": ends.count("skipped"),
        }

    def failing(self) -> list[str]:
        """The ids that failed or errored, in report order, each once."""
        bad = [test for test, outcome in self.tests if outcome in ("failed", "error")]
        return list(dict.fromkeys(bad))

    def passed_once(self) -> list[str]:
        """The ids that passed in one run and not in the other, each once (none but where the
        tests ran twice)."""
        if self.again is None:
            return []
        runs = (self.tests, self.again)
        passed = [{t for t, o in run if o == "passed"} for run in runs]
        other = [{t for t, o in run if o != "passed"} for run in runs]
        once = (passed[0] & other[1]) | (passed[1] & other[0])
        return [t for t in dict.fromkeys(t for t, _ in self.tests) if t in once]


def status(wanted: str, outcomes: Outcomes) -> str:
    """How the required id ``wanted`` fared: its worst outcome, or ``absent``/``ambiguous``.

    The id is matched exactly, or by its short form; a short form that names tests under more
    than one full id is ambiguous and proves nothing. Where the tests ran twice, a test passes
    only if it passed in both runs.
    """
    first = _status(wanted, outcomes.tests, outcomes.short)
    if outcomes.again is None:
        return first
    second = _status(wanted, outcomes.again, outcomes.short)
    if first == "passed" == second:
        return "passed"
    if first == "passed":
        return NOT_AGAIN if second == "absent" else TWICE_FAILED
    # The second run can come first (node loads an ES module's second copy before the first).
    return TWICE_FAILED if second == "passed" and first in _RAN else first


_RAN = frozenset({"failed", "error", "skipped"})


def _status(wanted: str, tests: tuple[tuple[str, Outcome], ...], short: dict[str, str]) -> str:
    exact = [outcome for test, outcome in tests if test == wanted]
    if not exact:
        named = [(t, o) for t, o in tests if short.get(t) == wanted]
        if len({t for t, _ in named}) > 1:
            return "ambiguous"
        exact = [o for _, o in named]
    if not exact:
        return "absent"
    return next((s for s in _RANK if s in exact), "passed")
