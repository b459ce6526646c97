"""The main job, end to end: ``make demo``.

1. Four agent sessions replayed through the real ``donegate hook claude-code`` entry point, on a
   small real Python project in a temporary git repository (``donegate.demo.replay``), and a
   fifth where a scripted judge sends back code fitted to the test (``donegate.demo.judged``).
2. The example Completion Claims in examples/ verified with the real CLI. The decision time is
   pinned so the examples, written in August 2026, read the same on any day.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from donegate.demo import judged, replay

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
    replay.main()
    with tempfile.TemporaryDirectory(prefix="donegate-demo-judge-") as tmp:
        judged.main(Path(tmp), Path(tmp) / "state")
    print("\n\ndonegate: verifying the example completion claims in examples/")
    codes = {claim.name: verify(claim) for claim in sorted(HERE.glob("*.json"))}
    print("\nExit codes: 0 verified, 1 refuted, 3 unverified, 4 invalid input.")
    return 1 if any(code not in (0, 1, 3) for code in codes.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
