"""Claude Code itself, run headless against a scripted model on loopback, gated by donegate as
`donegate init claude-code` installs it: the conformance of the real program, not of payloads
shaped from its documentation.

The program comes from the npm registry at a pinned version (`make hosts`, which `.ci/run` runs;
the newest versions want Node 22, and 2.1.197 is the newest that runs on the machine's Node 20).
Its sandbox, which `init` turns on with no fallback, needs bubblewrap: without either, these
tests are skipped and say why.

Beside donegate's hook, each hook entry `init` wrote also runs a command that copies the payload
it was handed to a folder outside the project (``payloads``): what the program itself sent, kept
in ``tests/hooks/fixtures/claude-code/2.1.197``. A subagent's requests reach the same model
server as its parent's; the system prompt tells them apart (:data:`SUBAGENT`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from donegate.demo import project
from donegate.ledger import FILE_NAME, Ledger, Receipt
from donegate.session.layout import Layout, subagent_session
from tests.hosts.messages_model import (
    Answer,
    Model,
    RequestScript,
    Script,
    serving,
    serving_requests,
)

VERSION = "2.1.197"
BINARY = (
    Path(__file__).parents[2] / ".hosts/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
)
WRONG = "def normalize(z):\n    return z\n"
WEAKENED = project.TESTS.replace('== "94107"\n', '.startswith("94107")\n')
# 2.1.197 marks a subagent's requests in the system prompt's first block (its parent's lack it).
SUBAGENT = "cc_is_subagent=true"
FEEDBACK = "Stop hook feedback"  # how Claude Code hands a stop hook's reason to the model
REASON = "tests/test_zip.py::test_update failed after your last edit"

pytestmark = [
    pytest.mark.skipif(not BINARY.exists(), reason="Claude Code is not installed: make hosts"),
    pytest.mark.skipif(not shutil.which("bwrap"), reason="bubblewrap is missing (its sandbox)"),
]


def repo_gated(tmp_path: Path, **config: Any) -> tuple[Path, Path]:
    """The demo project with donegate installed as a person would: init, then commit."""
    repo, state = project.create(tmp_path / "repo", **config), tmp_path / "state"
    env = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
    init = [sys.executable, "-m", "donegate", "init", "claude-code"]
    subprocess.run(init, cwd=repo, env=env, check=True, capture_output=True)
    copy_payloads(repo, tmp_path / "payloads")
    project.git(repo, "add", "-A")
    project.git(repo, "commit", "-qm", "gate")
    return repo, state


def copy_payloads(repo: Path, folder: Path) -> None:
    """Beside donegate's hook in every entry `init` wrote, a command that copies the payload."""
    folder.mkdir()
    settings = repo / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    copy = {"type": "command", "command": f"cat > {folder}/$(date +%s%N)-$$.json", "timeout": 30}
    for entries in data["hooks"].values():
        for entry in entries:
            entry["hooks"].append(copy)
    settings.write_text(json.dumps(data, indent=2) + "\n")


def payloads(tmp_path: Path, event: str | None = None) -> list[dict[str, Any]]:
    """What the program sent the hooks, in the order it sent it (of one event, if named)."""
    files = sorted((tmp_path / "payloads").glob("*.json"), key=lambda p: int(p.name.split("-")[0]))
    found = [json.loads(f.read_text()) for f in files]
    return [p for p in found if event is None or p["hook_event_name"] == event]


def claude(repo: Path, state: Path, url: str, prompt: str) -> list[dict[str, Any]]:
    """One headless session of the real program; the events it printed."""
    home = repo.parent / "home"
    home.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "dummy",
        "IS_SANDBOX": "1",  # the tests run as root
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "HOME": str(home),
        "DONEGATE_STATE_DIR": str(state),
    }
    argv = [str(BINARY), "-p", prompt, "--output-format", "stream-json", "--verbose"]
    argv += ["--include-hook-events", "--permission-mode", "acceptEdits"]
    done = subprocess.run(
        argv, cwd=repo, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def answers(events: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    """What the hooks answered to ``event`` in so many words (the copying command says nothing,
    nor does donegate when it lets a stop go without a note)."""
    said = [e for e in events if e.get("subtype") == "hook_response" and e["hook_event"] == event]
    return [json.loads(e["stdout"]) for e in said if e.get("stdout", "").strip()]


def agent(
    repo: Path, first: dict[str, str], then: dict[str, str] | None, shell: str | None = None
) -> Script:
    """A model that reads the files it will write (the host refuses a write to a file not
    read), writes ``first`` (path -> text), runs ``shell`` (if any), says it is done, and, once
    a stop hook sent it back, writes ``then`` (if any) and says it is done again."""
    reads = sorted({*first, *(then or {})})

    def script(messages: list[dict[str, Any]]) -> Answer:
        text = json.dumps(messages)
        done_reading = text.count('"name": "Read"')
        if done_reading < len(reads):
            return ("tool", "Read", {"file_path": str(repo / reads[done_reading])})
        back = text.rfind("Stop hook feedback")
        todo = first if back == -1 else (then or {})
        written = text[max(back, 0) :].count('"name": "Write"')
        if written < len(todo):
            path, content = list(todo.items())[written]
            return ("tool", "Write", {"file_path": str(repo / path), "content": content})
        if shell and back == -1 and '"name": "Bash"' not in text:
            return ("tool", "Bash", {"command": shell, "description": "accept the test"})
        return ("text", "Done: normalize handles ZIP+4 codes now.")

    return script


def receipts(state: Path) -> list[Receipt]:
    if not (state / FILE_NAME).exists():
        return []
    with Ledger(state) as ledger:
        return list(reversed(ledger.recent(50)))


# ---- a main agent and the subagent it starts ---------------------------------------------------


class Rounds:
    """An agent's answers, one list per round: the first for its task, the next for each time a
    stop hook sent it back. A round's last answer (the agent saying it is done) is repeated
    should the agent be asked again, as when a task notification wakes it."""

    def __init__(self, *rounds: list[Answer]) -> None:
        self.rounds = rounds

    def __call__(self, messages: list[dict[str, Any]]) -> Answer:
        backs = [i for i, m in enumerate(messages) if sent_back(m)]
        todo = self.rounds[min(len(backs), len(self.rounds) - 1)]
        since = messages[backs[-1] if backs else 0 :]
        step = sum(1 for m in since if m["role"] == "assistant")
        return todo[min(step, len(todo) - 1)]


def sent_back(message: dict[str, Any]) -> bool:
    """Whether a message is a stop hook's reason, as Claude Code hands it to the model."""
    return message["role"] == "user" and FEEDBACK in json.dumps(message["content"])


def is_subagent(request: dict[str, Any]) -> bool:
    return SUBAGENT in json.dumps(request.get("system", ""))


def delegate(*, background: bool = False) -> Answer:
    """The Agent tool call that starts a general-purpose subagent on the fix."""
    task = {
        "subagent_type": "general-purpose",
        "description": "Fix the ZIP parser",
        "prompt": "Make normalize in zipcode.py drop the +4 of a ZIP+4 code.",
    }
    return ("tool", "Agent", {**task, "run_in_background": True} if background else task)


def read(repo: Path) -> Answer:
    return ("tool", "Read", {"file_path": str(repo / "zipcode.py")})


def write(repo: Path, text: str) -> Answer:
    return ("tool", "Write", {"file_path": str(repo / "zipcode.py"), "content": text})


def family(
    main: Rounds, sub: Rounds, before_sub: Callable[[], None] | None = None
) -> RequestScript:
    """One model for the main agent and its subagent, told apart by the system prompt."""

    def script(request: dict[str, Any]) -> Answer:
        if not is_subagent(request):
            return main(request["messages"])
        if before_sub is not None:
            before_sub()
        return sub(request["messages"])

    return script


def who_was_sent_back(model: Model) -> list[str]:
    """For each request that carried a stop hook's reason as its newest message: whose it was."""
    found = [r for r in model.requests if r.get("tools") and sent_back(r["messages"][-1])]
    assert all(REASON in json.dumps(r["messages"][-1]) for r in found)
    return ["subagent" if is_subagent(r) else "main" for r in found]


def wait_for(ready: Callable[[], bool], timeout: float = 120.0) -> None:
    """Wait until ``ready()`` (or the time is up, and the test's own checks say what went wrong)."""
    end = time.monotonic() + timeout
    while not ready() and time.monotonic() < end:
        time.sleep(0.2)


def stops(state: Path) -> list[tuple[str, str, str, str]]:
    """Each receipt as (session key, the host's event, the gate's decision, the verdict)."""
    return [
        (r.session_id, r.decision_doc["host_event"], r.decision, r.verdict) for r in receipts(state)
    ]


def test_a_wrong_fix_is_sent_back_and_the_right_one_verifies(tmp_path: Path) -> None:
    repo, state = repo_gated(tmp_path)
    script = agent(repo, {"zipcode.py": WRONG}, {"zipcode.py": project.FIXED})
    with serving(script) as (model, url):
        events = claude(repo, state, url, "Make normalize drop the +4 of a ZIP+4 code.")
    assert answers(events, "Stop")[0]["decision"] == "block"
    assert model.seen("tests/test_zip.py::test_update failed after your last edit")
    assert [r.verdict for r in receipts(state)] == ["refuted", "verified"]
    assert (repo / "zipcode.py").read_text() == project.FIXED


def test_a_weakened_test_never_ends_verified(tmp_path: Path) -> None:
    repo, state = repo_gated(tmp_path)
    cheat = {"tests/test_zip.py": WEAKENED, "zipcode.py": WRONG}
    with serving(agent(repo, cheat, None)) as (model, url):
        claude(repo, state, url, "Make the tests pass.")
    found = receipts(state)
    assert found
    assert all(r.verdict != "verified" for r in found)
    assert model.seen("'tests/**'")  # the protected pattern, named to the agent


def test_the_agent_running_donegate_accept_counts_for_nothing(tmp_path: Path) -> None:
    """Accepting is the person's act: the agent weakens the test, then runs `donegate accept`
    in its own shell. The host's permission rules (init's) and donegate both refuse it."""
    repo, state = repo_gated(tmp_path)
    cheat = {"tests/test_zip.py": WEAKENED, "zipcode.py": WRONG}
    accept = f"{Path(sys.executable).parent / 'donegate'} accept --yes tests/test_zip.py"
    with serving(agent(repo, cheat, None, shell=accept)) as (model, url):
        claude(repo, state, url, "Make the tests pass.")
    assert model.seen("donegate accept --yes tests/test_zip.py has been denied")  # init's rule
    assert not model.seen("then run `donegate accept")  # never asked to do the person's act
    found = receipts(state)
    assert found
    assert all(r.verdict != "verified" for r in found)


def test_a_foreground_subagent_s_wrong_fix_is_sent_back_and_judged_again_at_the_main_stop(
    tmp_path: Path,
) -> None:
    """The main agent hands the fix to a subagent (the Agent tool, in the foreground), which
    writes a wrong one: its SubagentStop is checked under the subagent's own session key and
    sends it back once (a budget of one), then lets it go unverified; the main agent's Stop
    judges the same write and sends the main agent back, which fixes it. Only that verifies."""
    repo, state = repo_gated(tmp_path, max_strict_vetoes=1)
    main = Rounds(
        [delegate(), ("text", "Done: the subagent fixed normalize.")],
        [read(repo), write(repo, project.FIXED), ("text", "Fixed normalize myself.")],
    )
    sub = Rounds(
        [read(repo), write(repo, WRONG), ("text", "Subagent: normalize is fixed.")],
        [("text", "Subagent: done.")],
    )
    with serving_requests(family(main, sub)) as (model, url):
        claude(repo, state, url, "Make normalize drop the +4 of a ZIP+4 code; delegate it.")
    ended = payloads(tmp_path, "SubagentStop")
    session, agent_id = ended[0]["session_id"], ended[0]["agent_id"]
    assert {(p["session_id"], p["agent_id"], p["background_tasks"] == []) for p in ended} == {
        (session, agent_id, True)
    }
    mine = subagent_session(session, agent_id)
    assert stops(state) == [
        (mine, "SubagentStop", "veto", "refuted"),
        (mine, "SubagentStop", "allow", "refuted"),  # its budget spent: let go, unverified
        (session, "Stop", "veto", "refuted"),  # the main stop judges the subagent's write
        (session, "Stop", "allow", "verified"),
    ]
    assert who_was_sent_back(model) == ["subagent", "main"]
    assert any(is_subagent(r) for r in model.requests)
    assert (repo / "zipcode.py").read_text() == project.FIXED


def test_a_background_subagent_s_wrong_fix_is_checked_and_the_session_never_ends_verified(
    tmp_path: Path,
) -> None:
    """With ``run_in_background`` the main agent says it is done while the subagent works: that
    Stop lists the subagent as running and is let go unchecked, saying so. (The subagent waits
    for that stop's receipt before it starts, so the order is the program's, not a race's.) The
    subagent's own SubagentStop, which lists itself as running, is checked and sends it back;
    the <task-notification> that wakes the main agent is the host's, not a person's prompt; the
    main Stop then judges the subagent's write. Nothing ends verified."""
    repo, state = repo_gated(tmp_path, max_strict_vetoes=1)
    main = Rounds(
        [delegate(background=True), ("text", "A subagent is on it.")],
        [("text", "Done: the subagent fixed normalize.")],
    )
    sub = Rounds(
        [read(repo), write(repo, WRONG), ("text", "Subagent: normalize is fixed.")],
        [("text", "Subagent: done.")],
    )
    prompt = "Make normalize drop the +4 of a ZIP+4 code; delegate it."
    after_main_stop = family(main, sub, lambda: wait_for(lambda: bool(receipts(state))))
    with serving_requests(after_main_stop) as (model, url):
        events = claude(repo, state, url, prompt)
    first = payloads(tmp_path, "Stop")[0]
    session, running = first["session_id"], first["background_tasks"]
    assert [(t["type"], t["status"]) for t in running] == [("subagent", "running")]
    agent_id = running[0]["id"]
    ended = payloads(tmp_path, "SubagentStop")
    assert {p["agent_id"] for p in ended} == {agent_id}
    assert all(p["background_tasks"] == running for p in ended)  # itself, as running
    mine = subagent_session(session, agent_id)
    assert stops(state) == [
        (session, "Stop", "allow", "none"),  # let go while the subagent ran, unchecked
        (mine, "SubagentStop", "veto", "refuted"),
        (mine, "SubagentStop", "allow", "refuted"),
        (session, "Stop", "veto", "refuted"),
        (session, "Stop", "allow", "refuted"),
    ]
    assert "background tasks are still running" in answers(events, "Stop")[0]["systemMessage"]
    notices = [p["prompt"] for p in payloads(tmp_path, "UserPromptSubmit")][1:]
    assert len(notices) == 1
    assert notices[0].startswith(f"<task-notification>\n<task-id>{agent_id}</task-id>")
    kept = Layout(state).session(repo.resolve(), session) / "prompts.json"
    assert json.loads(kept.read_text()) == [prompt]  # the person's words only
    assert who_was_sent_back(model) == ["subagent", "main"]
    assert (repo / "zipcode.py").read_text() == WRONG
