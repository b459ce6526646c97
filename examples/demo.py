"""The main job, on the embedded examples: verify each claim in examples/ with the real CLI.

Run with ``make demo``. Each example is a Completion Claim v0.1 document as an agent (or a harness)
would submit it; donegate recomputes the verdict by the spec's six rules, ignoring any verdict the
document carries. The decision time is pinned so the examples, written in August 2026, read the
same on any day.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
DECIDED_AT = "2026-08-27T18:05:00Z"


def verify(claim: Path) -> int:
    print(f"\n$ donegate verify examples/{claim.name} --now {DECIDED_AT}", flush=True)
    cmd = [sys.executable, "-m", "donegate", "verify", str(claim), "--now", DECIDED_AT]
    result = subprocess.run(
        cmd, check=False, stderr=subprocess.STDOUT, stdout=subprocess.PIPE, text=True
    )
    print(result.stdout.rstrip())
    print(f"exit code {result.returncode}")
    return result.returncode


def main() -> int:
    print("donegate: verifying the example completion claims")
    codes = {claim.name: verify(claim) for claim in sorted(HERE.glob("*.json"))}
    print("\nExit codes: 0 verified, 1 refuted, 3 unverified, 4 invalid input.")
    failed = [name for name, code in codes.items() if code not in (0, 1, 3)]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
