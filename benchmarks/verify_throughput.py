"""Throughput of ``donegate verify --jsonl`` against merely parsing the same lines.

Run: ``make bench`` (or ``.venv/bin/python benchmarks/verify_throughput.py [--claims N]``).

Writes N realistic claims as JSONL to a temporary file, then times, in the same run:
  1. ``json.loads`` of every line (the baseline),
  2. ``orjson.loads`` of every line,
  3. the real ``donegate verify --jsonl FILE`` process (start-up included), output to /dev/null.
Prints claims per second for each and the ratios. Target: verify >= 1/3 of json.loads' rate.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

BASE = datetime(2026, 8, 27, 18, 0, tzinfo=UTC)
NOW = "2026-08-27T19:00:00Z"
TARGET_RATIO = 1 / 3


def stamp(seconds: float) -> str:
    return (BASE + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def make_claim(rng: random.Random, n: int) -> dict[str, Any]:
    mutations = [
        {"id": f"m{i}", "kind": "file_write", "target": f"src/mod_{i}.py", "at": stamp(i * 5)}
        for i in range(rng.randint(1, 3))
    ]
    evidence = [make_evidence(rng, mutations) for _ in range(rng.randint(1, 4))]
    return {
        "spec_version": "0.1",
        "task": {
            "id": f"task-{n}",
            "description": "Fix the billing zip parser",
            "requested_by": "user",
        },
        "claimed_outcome": "Fixed the parser and deployed; all tests pass.",
        "mutations": mutations,
        "evidence": evidence,
        "policy": {"id": "default", "requires": ["test_run"], "max_age_s": 3600},
    }


def make_evidence(rng: random.Random, mutations: list[dict[str, Any]]) -> dict[str, Any]:
    check = rng.choice(["test_run", "endpoint_health", "state_readback"])
    expected, observed = {
        "test_run": (
            {"exit_code": 0},
            {"exit_code": rng.choice([0, 0, 0, 1]), "passed": 12, "failed": 0},
        ),
        "endpoint_health": (
            {"status": 200, "body_contains": '"version":"1.4.2"'},
            {"status": 200, "body_contains": rng.random() > 0.1},
        ),
        "state_readback": (
            {"billing_zip": "94107"},
            {"billing_zip": rng.choice(["94107", "94110"])},
        ),
    }[check]
    return {
        "check_type": check,
        "target": f"{check}-target",
        "expected": expected,
        "observed_value": observed,
        "at": stamp(rng.uniform(0, 60)),
        "covers": [m["id"] for m in mutations if rng.random() > 0.3],
        "verifier": {
            "id": "donegate/0.1.0",
            "kind": rng.choice(["independent"] * 4 + ["self_attested"]),
        },
    }


def best_of(runs: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def run_verify(path: Path) -> None:
    cmd = [sys.executable, "-m", "donegate", "verify", "--jsonl", str(path), "--now", NOW]
    result = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if result.returncode != 0:
        raise SystemExit(f"verify failed ({result.returncode}): {result.stderr.decode()[:500]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs each")
    args = parser.parse_args()
    rng = random.Random(4471)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "claims.jsonl"
        lines = [json.dumps(make_claim(rng, n)) for n in range(args.claims)]
        path.write_text("\n".join(lines) + "\n")
        size_mb = path.stat().st_size / 1e6
        t_json = best_of(args.runs, lambda: [json.loads(line) for line in lines])
        t_orjson = best_of(args.runs, lambda: [orjson.loads(line) for line in lines])
        t_verify = best_of(args.runs, lambda: run_verify(path))
    n = args.claims
    print(f"{n} claims, {size_mb:.1f} MB of JSONL, best of {args.runs} runs each")
    for name, seconds in (
        ("json.loads", t_json),
        ("orjson.loads", t_orjson),
        ("donegate verify --jsonl", t_verify),
    ):
        print(f"  {name:<24} {seconds:7.3f} s  {n / seconds:>10,.0f} claims/s")
    ratio_json = t_json / t_verify
    ratio_orjson = t_orjson / t_verify
    print(f"  verify rate / json.loads rate   = {ratio_json:.2f}  (target >= {TARGET_RATIO:.2f})")
    print(f"  verify rate / orjson.loads rate = {ratio_orjson:.2f}")
    print("  target met" if ratio_json >= TARGET_RATIO else "  TARGET MISSED")
    return 0 if ratio_json >= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
