"""Each host end to end: its payloads through the real ``donegate hook HOST`` process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from donegate.demo import project
from donegate.hooks import copilot
from donegate.hooks.install import HOSTS, install, installed, uninstall
from donegate.ledger import Ledger
from donegate.session.event import HookAnswer

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def hook(
    host: str, data: dict[str, Any], state: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "DONEGATE_STATE_DIR": str(state), **env}
    return subprocess.run(
        [sys.executable, "-m", "donegate", "hook", host],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        env=full,
        check=False,
    )


def last_receipt(state: Path) -> Any:
    with Ledger(state) as ledger:
        return ledger.recent(1)[0]


def test_copilot_payloads_parse_in_both_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(copilot.EVENT_VARIABLE, "postToolUse")
    edit = copilot.parse(fixture("copilot/postToolUse-edit.json"))
    assert edit.tool_use is not None
    assert edit.tool_use.paths == ("/home/dev/repo/zipcode.py",)
    bash = copilot.parse(fixture("copilot/postToolUse-bash.json"))
    assert bash.tool_use is not None
    assert bash.tool_use.command == "donegate accept --yes tests/test_zip.py"
    monkeypatch.setenv(copilot.EVENT_VARIABLE, "agentStop")
    stop = copilot.parse(fixture("copilot/agentStop.json"))
    assert (stop.kind, stop.session_id) == ("stop", "5b62f925-8851-4f9c-a0c0-9e3195d5e237")
    out = copilot.render(HookAnswer.block("the tests fail"), stop)
    assert json.loads(out.stdout) == {"decision": "block", "reason": "the tests fail"}
    monkeypatch.delenv(copilot.EVENT_VARIABLE)
    compatible = copilot.parse({"hook_event_name": "Stop", "session_id": "s", "cwd": "/r"})
    assert compatible.kind == "stop"


def test_copilot_installer_entries_name_their_event_and_time_limit(tmp_path: Path) -> None:
    install(tmp_path, "copilot", "donegate hook copilot")
    install(tmp_path, "copilot", "donegate hook copilot")
    data = json.loads((tmp_path / ".github/hooks/donegate.json").read_text())
    assert data["version"] == 1
    [stop] = data["hooks"]["agentStop"]
    assert stop == {
        "type": "command",
        "bash": "donegate hook copilot",
        "timeoutSec": 1800,
        "env": {"DONEGATE_HOOK_EVENT": "agentStop"},
    }
    assert installed(tmp_path, "copilot") == list(HOSTS["copilot"].events)
    uninstall(tmp_path, "copilot")
    assert installed(tmp_path, "copilot") == []


@pytest.mark.parametrize("host", ["copilot", "vscode"])
def test_a_red_stop_is_sent_back_in_the_hosts_own_terms(tmp_path: Path, host: str) -> None:
    repo = project.create(tmp_path / "repo")
    state = tmp_path / "state"
    if host == "copilot":
        start = {"sessionId": "c1", "cwd": str(repo), "timestamp": 1, "source": "new"}
        assert hook("copilot", start, state, DONEGATE_HOOK_EVENT="sessionStart").returncode == 0
        (repo / "zipcode.py").write_text("def normalize(z):\n    return None\n")
        stop = {"sessionId": "c1", "cwd": str(repo), "timestamp": 2, "stopReason": "end_turn"}
        done = hook("copilot", stop, state, DONEGATE_HOOK_EVENT="agentStop")
        assert json.loads(done.stdout)["decision"] == "block"
    else:
        base = {"timestamp": "2026-11-30T10:00:00Z", "session_id": "v1", "cwd": str(repo)}
        started = {**base, "hook_event_name": "SessionStart", "source": "new"}
        assert hook("claude-code", started, state).returncode == 0
        (repo / "zipcode.py").write_text("def normalize(z):\n    return None\n")
        stop = {**base, "hook_event_name": "Stop", "stop_hook_active": False}
        done = hook("claude-code", stop, state)
        answer = json.loads(done.stdout)
        assert answer["hookSpecificOutput"]["decision"] == "block"  # what VS Code honours
        assert "decision" not in answer
    receipt = last_receipt(state)
    assert (receipt.host, receipt.decision) == (host, "veto")
