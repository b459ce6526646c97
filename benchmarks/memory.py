"""Peak memory of ``donegate verify`` on one large claim, and of ``gate decide`` on a large input.

Run: ``.venv/bin/python benchmarks/memory.py [--mb 200]``.

Writes a claim of about ``--mb`` MB (evidence items of about 200 bytes each: a million at 200 MB)
and a gate request of about the same size (a list of writes), then runs each real command in a
child process and reads the child's peak resident set size (``ru_maxrss``). Prints the peak and
its ratio to the input size; the target is at most 10x.

``gate decide`` refuses input larger than its documented bound (exit 4, see README "Input
bounds"); past that bound the figure is the cost of refusing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET_RATIO = 10.0
NOW = "2026-08-27T19:00:00Z"


def write_claim(path: Path, size_mb: float) -> int:
    """A valid claim of about ``size_mb`` MB; returns its size in bytes."""
    head = {
        "spec_version": "0.1",
        "task": {"id": "big"},
        "claimed_outcome": "many checks",
        "mutations": [
            {"id": "m1", "kind": "file_write", "target": "src/a.py", "at": "2026-08-27T18:00:00Z"}
        ],
        "policy": {"requires": ["test_run"], "max_age_s": 7200},
    }
    item = {
        "check_type": "test_run",
        "target": "pytest -q tests/test_module.py",
        "expected": {"exit_code": 0},
        "observed_value": {"exit_code": 0, "passed": 12},
        "at": "2026-08-27T18:30:00.123456789Z",
        "covers": ["m1"],
        "verifier": {"id": "donegate/0.1", "kind": "independent"},
    }
    one = json.dumps(item).encode()
    count = max(1, int(size_mb * 1e6 / (len(one) + 1)))
    text = json.dumps(head)[:-1].encode() + b', "evidence": ['
    with path.open("wb") as out:
        out.write(text)
        for i in range(count):
            out.write(one if i == 0 else b"," + one)
        out.write(b"]}\n")
    return path.stat().st_size


def write_request(path: Path, size_mb: float) -> int:
    """A gate request of about ``size_mb`` MB (a list of writes); returns its size in bytes."""
    write = json.dumps({"path": "src/pkg/module.py", "diff": "+x = 1\n" * 20, "kind": "source"})
    count = max(1, int(size_mb * 1e6 / (len(write) + 1)))
    with path.open("wb") as out:
        out.write(b'{"facts": {"verify": {"ok": true}, "writes": [')
        for i in range(count):
            out.write(write.encode() if i == 0 else b"," + write.encode())
        out.write(b"]}}\n")
    return path.stat().st_size


_PEAK = (
    "import resource, subprocess, sys\n"
    "with open(sys.argv[1], 'rb') as stdin:\n"
    "    done = subprocess.run(sys.argv[2:], stdin=stdin, stdout=subprocess.DEVNULL,"
    " stderr=subprocess.PIPE)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.stderr.write(done.stderr.decode(errors='replace')[-300:])\n"
)


def peak_rss(stdin: Path, args: list[str]) -> tuple[int, int]:
    """Run ``args`` in a fresh child (stdin from a file); its exit code and peak RSS in bytes."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(stdin), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    code, kilobytes = done.stdout.split()
    if done.stderr.strip():
        print(f"    stderr: {done.stderr.strip()[:300]}")
    return int(code), int(kilobytes) * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=200.0)
    size_mb = parser.parse_args().mb
    donegate = [sys.executable, "-m", "donegate"]
    baseline = peak_rss(Path("/dev/null"), [sys.executable, "-c", "import donegate.cli.app"])[1]
    print(f"interpreter and imports alone: {baseline / 1e6:.0f} MB")
    with tempfile.TemporaryDirectory() as tmp:
        claim, request = Path(tmp) / "claim.json", Path(tmp) / "request.json"
        runs = [
            (
                "verify",
                write_claim(claim, size_mb),
                Path("/dev/null"),
                [*donegate, "verify", str(claim), "--now", NOW],
            ),
            (
                "verify --json",
                claim.stat().st_size,
                Path("/dev/null"),
                [*donegate, "verify", str(claim), "--json", "--now", NOW],
            ),
            (
                "gate decide",
                write_request(request, size_mb),
                request,
                [*donegate, "gate", "decide", "--session", "m", "--state-dir", tmp],
            ),
        ]
        for name, size, stdin, args in runs:
            code, peak = peak_rss(stdin, args)
            ratio = peak / size
            verdict = "ok" if ratio <= TARGET_RATIO else "OVER"
            print(
                f"{name:14} input {size / 1e6:7.1f} MB  exit {code}  peak RSS {peak / 1e6:7.0f} MB"
                f"  ratio {ratio:5.2f}x  (target <= {TARGET_RATIO:g}x: {verdict})"
            )


if __name__ == "__main__":
    main()
