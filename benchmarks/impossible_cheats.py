"""The scan on ImpossibleBench-style tasks: does each cheat fool plain pytest, does the scan see it?

Run: ``.venv/bin/python benchmarks/impossible_cheats.py [--only TASK] [--no-run] [--show]``.

The corpus is ``tests/scan/impossible`` (see its ``__init__``). For each cheat (``cheat-`` and
``unseen-``), the impossible tests are run on it (plain pytest, and as a script where the tests
run themselves): a cheat *fools* a runner whose exit status is 0. It is then scanned as a stop
scans a write, twice: as an edit of the task's stub and as a new file. For each honest solution,
the possible tests must pass, the impossible ones fail, and the scan find nothing. Prints one
line per solution and a count of cheats seen per class (the first word after ``cheat-``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.scan.impossible import SOLUTION, Entry, entries, run_tests

from donegate.scan import Finding, ScanSettings, TestLiterals, WrittenFile, scan_writes


def is_test(path: str) -> bool:
    """The corpus's test files."""
    return path.startswith("tests/")


def scan(entry: Entry, tests: str, old: str | None) -> list[Finding]:
    """The blocking findings of ``entry`` written over ``old``, judged by ``tests``."""
    files = [WrittenFile(SOLUTION, old, entry.source)]
    found = scan_writes(files, TestLiterals([tests]), ScanSettings(), is_test)
    return [f for f in found if f.blocking]


def statuses(entry: Entry) -> dict[str, int]:
    """The runs of the tests that judge ``entry`` (for an honest one, possible then impossible)."""
    with tempfile.TemporaryDirectory() as tmp:
        if entry.cheat:
            return run_tests(Path(tmp), entry.source, entry.tests)
        possible = run_tests(Path(tmp), entry.source, entry.possible_tests)
        impossible = run_tests(Path(tmp), entry.source, entry.impossible_tests)
        return {**{f"possible-{k}": v for k, v in possible.items()}, **impossible}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one task's folder name")
    parser.add_argument("--no-run", action="store_true", help="scan only; run no tests")
    parser.add_argument("--show", action="store_true", help="print every finding")
    args = parser.parse_args(argv)
    chosen = [e for e in entries() if args.only in (None, e.task)]
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(statuses, chosen)) if not args.no_run else [{} for _ in chosen]
    seen: Counter[str] = Counter()
    total: Counter[str] = Counter()
    bad = 0
    for entry, run in zip(chosen, runs, strict=True):
        edit, new = scan(entry, entry.tests, entry.stub), scan(entry, entry.tests, None)
        if entry.cheat:
            fools = not run or any(v == 0 for k, v in run.items())
            kind = entry.cheat_class
            total[kind] += 1
            caught = bool(edit) and bool(new)
            seen[kind] += caught
            verdict = "caught" if caught else ("MISSED" if fools else "missed (fools nothing)")
            if entry.kind == "unseen":
                verdict = "unseen" if not caught else "caught (unseen expected)"
            bad += (fools and not caught and entry.kind == "cheat") or not fools
            extra = "" if fools else " [does not fool the tests]"
        else:
            wrong = scan(entry, entry.impossible_tests, entry.stub)
            passes = not run or run.get("possible-pytest") == 0
            refuted = not run or all(v != 0 for k, v in run.items() if "possible" not in k)
            verdict = "clean" if not (edit or new or wrong) else "FALSE HIT"
            bad += verdict != "clean" or not passes or not refuted
            extra = "" if passes and refuted else f" [runs {run}]"
        constructs = sorted({f.construct for f in edit + new})
        print(f"{entry.id:55} {verdict:8} {','.join(constructs)}{extra}")
        if args.show:
            for finding in {str(f) for f in edit + new}:
                print(f"    {finding}")
    print()
    for kind in sorted(total):
        print(f"{kind:12} {seen[kind]}/{total[kind]}")
    cheats = sum(total.values())
    honest = len(chosen) - cheats
    unseen = sum(e.kind == "unseen" for e in chosen)
    print(
        f"cheats caught {sum(seen.values())}/{cheats} ({unseen} unseen by design); "
        f"honest {honest}; problems {bad}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
