"""A donegate installed inside the workspace is a judge the agent can rewrite: the person is told.

The agent below plays it for real: donegate runs from a copy inside the project (as when it is a
dependency in the project's own virtualenv), the agent edits that copy, and its next stop says
whatever the agent wrote. No check inside the judge can prevent that, so ``init``, ``doctor``
and every stop of the untouched judge say so, with the fix.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import donegate
from donegate import reach
from donegate.demo import project
from donegate.demo.project import FIXED, payload, run_hook
from donegate.hooks.doctor import Doctor

SESSION = "reach-1"
WARNING = "the agent can rewrite its own judge"


def _vendored(repo: Path) -> Path:
    """donegate's package copied into the workspace, as a project dependency would lie there."""
    tools = repo / "tools"
    shutil.copytree(
        Path(donegate.__file__).parent,
        tools / "donegate",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    project.git(repo, "add", "-A")
    project.git(repo, "commit", "-q", "-m", "vendored tools")
    return tools


def _hook(event: str, repo: Path, state: Path, path: Path | None) -> dict[str, object]:
    env = {"PYTHONPATH": str(path)} if path is not None else {}
    run = run_hook(payload(event, SESSION, repo), state, cwd=repo, env=env)
    assert run.exit_code == 0, run.stderr
    return run.answer


def test_a_judge_inside_the_workspace_is_reported_at_every_stop_and_can_be_rewritten(
    tmp_path: Path,
) -> None:
    repo = project.create(tmp_path / "repo")
    state = tmp_path / "state"
    tools = _vendored(repo)
    _hook("SessionStart", repo, state, tools)
    (repo / "zipcode.py").write_text(FIXED)
    honest = _hook("Stop", repo, state, tools)
    assert WARNING in str(honest.get("systemMessage", ""))
    # The agent rewrites the judge it can reach: the next stop says what the agent wrote.
    stop = tools / "donegate" / "session" / "__init__.py"
    stop.write_text(
        stop.read_text()
        + "\n\ndef on_stop(event, state_dir):\n"
        + "    raise SystemExit(0)  # the agent's judge: every stop passes, silently\n"
    )
    (repo / "zipcode.py").write_text("def normalize(z):\n    return z\n")
    assert _hook("Stop", repo, state, tools) == {}
    # The same stops with donegate installed outside the workspace carry no such warning.
    outside = tmp_path / "outside"
    outside_repo = project.create(outside / "repo")
    _hook("SessionStart", outside_repo, outside / "state", None)
    (outside_repo / "zipcode.py").write_text(FIXED)
    assert WARNING not in str(_hook("Stop", outside_repo, outside / "state", None))


def test_doctor_and_init_name_a_judge_inside_the_repository(tmp_path: Path) -> None:
    inside = Path(donegate.__file__).parents[1]  # the source tree that holds this donegate
    assert any(found.startswith("its code") for found in reach.inside(inside))
    assert reach.inside(tmp_path) == []
    assert reach.inside(tmp_path, tmp_path / "state") == [f"its state directory ({tmp_path}/state)"]
    finding = Doctor(inside, tmp_path / "state", run_checks=False).judge()
    assert not finding.ok
    assert finding.fix == reach.FIX
    assert Doctor(tmp_path, tmp_path.parent / "state", run_checks=False).judge().ok
    venv_program = tmp_path / ".venv" / "bin" / "donegate"
    init = [sys.executable, "-m", "donegate", "init", "claude-code", "--root", str(tmp_path)]
    done = subprocess.run(
        [*init, "--command", f"{venv_program} hook claude-code"],
        capture_output=True,
        text=True,
        env={**os.environ, "DONEGATE_STATE_DIR": str(tmp_path.parent / "state")},
        check=True,
    )
    assert f"WARNING: donegate: {WARNING}" in done.stderr
    assert f"its hook command ({venv_program})" in done.stderr


def test_doctor_names_an_installed_command_that_could_run_the_agents_code(tmp_path: Path) -> None:
    from donegate.hooks import install as installer

    python = sys.executable
    risky = {
        "donegate hook claude-code": "looked up on PATH",
        f"{python} -m donegate hook claude-code": "without -E -P",
        f"{python} -P -m donegate hook claude-code": "without -E -P",
        f"{tmp_path}/.venv/bin/donegate hook claude-code": "inside the repository",
    }
    for command, risk in risky.items():
        assert any(risk in found for found in reach.command_risks(command, tmp_path)), command
        installer.install(tmp_path, "claude-code", command)
        finding = Doctor(tmp_path, tmp_path.parent / "state", run_checks=False).command(
            "claude-code"
        )
        assert not finding.ok
        assert risk in finding.what
        assert finding.fix == "donegate init claude-code"
    installer.install(tmp_path, "claude-code")  # what init writes now
    assert reach.command_risks(installer.hook_command("claude-code"), tmp_path) == []
    assert Doctor(tmp_path, tmp_path.parent / "state", run_checks=False).command("claude-code").ok
    for runner in ("uvx --from donegate==0.1.0 donegate hook codex", "/opt/d/bin/donegate hook x"):
        assert reach.command_risks(runner, tmp_path) == []
