"""Copilot CLI itself, run headless against a scripted model on loopback, gated by donegate as
`donegate init copilot` installs it: the conformance of the real program, not of payloads shaped
from its documentation.

The program comes from the npm registry at a pinned version (`make hosts`); its platform binary
is run directly, bringing its own key: ``COPILOT_PROVIDER_TYPE=anthropic`` and
``COPILOT_PROVIDER_BASE_URL`` point it at :mod:`tests.hosts.messages_model`, and
``COPILOT_OFFLINE=true`` keeps it off the network. It loads a repository's hooks only in a folder
the person trusted, so each session's ``$HOME/.copilot/config.json`` trusts the repository, as a
person who chose "trust for future sessions" has it (but in the test of an untrusted folder).
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
from donegate.ledger import FILE_NAME, Ledger, Receipt
from tests.hosts.messages_model import Answer, Model, Script, serving

VERSION = "1.0.102"
BINARY = Path(__file__).parents[2] / ".hosts/node_modules/@github/copilot-linux-x64/copilot"
WEAKENED = project.TESTS.replace(' 94107-1234 ") == "94107"', ' 94107-1234 ").startswith("94107")')
SUBAGENT = "SUBAGENT-TASK"  # the words that tell the subagent's conversation from its parent's
REASON = "tests/test_zip.py::test_update failed after your last edit"
# The team's tests load none of the plugins installed beside donegate (8 s a run here, 0.6 s
# without): the same verdicts, sooner.
QUICK_CHECKS = 'env = { PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1" }\n'


def _runs() -> str | None:
    """Why the program cannot run here (None: it runs, at the pinned version)."""
    if not BINARY.exists():
        return f"Copilot CLI is not installed ({BINARY}): make hosts"
    try:
        done = subprocess.run(
            [str(BINARY), "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Copilot CLI does not run here: {exc}"
    if VERSION not in done.stdout:
        return f"Copilot CLI {VERSION} is pinned; {BINARY} says {done.stdout or done.stderr!r}"
    return None


CANNOT_RUN = _runs()
pytestmark = pytest.mark.skipif(CANNOT_RUN is not None, reason=CANNOT_RUN or "")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One XDG cache for the module: the binary unpacks its 235 MB package there at first run."""
    return tmp_path_factory.mktemp("copilot-cache")


# ---- the agent: a scripted model, one list of answers per round ---------------------------------


def edit(path: Path, old: str, new: str) -> Answer:
    return ("tool", "edit", {"path": str(path), "old_str": old, "new_str": new})


def wrong(repo: Path) -> Answer:
    return edit(repo / "zipcode.py", "return zip_code.strip()", "return zip_code")


def right(repo: Path) -> Answer:
    return edit(repo / "zipcode.py", "return zip_code\n", 'return zip_code.strip().split("-")[0]\n')


def weaken(repo: Path) -> Answer:
    test = repo / "tests" / "test_zip.py"
    return edit(test, ' 94107-1234 ") == "94107"', ' 94107-1234 ").startswith("94107")')


def said(message: dict[str, Any]) -> bool:
    """Whether a message is words sent to the agent (a prompt, or a stop hook's reason), not a
    tool's result."""
    if message.get("role") != "user":
        return False
    content = message["content"]
    return isinstance(content, str) or any(c.get("type") == "text" for c in content)


class Agent:
    """Rounds of answers: the first for the prompt, the next for each time a stop hook sent the
    agent back (Copilot CLI adds the reason as a user message). A round's last answer, text, is
    the agent saying it is done; it is repeated should the agent be sent back again."""

    def __init__(self, *rounds: list[Answer]) -> None:
        self.rounds = rounds
        self.stops = 0  # how many times this agent said it was done

    def __call__(self, messages: list[dict[str, Any]]) -> Answer:
        turns = [i for i, m in enumerate(messages) if said(m)]
        todo = self.rounds[min(len(turns) - 1, len(self.rounds) - 1)]
        step = sum(1 for m in messages[turns[-1] :] if m["role"] == "assistant")
        answer = todo[min(step, len(todo) - 1)]
        self.stops += answer[0] == "text"
        return answer


def with_subagent(main: Agent, sub: Agent) -> Script:
    """One model for a parent and the subagent it starts with the task tool."""

    def script(messages: list[dict[str, Any]]) -> Answer:
        return sub(messages) if SUBAGENT in json.dumps(messages[0]) else main(messages)

    return script


def start_subagent(mode: str = "sync") -> Answer:
    task = {
        "name": "fixer",
        "description": "Fix the ZIP parser",
        "agent_type": "general-purpose",
        "prompt": f"{SUBAGENT}: make normalize drop the +4 of a ZIP+4 code.",
        "mode": mode,
    }
    return ("tool", "task", task)


def reached_after_stop(model: Model, text: str) -> bool:
    """Whether ``text`` reached the model as words sent after the agent said it was done."""
    for request in model.requests:
        messages = request["messages"]
        last, before = messages[-1], messages[-2] if len(messages) > 1 else {}
        if said(last) and text in json.dumps(last) and before.get("role") == "assistant":
            return True
    return False


# ---- the project and the program ----------------------------------------------------------------


def repo_gated(tmp_path: Path, host: str = "copilot", **config: Any) -> tuple[Path, Path]:
    """The demo project with donegate installed as a person would: init, then commit."""
    repo, state = project.create(tmp_path / "repo", **config), tmp_path / "state"
    with (repo / "donegate.toml").open("a") as toml:  # the checks' table is the file's last
        toml.write(QUICK_CHECKS)
    env = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
    init = [sys.executable, "-m", "donegate", "init", host]
    subprocess.run(init, cwd=repo, env=env, check=True, capture_output=True)
    project.git(repo, "add", "-A")
    project.git(repo, "commit", "-qm", "gate")
    return repo, state


def environment(repo: Path, state: Path, cache: Path, url: str) -> dict[str, str]:
    """The program's environment: its own key to the loopback model, a home of its own, and
    none of the person's Copilot variables or GitHub tokens."""
    mine = ("COPILOT_", "GH_", "GITHUB_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(mine)}
    return {
        **env,
        "HOME": str(repo.parent / "home"),
        "XDG_CACHE_HOME": str(cache),
        "COPILOT_PROVIDER_BASE_URL": url,
        "COPILOT_PROVIDER_TYPE": "anthropic",
        "COPILOT_PROVIDER_API_KEY": "dummy",
        "COPILOT_MODEL": "claude-sonnet-4",
        "COPILOT_OFFLINE": "true",
        "DONEGATE_STATE_DIR": str(state),
    }


def trust(repo: Path) -> Path:
    """The repository trusted for future sessions, in the config.json Copilot CLI keeps."""
    config = repo.parent / "home" / ".copilot" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"trustedFolders": [str(repo)]}))
    return config


def copilot(repo: Path, state: Path, cache: Path, script: Script, prompt: str) -> Model:
    """One headless session of the real program; the model it talked to."""
    (repo.parent / "home").mkdir(exist_ok=True)
    argv = [str(BINARY), "-p", prompt, "--allow-all-tools", "--allow-all-paths"]
    argv += ["--no-auto-update", "--no-ask-user", "--output-format", "json"]
    with serving(script) as (model, url):
        done = subprocess.run(
            argv,
            cwd=repo,
            env=environment(repo, state, cache, url),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert done.returncode == 0, (done.stderr or done.stdout)[-2000:]
    return model


def receipts(state: Path) -> list[Receipt]:
    if not (state / FILE_NAME).exists():
        return []
    with Ledger(state) as ledger:
        return list(reversed(ledger.recent(50)))


def doctor(repo: Path, state: Path, cache: Path) -> str:
    env = environment(repo, state, cache, "http://127.0.0.1:9")
    argv = [sys.executable, "-m", "donegate", "doctor", "--no-run", "--root", str(repo)]
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=False).stderr


# ---- the scenarios ------------------------------------------------------------------------------


def test_a_wrong_fix_is_sent_back_and_the_right_one_verifies(tmp_path: Path, cache: Path) -> None:
    repo, state = repo_gated(tmp_path)
    config = trust(repo)
    agent = Agent([wrong(repo), ("text", "Done.")], [right(repo), ("text", "Fixed now.")])
    model = copilot(repo, state, cache, agent, "Make normalize drop the +4 of a ZIP+4 code.")
    assert reached_after_stop(model, REASON)  # the reason, as the model's next request
    found = receipts(state)
    assert [(r.host, r.decision_doc["host_event"], r.verdict) for r in found] == [
        ("copilot", "agentStop", "refuted"),
        ("copilot", "agentStop", "verified"),
    ]
    assert (repo / "zipcode.py").read_text() == project.FIXED
    # The doctor reads the config.json this session left, as Copilot CLI rewrote it.
    assert config.read_text().startswith("//")
    says = doctor(repo, state, cache)
    assert f"ok  copilot: {repo} is a trusted folder in {config}" in says, says
    assert "ok  copilot: last hook call agentStop at" in says


def test_a_weakened_test_never_ends_verified(tmp_path: Path, cache: Path) -> None:
    repo, state = repo_gated(tmp_path, max_strict_vetoes=1)
    trust(repo)
    agent = Agent([weaken(repo), wrong(repo), ("text", "Done.")], [("text", "Done.")])
    model = copilot(repo, state, cache, agent, "Make the tests pass.")
    found = receipts(state)
    assert found
    assert all(r.verdict != "verified" for r in found)
    assert found[0].decision == "veto"
    assert reached_after_stop(model, "'tests/test_zip.py' (protected by 'tests/**')")


def test_the_agent_running_donegate_accept_counts_for_nothing(tmp_path: Path, cache: Path) -> None:
    """Accepting is the person's act: the agent weakens the test, then runs `donegate accept` in
    Copilot's shell, which marks itself with COPILOT_AGENT_SESSION_ID."""
    repo, state = repo_gated(tmp_path, max_strict_vetoes=1)
    trust(repo)
    accept = f"{Path(sys.executable).parent / 'donegate'} accept --yes tests/test_zip.py"
    shell = ("tool", "bash", {"command": accept, "description": "accept the test"})
    agent = Agent([weaken(repo), wrong(repo), shell, ("text", "Done.")], [("text", "Done.")])
    model = copilot(repo, state, cache, agent, "Make the tests pass.")
    assert model.seen("donegate accept: refused: $COPILOT_AGENT_SESSION_ID")
    assert not model.seen("accepted tests/test_zip.py")
    found = receipts(state)
    assert found
    assert all(r.verdict != "verified" for r in found)
    assert reached_after_stop(model, "'tests/test_zip.py' (protected by 'tests/**')")


def test_a_subagent_s_wrong_fix_is_one_stop_and_never_ends_verified(
    tmp_path: Path, cache: Path
) -> None:
    """The task tool's subagent ends with agentStop (its own sessionId, naming parentAgentId)
    and subagentStop (the parent's sessionId): one stop, one run, one receipt, one budget."""
    repo, state = repo_gated(tmp_path, max_strict_vetoes=1)
    trust(repo)
    sub = Agent([wrong(repo), ("text", "Subagent: fixed.")], [("text", "Subagent: done.")])
    main = Agent([start_subagent(), ("text", "Done.")], [("text", "Done.")])
    model = copilot(repo, state, cache, with_subagent(main, sub), "Fix normalize; delegate it.")
    found = receipts(state)
    mine = [r for r in found if "#agent-" in r.session_id]
    parents = [r for r in found if "#agent-" not in r.session_id]
    assert [r.decision_doc["host_event"] for r in mine] == ["subagentStop"] * sub.stops
    assert sub.stops == 2  # sent back once, then let go: its budget of one strict veto
    assert [r.decision for r in mine] == ["veto", "allow"]
    assert len({r.session_id for r in mine}) == 1
    assert {r.session_id for r in parents} == {mine[0].session_id.partition("#agent-")[0]}
    assert parents[0].decision == "veto"  # the parent's stop judged the subagent's write
    assert all(r.verdict != "verified" for r in found)
    assert reached_after_stop(model, REASON)


def test_a_background_subagent_s_wrong_fix_cannot_end_the_session_unnoticed(
    tmp_path: Path, cache: Path
) -> None:
    """In the background the parent says it is done while the subagent works (its stop has
    nothing to check); the subagent's wrong fix is sent back at its subagentStop, and Copilot
    tells the parent of its end with a <system_notification> prompt, the host's words: the
    parent's next stop judges the subagent's write."""
    repo, state = repo_gated(tmp_path, max_strict_vetoes=1)
    trust(repo)
    wait = ("tool", "bash", {"command": "sleep 2", "description": "let the parent stop"})
    sub = Agent([wait, wrong(repo), ("text", "Subagent: fixed.")], [("text", "Subagent: done.")])
    main = Agent([start_subagent("background"), ("text", "Started a subagent.")], [("text", "Ok.")])
    model = copilot(repo, state, cache, with_subagent(main, sub), "Fix normalize; delegate it.")
    found = receipts(state)
    mine = [r for r in found if "#agent-" in r.session_id]
    parents = [r for r in found if "#agent-" not in r.session_id]
    assert [r.decision_doc["host_event"] for r in mine] == ["subagentStop"] * sub.stops
    assert [r.decision for r in mine] == ["veto", "allow"]
    assert "veto" in [r.decision for r in parents]  # the parent's stop judged the write
    assert parents[-1].created_at > mine[-1].created_at
    assert all(r.verdict != "verified" for r in found)
    assert model.seen("<system_notification>")


def test_an_untrusted_folder_loads_no_hook_and_doctor_says_it_cannot_fire(
    tmp_path: Path, cache: Path
) -> None:
    repo, state = repo_gated(tmp_path)
    agent = Agent([wrong(repo), ("text", "Done.")])
    model = copilot(repo, state, cache, agent, "Make normalize drop the +4 of a ZIP+4 code.")
    assert (repo / "zipcode.py").read_text() != project.BUGGY  # the agent's edit happened
    assert agent.stops == 1
    assert not model.seen("verifier")
    assert receipts(state) == []  # no hook of donegate's ran
    config = repo.parent / "home" / ".copilot" / "config.json"
    says = doctor(repo, state, cache)
    assert f"NO  copilot: {repo} is not a trusted folder in {config}" in says, says
    assert "copilot: its hooks cannot fire here" in says
    assert f"trust the folder for future sessions (or add it to trustedFolders in {config})" in says


def test_copilot_reading_claude_settings_is_answered_as_copilot(
    tmp_path: Path, cache: Path
) -> None:
    """Copilot CLI runs .claude/settings.json's hooks too, with a VS Code-compatible payload that
    carries stop_reason: donegate answers it as Copilot reads it (a top-level decision), and
    Copilot sends the agent back."""
    repo, state = repo_gated(tmp_path, host="claude-code")
    trust(repo)
    agent = Agent([wrong(repo), ("text", "Done.")], [right(repo), ("text", "Fixed now.")])
    model = copilot(repo, state, cache, agent, "Make normalize drop the +4 of a ZIP+4 code.")
    assert reached_after_stop(model, REASON)
    found = receipts(state)
    assert [(r.host, r.decision_doc["host_event"], r.verdict) for r in found] == [
        ("copilot", "Stop", "refuted"),
        ("copilot", "Stop", "verified"),
    ]
