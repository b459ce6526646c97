"""Codex CLI itself, run headless (``codex exec --json``) against a scripted model on loopback,
gated by donegate as ``donegate init codex`` installs it: the conformance of the real program,
not of payloads shaped from its documentation.

The program comes from the npm registry at a pinned version (``make hosts``). Each session has
its own ``CODEX_HOME`` whose ``config.toml`` names the loopback server as the model provider.
Codex runs a project's hooks only in a trusted project and only hooks a person trusted; the
sessions here trust the project with ``--trust`` (as a person's first run does) and stand in for
the person's ``/hooks`` review with ``--dangerously-bypass-hook-trust``; the test of ``doctor``
runs without either. What Codex sent each hook is kept too: a hooks file in ``CODEX_HOME`` (a
layer of its own, beside the project's) copies every payload to a folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from donegate.demo import project
from donegate.ledger import Ledger
from tests.hosts.responses_model import Answer, Model, Script, serving

VERSION = "0.171.0"
BINARY = (
    Path(__file__).parents[2]
    / ".hosts/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
)
MODEL = "gpt-5.5"  # in Codex's own catalogue: its apply_patch is the freeform tool
# Not in the catalogue: Codex falls back to defaults that offer spawn_agent directly.
SPAWNING_MODEL = "gpt-5-codex"
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStop")
BLOCKED = "<hook_prompt"  # how Codex hands a blocked stop's reason to the model

pytestmark = pytest.mark.skipif(
    not BINARY.exists(), reason=f"Codex CLI {VERSION} is not installed: make hosts"
)


def repo_gated(tmp_path: Path) -> tuple[Path, Path]:
    """The demo project with donegate installed as a person would: init, then commit."""
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    env = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
    init = [sys.executable, "-m", "donegate", "init", "codex"]
    subprocess.run(init, cwd=repo, env=env, check=True, capture_output=True)
    project.git(repo, "add", "-A")
    project.git(repo, "commit", "-qm", "gate")
    return repo, state


def codex_home(repo: Path, url: str, model: str) -> Path:
    """A ``CODEX_HOME`` whose model provider is the loopback server, and whose own hooks copy
    every payload Codex sends into ``payloads/``."""
    home = repo.parent / "codex-home"
    (home / "payloads").mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'model = "{model}"\nmodel_provider = "loopback"\n\n'
        "[model_providers.loopback]\n"
        f'name = "loopback"\nbase_url = "{url}"\nwire_api = "responses"\n'
        "request_max_retries = 0\nstream_max_retries = 0\n"
    )
    copy = f"cat > {home / 'payloads'}/$(date +%s%N)-$$.json"
    handler = {"hooks": [{"type": "command", "command": copy, "timeout": 10}]}
    (home / "hooks.json").write_text(json.dumps({"hooks": {e: [handler] for e in EVENTS}}))
    return home


def codex(
    repo: Path,
    state: Path,
    url: str,
    prompt: str,
    *,
    model: str = MODEL,
    trusted: bool = True,
) -> list[dict[str, Any]]:
    """One headless session of the real program; the events it printed."""
    home = codex_home(repo, url, model)
    tmpdir = repo.parent / "tmp"
    tmpdir.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "CODEX_HOME": str(home),
        "HOME": str(repo.parent),
        # Codex puts its sandbox's helper on PATH from CODEX_HOME, never under the temporary
        # directory: the session's own one keeps pytest's /tmp out of that rule.
        "TMPDIR": str(tmpdir),
        "DONEGATE_STATE_DIR": str(state),
    }
    argv = [str(BINARY), "exec", "--json", "--skip-git-repo-check"]
    if trusted:
        argv += ["--trust", "--dangerously-bypass-hook-trust"]
    done = subprocess.run(
        [*argv, prompt],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def payloads(repo: Path) -> list[dict[str, Any]]:
    """What Codex sent its hooks, in the order it sent them."""
    folder = repo.parent / "codex-home" / "payloads"
    found = sorted(folder.glob("*.json"), key=lambda p: int(p.name.split("-")[0]))
    return [json.loads(p.read_text()) for p in found]


def patch(path: str, old: str, new: str) -> Answer:
    """An ``apply_patch`` call replacing the line ``old`` of ``path`` with ``new``."""
    text = f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"
    return ("custom", "apply_patch", text)


def shell(command: str) -> Answer:
    return ("function", "exec_command", {"cmd": command, "yield_time_ms": 10000})


def blocks(items: list[dict[str, Any]]) -> int:
    """Where the last blocked stop's reason sits in the conversation (-1: none yet)."""
    found = [i for i, item in enumerate(items) if BLOCKED in json.dumps(item)]
    return found[-1] if found else -1


def agent(first: list[Answer], then: list[Answer] | None = None) -> Script:
    """A model that makes the calls ``first``, says it is done, and, once a stop hook sent it
    back, makes the calls ``then`` (if any) and says it is done again."""

    def script(items: list[dict[str, Any]]) -> Answer:
        back = blocks(items)
        todo = first if back == -1 else (then or [])
        made = [i for i in items[back + 1 :] if i.get("type") in CALLS]
        if len(made) < len(todo):
            return todo[len(made)]
        return ("text", "Done: normalize handles ZIP+4 codes now.")

    return script


CALLS = ("function_call", "custom_tool_call")
BUGGY_LINE = "    return zip_code.strip()"
WRONG_LINE = '    return zip_code.split("-")[0]'  # keeps the space: test_update still fails
FIXED_LINE = '    return zip_code.strip().split("-")[0]'
# A weakened test that the wrong fix passes.
TEST_LINE = '    assert normalize(" 94107-1234 ") == "94107"'
WEAK_LINE = '    assert "94107" in normalize(" 94107-1234 ")'


def receipts(state: Path) -> list[Any]:
    with Ledger(state) as ledger:
        return list(reversed(ledger.recent(50)))


def reasons(model: Model) -> list[str]:
    """The blocked stops' reasons as they reached the model, in order, without repeats."""
    found: list[str] = []
    for request in model.requests:
        for item in request.get("input", []):
            text = json.dumps(item)
            if BLOCKED in text and text not in found:
                found.append(text)
    return found


def test_a_wrong_fix_is_sent_back_and_the_right_one_verifies(tmp_path: Path) -> None:
    repo, state = repo_gated(tmp_path)
    script = agent(
        [patch("zipcode.py", BUGGY_LINE, WRONG_LINE)], [patch("zipcode.py", WRONG_LINE, FIXED_LINE)]
    )
    with serving(script) as (model, url):
        codex(repo, state, url, "Make normalize drop the +4 of a ZIP+4 code.")
    sent_back = reasons(model)
    assert len(sent_back) == 1, sent_back
    assert "tests/test_zip.py::test_update failed after your last edit" in sent_back[0]
    assert [r.verdict for r in receipts(state)] == ["refuted", "verified"]
    assert (repo / "zipcode.py").read_text() == project.FIXED
