"""Gate decisions per second in process, and the cost of one ``donegate gate decide`` process.

Run: ``.venv/bin/python benchmarks/gate_decide.py [--decisions N] [--repeat R]``.

Measures, in the same run:
  1. decisions per second of ``Gate.decide`` in process, each a committed SQLite transaction
     (counts + event) on a real state file, over a realistic mix of facts;
  2. the same decisions without state (facts -> observation -> ladder only), for the ladder's share;
  3. the wall time of one ``donegate gate decide`` process (the hook path: a fresh process at every
     agent stop) against ``python -c pass``, each the median of R runs, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import cycle, islice
from pathlib import Path
from typing import Any

from donegate.gate import Gate, GateOptions, ladder

FACTS: list[dict[str, Any]] = [
    {"source_write_count": 0},
    {"source_write_count": 2, "verify": {"ok": False, "findings": "E0308 mismatched types"}},
    {"writes": [{"path": "src/a.py"}, {"path": "README.md", "kind": "cosmetic"}], "verify": []},
    {"source_write_count": 1, "consecutive_failed_after_write": 4, "verify": [{"ok": False}]},
    {"source_write_count": 1, "verify": [{"ok": True, "command": "pytest -q"}, {"ok": True}]},
]


def in_process(state: Path, decisions: int) -> tuple[float, float]:
    """(decisions/s with state, decisions/s of the ladder alone)."""
    gate = Gate(GateOptions(max_vetoes=0, max_strict_vetoes=0), state_dir=state)
    inputs = list(islice(cycle(FACTS), decisions))
    start = time.perf_counter()
    for index, facts in enumerate(inputs):
        gate.decide(f"s{index % 7}", facts)
    with_state = decisions / (time.perf_counter() - start)
    start = time.perf_counter()
    for facts in inputs:
        ladder.decide(gate.observe("s", facts))
    ladder_only = decisions / (time.perf_counter() - start)
    gate.store.close()
    return with_state, ladder_only


def wall(command: list[str], stdin: bytes, repeat: int) -> float:
    """Median wall time in seconds of running ``command`` to completion."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, input=stdin, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        with_state, ladder_only = in_process(state / "in-process", args.decisions)
        request = json.dumps({"facts": FACTS[1], "options": {"max_strict_vetoes": 0}}).encode()
        gate_cmd = [sys.executable, "-m", "donegate", "gate", "decide", "--session", "bench"]
        gate_cmd += ["--state-dir", str(state / "cli")]
        wall(gate_cmd, request, 1)  # warm the bytecode cache and create the state file
        gate_s = wall(gate_cmd, request, args.repeat)
        bare_s = wall([sys.executable, "-c", "pass"], b"", args.repeat)
    print(f"in process, with SQLite state: {with_state:10,.0f} decisions/s (N={args.decisions})")
    print(f"in process, ladder only:       {ladder_only:10,.0f} decisions/s")
    print(f"one `donegate gate decide` process: {gate_s * 1000:6.1f} ms (median of {args.repeat})")
    print(f"`python -c pass`:                   {bare_s * 1000:6.1f} ms (median of {args.repeat})")
    print(
        f"ratio: {gate_s / bare_s:.1f}x  (extra {1000 * (gate_s - bare_s):.1f} ms per agent stop)"
    )


if __name__ == "__main__":
    main()
