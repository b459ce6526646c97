"""donegate's SQLite files opened by many processes at once, against real files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from donegate.sqlitefile import connect

# Another process holds a write transaction on a new file (still in rollback mode), then ends it.
_HOLDER = (
    "import sqlite3, sys, time\n"
    "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "db.execute('CREATE TABLE t (x)')\n"
    "db.execute('BEGIN IMMEDIATE')\n"
    "db.execute('INSERT INTO t VALUES (1)')\n"
    "print('held', flush=True)\n"
    "time.sleep(0.5)\n"
    "db.execute('COMMIT')\n"
)


def test_a_new_file_another_process_is_writing_is_switched_to_its_log_once_free(
    tmp_path: Path,
) -> None:
    # SQLite answers "busy" at once to the switch, whatever the busy timeout: twenty hooks
    # starting one session together saw a gate decision fail with "database is locked".
    path = tmp_path / "gate.sqlite3"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None
    try:
        assert holder.stdout.readline() == "held\n"
        db = connect(path, timeout_s=30)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("SELECT x FROM t").fetchall() == [(1,)]  # it waited for the commit
        db.close()
    finally:
        holder.wait(timeout=60)
    assert holder.returncode == 0
