"""A stop that changed nothing stays light: the hook path loads no heavy module.

Hosts start a fresh process at every agent stop; these imports each cost tens of milliseconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from donegate.demo import project
from donegate.demo.project import payload, run_hook

HEAVY: tuple[str, ...] = (
    "click",
    "pydantic",
    "dataclasses",
    "tomllib",
    "httpx",
    "sqlalchemy",
    "pygments",
)
# Standard modules a few milliseconds each, that a stop which changed nothing has no use for.
HEAVY += ("tempfile", "shutil", "uuid", "socket", "getpass", "typing", "subprocess", "threading")
PROBE = """
import json, sys
from donegate.cli import main
code = main(["hook", "claude-code"])
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps([code, heavy]), file=sys.stderr)
"""


def test_a_no_change_stop_loads_no_heavy_module(tmp_path: Path) -> None:
    repo = project.create(tmp_path / "repo")
    state = tmp_path / "state"
    run_hook(payload("SessionStart", "light", repo), state)
    env = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY)],
        input=json.dumps(payload("Stop", "light", repo)),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    code, heavy = json.loads(done.stderr.strip().splitlines()[-1])
    assert code == 0
    assert heavy == []
