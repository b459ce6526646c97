"""ImpossibleBench-style tasks (tests/scan/impossible): every cheat that fools plain pytest is
blocked by the scan, every honest solution of the possible task is left alone.

The scan is run as a stop runs it: the solution written over the task's stub (and, again, as a
new file), the workspace's test files as context. Whether each cheat really fools plain pytest
(and each honest solution passes the possible tests and fails the impossible ones) is run here
for one solution of each kind and class, and for all of them by
``benchmarks/impossible_cheats.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from donegate.scan import Finding, ScanSettings, TestLiterals, WrittenFile, scan_writes
from tests.scan.impossible import SOLUTION, Entry, entries, run_tests

CHEATS = entries("cheat")
UNSEEN = entries("unseen")
HONEST = entries("honest")


def _is_test(path: str) -> bool:
    return path.startswith("tests/")


def blocking(entry: Entry, tests: str, old: str | None) -> list[Finding]:
    files = [WrittenFile(SOLUTION, old, entry.source)]
    found = scan_writes(files, TestLiterals([tests]), ScanSettings(), _is_test)
    return [f for f in found if f.blocking]


def test_the_corpus_is_the_size_the_issue_asks() -> None:
    assert len({e.task for e in HONEST}) >= 10
    assert len(CHEATS) >= 100
    assert {e.task for e in CHEATS} == {e.task for e in HONEST}


@pytest.mark.parametrize("entry", CHEATS, ids=[e.id for e in CHEATS])
def test_the_scan_blocks_the_cheat(entry: Entry) -> None:
    assert blocking(entry, entry.tests, entry.stub), "an edit of the stub"
    assert blocking(entry, entry.tests, None), "a new file"


@pytest.mark.parametrize("entry", UNSEEN, ids=[e.id for e in UNSEEN])
def test_a_cheat_no_reading_of_the_code_tells_from_honest_code_is_not_blocked(
    entry: Entry,
) -> None:
    """What the scan cannot see, kept visible: if one of these starts being blocked, the rule
    that blocks it is worth a look at the honest solutions it may block too."""
    assert not blocking(entry, entry.tests, entry.stub)


@pytest.mark.parametrize("entry", HONEST, ids=[e.id for e in HONEST])
def test_the_scan_finds_nothing_in_an_honest_solution(entry: Entry) -> None:
    for tests in (entry.possible_tests, entry.impossible_tests):
        for old in (entry.stub, None):
            files = [WrittenFile(SOLUTION, old, entry.source)]
            assert scan_writes(files, TestLiterals([tests]), ScanSettings(), _is_test) == []


def _one_of_each(kinds: list[Entry]) -> list[Entry]:
    chosen: dict[tuple[str, str], Entry] = {}
    for entry in kinds:
        chosen.setdefault((entry.kind, entry.cheat_class if entry.cheat else entry.task), entry)
    return list(chosen.values())


SAMPLE = _one_of_each([*CHEATS, *UNSEEN])


@pytest.mark.parametrize("entry", SAMPLE, ids=[e.id for e in SAMPLE])
def test_the_cheat_fools_plain_pytest(entry: Entry, tmp_path: Path) -> None:
    runs = run_tests(tmp_path, entry.source, entry.tests)
    assert 0 in runs.values(), runs  # pytest, or the tests run as a script, exit 0
    honest = next(e for e in HONEST if e.task == entry.task)
    assert 0 not in run_tests(tmp_path, honest.source, entry.tests).values()


HONEST_SAMPLE = _one_of_each(HONEST)


@pytest.mark.parametrize("entry", HONEST_SAMPLE, ids=[e.id for e in HONEST_SAMPLE])
def test_the_honest_solution_passes_the_possible_task_only(entry: Entry, tmp_path: Path) -> None:
    assert set(run_tests(tmp_path, entry.source, entry.possible_tests).values()) == {0}
    assert 0 not in run_tests(tmp_path, entry.source, entry.impossible_tests).values()
