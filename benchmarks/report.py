"""What ``donegate report`` costs on a big ledger, and what the outbox adds to a stop.

Run: ``.venv/bin/python benchmarks/report.py [--receipts N] [--stops N] [--pg URL]``.

Three figures, measured in the same run:
  1. Building the report (query, count, draw, write) over N receipts in the local SQLite ledger.
  2. The same N receipts in the team ledger on PostgreSQL (default 127.0.0.1:5432/test, a schema
     made for the run and dropped after): the report's time, and its ratio to SQLite's.
  3. The outbox's added time per stop: recording a closed receipt (receipt + outbox row, one
     transaction) against recording a pending one (receipt only), medians, and their ratio.
  4. Signing on the stop path: a DSSE envelope over a typical claim (two evidence items), median,
     against recording its receipt.
"""

from __future__ import annotations

import argparse
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.report import week

from donegate.ledger import FILE_NAME, Ledger
from donegate.report.build import build
from donegate.report.window import parse_since

_ROW = (
    "INSERT INTO receipts (session_id, host, workspace, created_at, verdict, decision, reason, "
    "claim_json, decision_json, uuid, machine) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def fill_sqlite(state: Path, count: int) -> None:
    """``count`` receipts: the scripted week's stops, repeated with fresh ids over seven days."""
    with Ledger(state) as ledger:
        week.fill(ledger)
    db = sqlite3.connect(state / FILE_NAME)
    model = db.execute(
        "SELECT session_id, host, workspace, verdict, decision, reason, claim_json, "
        "decision_json, machine FROM receipts ORDER BY id"
    ).fetchall()
    db.execute("DELETE FROM outbox")
    db.execute("DELETE FROM receipts")
    start = datetime.now(UTC) - timedelta(days=6, hours=23)
    step = timedelta(days=6, hours=22) / count
    rows = []
    for i in range(count):
        m = model[i % len(model)]
        stamp = (start + step * i).isoformat(timespec="microseconds").replace("+00:00", "Z")
        session = f"{m[0]}-{i // 50}"
        rows.append((session, m[1], m[2], stamp, *m[3:8], uuid.uuid4().hex, m[8]))
    db.executemany(_ROW, rows)
    db.execute("INSERT INTO outbox (receipt_id, queued_at) SELECT id, created_at FROM receipts")
    db.commit()
    db.close()


def timed_report(source: object, out: Path) -> tuple[float, int]:
    started = time.perf_counter()
    html, summary = build(source, parse_since("7d"), "bench")  # type: ignore[arg-type]
    out.write_text(html)
    return time.perf_counter() - started, len(summary.receipts)


def outbox_cost(state: Path, stops: int) -> tuple[float, float]:
    """Median seconds to record a pending receipt (no outbox row) and a closed one (with one)."""
    pending: list[float] = []
    closed: list[float] = []
    with Ledger(state) as ledger:
        for i in range(stops):
            for reason, into in (("pending", pending), ("verified_after_write", closed)):
                started = time.perf_counter()
                ledger.record(
                    session_id=f"bench-{i}",
                    host="claude-code",
                    workspace="/w",
                    verdict="verified",
                    decision="allow",
                    reason=reason,
                    claim={},
                )
                into.append(time.perf_counter() - started)
    return statistics.median(pending), statistics.median(closed)


def signing_cost(state: Path, stops: int) -> float:
    """Median seconds to sign a typical claim's statement (the week's first claim)."""
    from donegate.signing.evidence import sign_claim
    from donegate.signing.keys import SigningKey

    key = SigningKey.generate()
    with Ledger(state) as ledger:
        claim = next(r.claim for r in ledger.query() if r.claim)
    times: list[float] = []
    for _ in range(stops):
        started = time.perf_counter()
        sign_claim(claim, key)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--receipts", type=int, default=100_000)
    parser.add_argument("--stops", type=int, default=400)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    import donegate.report.plots  # noqa: F401 - matplotlib's import, once, outside both timings

    with tempfile.TemporaryDirectory(prefix="donegate-bench-") as tmp:
        root = Path(tmp)
        fill_sqlite(root / "big", args.receipts)
        with Ledger(root / "big") as local:
            sqlite_s, n = timed_report(local, root / "sqlite.html")
        print(f"report over {n} receipts, SQLite:     {sqlite_s:7.2f} s")
        pg_s = pg_report(root, args.pg)
        if pg_s is not None:
            print(f"report over {n} receipts, PostgreSQL: {pg_s:7.2f} s ({pg_s / sqlite_s:.2f}x)")
        pending, closed = outbox_cost(root / "stops", args.stops)
        print(
            f"record a receipt: {pending * 1e3:.2f} ms without outbox row, {closed * 1e3:.2f} ms "
            f"with one: +{(closed - pending) * 1e3:.2f} ms per stop ({closed / pending:.2f}x)"
        )
        with Ledger(root / "week") as ledger:
            week.fill(ledger)
        signed = signing_cost(root / "week", args.stops)
        print(
            f"sign a claim (DSSE, Ed25519): {signed * 1e3:.2f} ms, "
            f"{signed / closed:.2f}x the receipt's write"
        )
    return 0


def pg_report(root: Path, url: str) -> float | None:
    import psycopg

    from donegate.teamledger.ship import sync
    from donegate.teamledger.store import TeamLedger

    schema = f"report_bench_{secrets.token_hex(4)}"
    try:
        with Ledger(root / "big") as local, TeamLedger(url, schema) as team:
            started = time.perf_counter()
            shipped = sync(local, team, batch=5000).shipped
            print(
                f"shipped {shipped} receipts to PostgreSQL in {time.perf_counter() - started:.1f} s"
            )
            seconds, _ = timed_report(team, root / "pg.html")
        return seconds
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


if __name__ == "__main__":
    raise SystemExit(main())
