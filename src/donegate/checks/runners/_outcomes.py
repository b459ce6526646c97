"""What a non-pytest runner's report says ran: each test's id in the runner's own naming, its end.

Every runner module (``_gotest``, ``_libtest``, ``_jsreports``) turns its report into one of
these, so that ``test_run`` judges them all alike: no test passed is not a pass, a status of 0
beside failures is not believed, and ``must_pass`` ids are matched exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Outcome = Literal["passed", "failed", "error", "skipped"]
# Worst first: a required id seen twice (two packages, two test binaries) counts as its worst.
_RANK: tuple[str, ...] = ("error", "failed", "ambiguous", "absent", "skipped")
PROVEN = frozenset({"passed", "failed", "error"})


@dataclass(frozen=True, slots=True)
class Outcomes:
    """Each test's outcome in order, as ``(id, outcome)`` pairs (an id may repeat)."""

    runner: str
    tests: tuple[tuple[str, Outcome], ...] = ()
    problems: tuple[str, ...] = ()
    # A shorter id a ``must_pass`` entry may use for a test (Go: the name without its package).
    short: dict[str, str] = field(default_factory=dict)

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


def status(wanted: str, outcomes: Outcomes) -> str:
    """How the required id ``wanted`` fared: its worst outcome, or ``absent``/``ambiguous``.

    The id is matched exactly, or by its short form; a short form that names tests under more
    than one full id is ambiguous and proves nothing.
    """
    exact = [outcome for test, outcome in outcomes.tests if test == wanted]
    if not exact:
        named = [(t, o) for t, o in outcomes.tests if outcomes.short.get(t) == wanted]
        if len({t for t, _ in named}) > 1:
            return "ambiguous"
        exact = [o for _, o in named]
    if not exact:
        return "absent"
    return next((s for s in _RANK if s in exact), "passed")
