"""``cargo test``: each test's end, from libtest's plain ("pretty") output.

libtest's JSON format needs a nightly toolchain (or ``RUSTC_BOOTSTRAP``, which would also let the
team's code use unstable features); its plain lines are stable: ``test tests::adds ... ok``, one per
test, and one ``test result:`` line per test binary. A test's id is libtest's path of it inside
its crate: ``tests::adds``, ``parse::tests::rejects_empty``; a doc test reads
``src/lib.rs - add (line 3)``. The same id in two test binaries counts as its worst outcome.

Each binary's ``test result:`` counts must add up to the lines read: a test that prints a line
of its own that looks like a result (with ``--nocapture``) makes the sums disagree, and the run
is not believed. So is terse output (``cargo test -q``, ``--format terse``): it has no test lines,
so leave those options out of the command.
"""

from __future__ import annotations

import re

from donegate.checks.runners._outcomes import Outcome, Outcomes

_TEST_LINE = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored(?:, .*)?)$")
_RESULT_LINE = re.compile(
    r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured"
)
_ENDS: dict[str, Outcome] = {"ok": "passed", "FAILED": "failed"}


def read(data: bytes) -> Outcomes | None:
    """Outcomes from ``cargo test`` output; None if no test binary reported a result."""
    tests: list[tuple[str, Outcome]] = []
    expected = [0, 0, 0]
    results = 0
    for line in data.decode("utf-8", errors="replace").splitlines():
        found = _TEST_LINE.match(line)
        if found:
            tests.append((found[1], _ENDS.get(found[2], "skipped")))
            continue
        summary = _RESULT_LINE.match(line)
        if summary:
            results += 1
            for i in range(3):
                expected[i] += int(summary[i + 1])
    if results == 0:
        return None
    ends = [outcome for _, outcome in tests]
    seen = [ends.count("passed"), ends.count("failed"), ends.count("skipped")]
    problems: tuple[str, ...] = ()
    if seen != expected:
        problems = (
            f"libtest's result lines count {expected[0]} passed, {expected[1]} failed, "
            f"{expected[2]} ignored, but its test lines {seen[0]}, {seen[1]}, {seen[2]}",
        )
    return Outcomes("cargo", tuple(tests), problems)
