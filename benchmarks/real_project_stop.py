"""A confined agent's stop on a real project, against the project's own test command.

Run: ``.venv/bin/python benchmarks/real_project_stop.py --project DIR --file PATH [--repeat R]``.

``DIR`` is a scratch checkout of a real project, a git repository with its virtualenv in
``.venv/`` (the benchmark gates it: it writes ``donegate.toml`` and runs ``donegate init
claude-code`` there, and commits both). For Flask (the figure in the closing note)::

    git clone https://github.com/pallets/flask /var/tmp/real/flask && cd /var/tmp/real/flask
    python3 -m venv .venv && .venv/bin/pip install -e . "pytest<9" asgiref python-dotenv
    echo .venv/ >> .git/info/exclude  # Python 3.11's venv writes no .gitignore of its own

Rich (commit 42899d8a, 950 tests, about 6 s), whose expected outputs need pygments 2.18; the
three tests that fail on this machine before any edit are deselected in ``--command``::

    .venv/bin/pip install -e . "pytest<9" attrs typing-extensions pygments==2.18.0
    ... --file rich/text.py --command '["/var/tmp/real/rich/.venv/bin/python", "-m", "pytest",
        "-q", "-p", "no:cacheprovider", "--deselect", "tests/test_markdown.py::test_inline_code",
        "--deselect", "tests/test_syntax.py::test_blank_lines",
        "--deselect", "tests/test_syntax.py::test_python_render_simple_indent_guides"]'

Each round, alternately so that both see the same machine:
  1. the project's test command in the live tree (the baseline);
  2. a person's prompt, then one edit to ``PATH`` (a module constant added: a comment would be
     cosmetic, with nothing to check), then the ``Stop`` hook as Claude Code runs it, with
     init's sandbox settings (a confined agent): the snapshot, the scan, the kept sealed copy
     brought up to date, the command started in donegate's own sandbox, the receipt. Each stop
     must end verified, or the benchmark stops.
The state directory is outside ``/tmp`` (Claude Code's sandbox lets commands write there, which
would make the agent unconfined). The first ``--warmup`` stops (default 3) are not counted: the
first copies the whole tree, and the first few fill donegate's bytecode store (each run's
compiles are learned within a quarter of its time), as on a machine's first stops; the store then
lasts from session to session.
``PYTHONDONTWRITEBYTECODE`` is removed from the environment, so that the command run directly keeps
its bytecode, as on a developer's machine. Prints the medians, the stop's ratio to the command,
and the median of each round's own ratio (on a machine whose speed drifts, the steadier figure).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from donegate.ledger import Ledger

SESSION = "bench-real-1"


def hook(payload: dict[str, object], project: Path, state: Path) -> float:
    """Run ``donegate hook claude-code`` as the host does; its wall time."""
    env = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
    argv = [sys.executable, "-m", "donegate", "hook", "claude-code"]
    start = time.perf_counter()
    done = subprocess.run(
        argv,
        input=json.dumps(payload),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the hook failed ({done.returncode}): {done.stderr[-2000:]}")
    return took


def event(name: str, project: Path, **fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "session_id": SESSION,
        "transcript_path": str(project / ".transcript.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": name,
    }
    if name == "Stop":
        base["stop_hook_active"] = False
    return {**base, **fields}


def gate(project: Path, command: list[str], state: Path) -> None:
    """Write the team's file, install the hooks as a person would, and commit both."""
    config = f"""[policy]
id = "code-change"
requires = ["test_run"]

[[checks]]
check_type = "test_run"
command = {json.dumps(command)}
expected = {{ exit_code = 0 }}
timeout_s = 600
"""
    (project / "donegate.toml").write_text(config)
    env = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
    init = [sys.executable, "-m", "donegate", "init", "claude-code"]
    subprocess.run(init, cwd=project, env=env, check=True, capture_output=True)
    subprocess.run(["git", "add", "donegate.toml", ".claude"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-qm", "donegate"], cwd=project, check=True)


def plain_s(project: Path, command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the project's command failed: {done.stdout[-2000:]}")
    return took


def stop_s(project: Path, target: Path, state: Path, turn: int) -> float:
    """A prompt, one edit, and the stop; the stop's time. It must end verified and confined."""
    hook(event("UserPromptSubmit", project, prompt=f"tidy up, round {turn}"), project, state)
    with target.open("a") as f:
        f.write(f"_BENCHMARK_ROUND = {turn}\n")
    # As Claude Code reports an edit (not timed): the stop then knows the turn wrote.
    written = {"file_path": str(target), "content": target.read_text()}
    response = {"type": "update", "filePath": str(target), "content": written["content"]}
    edit = {"tool_name": "Write", "tool_input": written, "tool_response": response}
    hook(event("PostToolUse", project, **edit), project, state)
    took = hook(event("Stop", project, last_assistant_message="Done."), project, state)
    with Ledger(state) as ledger:
        receipt = ledger.recent(1)[0]
    confined = receipt.decision_doc.get("confinement", {}).get("confined")
    if receipt.verdict != "verified" or not confined:
        evidence = json.dumps(receipt.claim.get("evidence"))[-3000:]
        said = f"stop {turn}: {receipt.verdict}, confined={confined}: {receipt.reason}"
        raise SystemExit(f"{said} {evidence}")
    return took


def medians(
    project: Path, command: list[str], target: Path, repeat: int, warmup: int = 3
) -> tuple[float, float, float]:
    """The command's and the stop's medians (ms) over ``repeat`` interleaved rounds on
    ``project``, gated first, after ``warmup`` stops that are not counted (the whole tree
    copied, the bytecode store filled), and the median of each round's ratio of the two (a
    machine whose speed drifts from round to round moves both sides of a round alike). Each
    stop edits ``target``."""
    # Outside /tmp: Claude Code's sandbox lets commands write there (an unconfined agent).
    place = Path(tempfile.mkdtemp(prefix="donegate-bench-", dir="/var/tmp"))
    state = place / "state"
    try:
        gate(project, command, state)
        hook(event("SessionStart", project, source="startup"), project, state)
        for turn in range(warmup):
            stop_s(project, target, state, -1 - turn)
        plain, stops = [], []
        for turn in range(1, repeat + 1):
            plain.append(plain_s(project, command))
            stops.append(stop_s(project, target, state, turn))
    finally:
        shutil.rmtree(place, ignore_errors=True)
    ratios = [stop / alone for stop, alone in zip(stops, plain, strict=True)]
    return (
        statistics.median(plain) * 1000,
        statistics.median(stops) * 1000,
        statistics.median(ratios),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", required=True, type=Path)
    parser.add_argument("--file", required=True, help="the file each round edits")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3, help="stops not counted (default 3)")
    parser.add_argument(
        "--command",
        default=None,
        help="the test command as a JSON list (default: .venv's pytest -q, no cache provider)",
    )
    args = parser.parse_args()
    # As on a developer's machine: with it set, the command run directly would compile what it
    # imports at every round, while donegate's runs read its bytecode store (the baseline slower).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    project = args.project.resolve()
    python = str(project / ".venv" / "bin" / "python")
    command = json.loads(args.command) if args.command else [python, "-m", "pytest", "-q"]
    command += [] if args.command else ["-p", "no:cacheprovider"]
    target = project / args.file
    try:
        base, stop, paired = medians(project, command, target, args.repeat, args.warmup)
    finally:
        subprocess.run(["git", "checkout", "-q", "--", args.file], cwd=project, check=False)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{project.name}: median of {args.repeat} rounds (load {load})")
    print(f"  the project's command        {base:8.1f} ms")
    print(f"  a stop after a one-file edit {stop:8.1f} ms  {stop / base:5.2f}x the command")
    print(f"  the median of each round's ratio        {paired:5.2f}x")


if __name__ == "__main__":
    main()
