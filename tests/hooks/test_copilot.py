"""Copilot CLI's adapter against the payloads Copilot CLI 1.0.102 itself sent to its hooks
(``fixtures/copilot``, captured from the real program run headless against a scripted model; see
``tests/hosts/test_copilot.py``), and what that program was seen to do around them: the variables
of its agent's shell, and the ``config.json`` it rewrites.
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
from donegate.hooks import claude_code, copilot
from donegate.ledger import FILE_NAME, Ledger
from tests.hooks.test_hosts import FIXTURES, fixture, hook

REASON_TEXT = "tests/test_zip.py::test_update failed after your last edit"
WEAKENED = project.TESTS.replace(' 94107-1234 ") == "94107"', ' 94107-1234 ").startswith("94107")')
EVENTS = {
    "sessionStart": "baseline",
    "userPromptSubmitted": "baseline",
    "preToolUse": "ignored",
    "postToolUse": "tool_use",
    "agentStop": "stop",
    "subagentStart": "ignored",
    "subagentStop": "stop",
    "sessionEnd": "ignored",
}


def copilot_fixtures() -> list[str]:
    return sorted(p.name for p in (FIXTURES / "copilot").glob("*.json"))


def event_of(name: str) -> str:
    return name.removesuffix(".json").partition("-")[0]


@pytest.mark.parametrize(
    "name", [n for n in copilot_fixtures() if event_of(n) in EVENTS], ids=lambda n: n
)
def test_each_real_payload_reads_as_its_event(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The payloads name no event: the entry's DONEGATE_HOOK_EVENT does. A subagent's own
    agentStop and its prompt (the parent's words, or donegate's reason) gate nothing."""
    event = event_of(name)
    monkeypatch.setenv(copilot.EVENT_VARIABLE, event)
    payload = fixture(f"copilot/{name}")
    assert "hookEventName" not in payload
    assert "hook_event_name" not in payload
    parsed = copilot.parse(payload)
    expected = EVENTS[event]
    if "parentAgentId" in payload and event in ("agentStop", "userPromptSubmitted"):
        expected = "ignored"
    if str(payload.get("prompt", "")).startswith("<system_notification>"):
        expected = "ignored"  # the host's words
    assert (parsed.host_event, parsed.kind) == (event, expected)
    assert parsed.cwd == Path("/home/dev/repo")


def test_a_continued_stop_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(copilot.EVENT_VARIABLE, "agentStop")
    assert not copilot.parse(fixture("copilot/agentStop.json")).continuing
    assert copilot.parse(fixture("copilot/agentStop-continuing.json")).continuing
    monkeypatch.setenv(copilot.EVENT_VARIABLE, "subagentStop")
    sub = copilot.parse(fixture("copilot/subagentStop-continuing.json"))
    assert (sub.continuing, sub.subagent) == (True, "b3617010-fa10-47d1-b8f7-667ecddd9816")


def test_a_subagent_s_tool_calls_are_its_parent_session_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """Copilot CLI names a subagent's tool calls with the subagent's own sessionId: filed there,
    no stop ever read them, and a `donegate accept` it ran was seen by none."""
    monkeypatch.setenv(copilot.EVENT_VARIABLE, "postToolUse")
    payload = fixture("copilot/postToolUse-subagent-edit.json")
    assert payload["sessionId"] != payload["parentAgentId"]
    edit = copilot.parse(payload)
    assert edit.session_id == payload["parentAgentId"]
    assert edit.tool_use is not None
    assert edit.tool_use.paths == ("/home/dev/repo/zipcode.py",)


def receipts(state: Path) -> list[Any]:
    if not (state / FILE_NAME).exists():
        return []
    with Ledger(state) as ledger:
        return list(reversed(ledger.recent(50)))


def as_sent(name: str, repo: Path, **ids: str) -> dict[str, Any]:
    """A real payload, in the test's repository, with the test's session ids."""
    data: dict[str, Any] = {**fixture(f"copilot/{name}"), **ids, "cwd": str(repo)}
    return data


def agent_env() -> dict[str, str]:
    """The environment of a shell Copilot's agent starts, less the variable donegate reads, as
    an agent that unsets it (or a host that renames it) would leave it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COPILOT_")}
    return {**env, "COPILOT_CLI": "1"}


def test_a_subagent_s_own_donegate_accept_counts_for_nothing(tmp_path: Path) -> None:
    """Seen with Copilot CLI 1.0.102: a subagent weakened the test and accepted it in its shell;
    the subagent's stop and then the session's were let go with nothing to check."""
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    parent, agent = "p-5b62f925", "a-b3617010"
    sub = {"sessionId": agent, "agentId": agent, "parentAgentId": parent}

    def send(event: str, name: str, **ids: str) -> dict[str, Any]:
        done = hook("copilot", as_sent(name, repo, **ids), state, DONEGATE_HOOK_EVENT=event)
        assert done.returncode == 0, done.stderr
        out: dict[str, Any] = json.loads(done.stdout) if done.stdout.strip() else {}
        return out

    send("sessionStart", "sessionStart.json", sessionId=parent)
    send("userPromptSubmitted", "userPromptSubmitted.json", sessionId=parent)
    send("userPromptSubmitted", "userPromptSubmitted-subagent.json", **sub)
    (repo / "tests" / "test_zip.py").write_text(WEAKENED)
    edit = as_sent("postToolUse-subagent-edit.json", repo, **sub)
    edit["toolArgs"]["path"] = str(repo / "tests" / "test_zip.py")
    hook("copilot", edit, state, DONEGATE_HOOK_EVENT="postToolUse")
    accept = [sys.executable, "-m", "donegate", "accept", "--yes", "tests/test_zip.py"]
    accepted = subprocess.run(
        accept,
        cwd=repo,
        env={**agent_env(), "DONEGATE_STATE_DIR": str(state)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert accepted.returncode == 0, accepted.stderr  # the shell let it through
    send("postToolUse", "postToolUse-subagent-bash.json", **sub)
    assert send("agentStop", "agentStop-subagent.json", **sub) == {}
    send("subagentStop", "subagentStop.json", sessionId=parent, agentId=agent)
    final = send("agentStop", "agentStop.json", sessionId=parent)
    assert final.get("decision") == "block"
    assert "'tests/test_zip.py'" in final["reason"]
    assert receipts(state)[-1].verdict != "verified"


def test_copilot_s_agent_shell_cannot_accept(tmp_path: Path) -> None:
    """Copilot CLI 1.0.102 marks its agent's shell with COPILOT_AGENT_SESSION_ID (and
    COPILOT_CLI); `donegate accept` run there refuses and accepts nothing."""
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    (repo / "tests" / "test_zip.py").write_text(WEAKENED)
    env = {**agent_env(), "COPILOT_AGENT_SESSION_ID": "8639d460", "DONEGATE_STATE_DIR": str(state)}
    done = subprocess.run(
        [sys.executable, "-m", "donegate", "accept", "--yes", "tests/test_zip.py"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "COPILOT_AGENT_SESSION_ID" in done.stderr


def doctor_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COPILOT_", "GEMINI_"))}
    for name in ("home", "copilot-home"):
        (tmp_path / name).mkdir()
    return {
        **env,
        "HOME": str(tmp_path / "home"),
        "COPILOT_HOME": str(tmp_path / "copilot-home"),
        "DONEGATE_STATE_DIR": str(tmp_path / "state"),
    }


def doctor_says(repo: Path, env: dict[str, str]) -> str:
    argv = [sys.executable, "-m", "donegate", "doctor", "--no-run", "--root", str(repo)]
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False).stderr


@pytest.mark.parametrize("trusted", ["repo", "parent"])
def test_doctor_reads_the_config_json_copilot_writes(tmp_path: Path, trusted: str) -> None:
    """Copilot CLI 1.0.102 rewrites $COPILOT_HOME/config.json with two comment lines on top and
    the list under trustedFolders (trusted_folders, which it still reads, is moved there): the
    doctor took a trusted folder for an unreadable file."""
    env = doctor_env(tmp_path)
    repo = project.create(tmp_path / "repo")
    init = [sys.executable, "-m", "donegate", "init", "copilot", "--root", str(repo)]
    subprocess.run(init, env=env, check=True, capture_output=True)
    folder = repo if trusted == "repo" else repo.parent
    written = (FIXTURES / "copilot" / "config.json").read_text()
    config = Path(env["COPILOT_HOME"]) / "config.json"
    config.write_text(written.replace('"/home/dev/repo"', json.dumps(str(folder))))
    out = doctor_says(repo, env)
    assert f"ok  copilot: {folder} is a trusted folder in {config}" in out, out
    config.write_text(written)  # another folder trusted, not this one
    out = doctor_says(repo, env)
    assert f"NO  copilot: {repo} is not a trusted folder in {config}" in out, out
    assert "copilot: its hooks cannot fire here" in out
    assert "add it to trustedFolders" in out


def test_an_interrupted_turn_s_writes_stay_the_agent_s(tmp_path: Path) -> None:
    """A person's prompt opens the agent's turn: what changes until a stop lets the agent go is
    the agent's. The prompts Copilot sent were not read, so the next prompt after a turn that
    ended without a stop (the person interrupted it) took the agent's wrong fix as the person's,
    and the next stop let it go with nothing to check."""
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    ids = {"sessionId": "s-5b62f925"}
    for event, name in (
        ("sessionStart", "sessionStart"),
        ("userPromptSubmitted", "userPromptSubmitted"),
    ):
        hook("copilot", as_sent(f"{name}.json", repo, **ids), state, DONEGATE_HOOK_EVENT=event)
    (repo / "zipcode.py").write_text("def normalize(z):\n    return z\n")
    hook(
        "copilot",
        as_sent("postToolUse-edit.json", repo, **ids),
        state,
        DONEGATE_HOOK_EVENT="postToolUse",
    )
    again = as_sent("userPromptSubmitted.json", repo, **ids, prompt="Go on.")
    hook("copilot", again, state, DONEGATE_HOOK_EVENT="userPromptSubmitted")
    done = hook(
        "copilot", as_sent("agentStop.json", repo, **ids), state, DONEGATE_HOOK_EVENT="agentStop"
    )
    assert json.loads(done.stdout or "{}").get("decision") == "block", done.stderr
    assert REASON_TEXT in json.loads(done.stdout)["reason"]


def test_copilot_s_notice_of_a_subagent_s_end_is_no_person_s_prompt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seen with 1.0.102: a background subagent's end reaches the parent as a
    userPromptSubmitted whose prompt is a <system_notification>, written by the host."""
    monkeypatch.setenv(copilot.EVENT_VARIABLE, "userPromptSubmitted")
    person = copilot.parse(fixture("copilot/userPromptSubmitted.json"))
    assert (person.kind, person.prompt) == ("baseline", "Make normalize drop the +4")
    told = copilot.parse(fixture("copilot/userPromptSubmitted-system-notification.json"))
    assert told.kind == "ignored"


def test_an_edit_run_through_claude_settings_names_its_file() -> None:
    """Copilot CLI running .claude/settings.json's hooks names an edit's file ``path``, where
    Claude Code says ``file_path``: the journal kept no path for it."""
    parsed = claude_code.parse(fixture("copilot/claude-settings-PostToolUse.json"))
    assert parsed.tool_use is not None
    assert parsed.tool_use.paths == ("/home/dev/repo/zipcode.py",)
