"""Peak memory of ``verify --json`` on a claim of a few MB, as a real process: proportional to the
input, well under the 200 MB figures of ``benchmarks/memory.py`` (which this scales down)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
import memory

SIZE_MB = 8
BOUND = 14.0  # peak above the bare imports, per input byte; it was about 25x before the claim was
# read item by item, written straight from its models and its field sets shared


def peak(args: list[str]) -> int:
    code, rss = memory.peak_rss(Path("/dev/null"), args)
    assert code in (0, 3), code
    return rss


def test_verify_json_peak_is_proportional_to_the_claim(tmp_path: Path) -> None:
    claim = tmp_path / "claim.json"
    size = memory.write_claim(claim, SIZE_MB)
    imports = "import donegate.cli.app, donegate.cli.verify, donegate.verdict, donegate.claim"
    bare = peak([sys.executable, "-c", imports])
    args = [sys.executable, "-m", "donegate", "verify", str(claim), "--json", "--now", memory.NOW]
    ratio = (peak(args) - bare) / size
    print(f"peak above the imports: {ratio:.2f}x the input")
    assert ratio <= BOUND, f"peak {ratio:.1f}x the input above the imports"
