"""Codex CLI itself, run headless (``codex exec --json``) against a scripted model on loopback,
gated by donegate as ``donegate init codex`` installs it: the conformance of the real program,
not of payloads shaped from its documentation.

The program comes from the npm registry at a pinned version (``make hosts``). Each session has
its own ``CODEX_HOME`` whose ``config.toml`` names the loopback server as the model provider.
Codex runs a project's hooks only in a trusted project and only hooks a person trusted: the
sessions here record both as a person leaves them (the project's trust entry, and each hook's
``currentHash`` from ``codex app-server``'s ``hooks/list`` as ``/hooks`` records it), with no
bypass flag; the test of ``doctor`` starts from neither. What Codex sent each hook is kept too:
a hooks file in ``CODEX_HOME`` (a layer of its own, beside the project's) copies every payload
to a folder; ``tests/hooks/fixtures/codex/0.171`` holds such payloads.

Most of the time goes to the stops that run the demo's tests in donegate's sealed copy.
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
from donegate.hooks.doctor import codex_hook_hash
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
BLOCKED = "<hook_prompt"
# The app server's names for the events donegate installs.
LISTED = {
    "sessionStart": "SessionStart",
    "userPromptSubmit": "UserPromptSubmit",
    "postToolUse": "PostToolUse",
    "stop": "Stop",
    "subagentStop": "SubagentStop",
}  # how Codex hands a blocked stop's reason to the model

pytestmark = pytest.mark.skipif(
    not BINARY.exists(), reason=f"Codex CLI {VERSION} is not installed: make hosts"
)


class Codex:
    """The demo project with donegate installed as a person would (init, then commit), and the
    ``CODEX_HOME`` of the person running Codex in it."""

    def __init__(self, tmp_path: Path, **config: Any) -> None:
        self.repo, self.state = project.create(tmp_path / "repo", **config), tmp_path / "state"
        self.home, self.tmpdir = tmp_path / "codex-home", tmp_path / "tmp"
        for folder in (self.home / "payloads", self.tmpdir):
            folder.mkdir(parents=True)
        init = [sys.executable, "-m", "donegate", "init", "codex"]
        subprocess.run(init, cwd=self.repo, env=self.env, check=True, capture_output=True)
        project.git(self.repo, "add", "-A")
        project.git(self.repo, "commit", "-qm", "gate")
        self.configure("http://127.0.0.1:9/v1")
        # Codex's own hooks layer in CODEX_HOME: it copies every payload Codex sends.
        copy = f"cat > {self.home / 'payloads'}/$(date +%s%N)-$$.json"
        handler = {"hooks": [{"type": "command", "command": copy, "timeout": 10}]}
        hooks = {"hooks": {event: [handler] for event in EVENTS}}
        (self.home / "hooks.json").write_text(json.dumps(hooks))

    @property
    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "CODEX_HOME": str(self.home),
            "HOME": str(self.home.parent),
            # Codex puts its sandbox's helper on PATH from CODEX_HOME, never under the temporary
            # directory: a directory of the session's own keeps pytest's /tmp out of that rule.
            "TMPDIR": str(self.tmpdir),
            "DONEGATE_STATE_DIR": str(self.state),
        }

    def configure(self, url: str, model: str = MODEL) -> None:
        """The model provider: the loopback server at ``url``; what Codex recorded stays."""
        config = self.home / "config.toml"
        kept = config.read_text().split(PROVIDER_END)[1] if config.exists() else ""
        config.write_text(
            f'model = "{model}"\nmodel_provider = "loopback"\n\n'
            "[model_providers.loopback]\n"
            f'name = "loopback"\nbase_url = "{url}"\nwire_api = "responses"\n'
            f"request_max_retries = 0\nstream_max_retries = 0\n{PROVIDER_END}{kept}"
        )

    def trust_project(self) -> None:
        """What Codex records when the person trusts the project (``codex exec --trust``)."""
        with (self.home / "config.toml").open("a") as config:
            config.write(f'\n[projects."{self.repo}"]\ntrust_level = "trusted"\n')

    def hooks(self) -> list[dict[str, Any]]:
        """The hooks Codex would run here, as its app server lists them (``hooks/list``)."""
        requests: list[dict[str, Any]] = [
            {
                "id": 1,
                "method": "initialize",
                "params": {"clientInfo": {"name": "t", "version": "1"}},
            },
            {"method": "initialized"},
            {"id": 2, "method": "hooks/list", "params": {"cwds": [str(self.repo)]}},
        ]
        server = subprocess.Popen(
            [str(BINARY), "app-server"],
            cwd=self.repo,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert server.stdin is not None
        assert server.stdout is not None
        try:
            for request in requests:
                server.stdin.write(json.dumps({"jsonrpc": "2.0", **request}) + "\n")
            server.stdin.flush()
            for line in server.stdout:
                answer = json.loads(line)
                if answer.get("id") == 2:
                    listed: list[dict[str, Any]] = answer["result"]["data"][0]["hooks"]
                    return listed
            raise AssertionError("codex app-server ended without listing its hooks")
        finally:
            server.kill()
            server.wait(timeout=30)

    def trust_hooks(self) -> list[str]:
        """Trust every hook listed, as the person's review in ``/hooks`` records it; the keys."""
        listed = self.hooks()
        with (self.home / "config.toml").open("a") as config:
            for hook in listed:
                config.write(
                    f'\n[hooks.state."{hook["key"]}"]\ntrusted_hash = "{hook["currentHash"]}"\n'
                )
        return [hook["key"] for hook in listed]

    def run(self, url: str, prompt: str, model: str = MODEL) -> list[dict[str, Any]]:
        """One headless session of the real program; the events it printed."""
        self.configure(url, model)
        done = subprocess.run(
            [str(BINARY), "exec", "--json", prompt],
            cwd=self.repo,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]

    def payloads(self) -> list[dict[str, Any]]:
        """What Codex sent its hooks, in the order it sent them."""
        found = sorted(
            (self.home / "payloads").glob("*.json"), key=lambda p: int(p.name.split("-")[0])
        )
        return [json.loads(p.read_text()) for p in found]

    def receipts(self) -> list[Any]:
        with Ledger(self.state) as ledger:
            return list(reversed(ledger.recent(50)))

    def doctor(self) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "donegate", "doctor", "--no-run"]
        return subprocess.run(
            argv, cwd=self.repo, env=self.env, capture_output=True, text=True, check=False
        )


PROVIDER_END = "# end of the loopback provider\n"


@pytest.fixture
def gated(tmp_path: Path) -> Codex:
    """A project Codex trusts, with every hook trusted: as a person leaves it after ``/hooks``."""
    codex = Codex(tmp_path)
    codex.trust_project()
    codex.trust_hooks()
    return codex


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


def reasons(model: Model) -> list[str]:
    """The blocked stops' reasons as they reached the model, in order, without repeats."""
    found: list[str] = []
    for request in model.requests:
        for item in request.get("input", []):
            text = json.dumps(item)
            if BLOCKED in text and text not in found:
                found.append(text)
    return found


def test_a_wrong_fix_is_sent_back_and_the_right_one_verifies(gated: Codex) -> None:
    script = agent(
        [patch("zipcode.py", BUGGY_LINE, WRONG_LINE)], [patch("zipcode.py", WRONG_LINE, FIXED_LINE)]
    )
    with serving(script) as (model, url):
        gated.run(url, "Make normalize drop the +4 of a ZIP+4 code.")
    sent_back = reasons(model)
    assert len(sent_back) == 1, sent_back
    assert "tests/test_zip.py::test_update failed after your last edit" in sent_back[0]
    assert [r.verdict for r in gated.receipts()] == ["refuted", "verified"]
    assert (gated.repo / "zipcode.py").read_text() == project.FIXED


def test_a_weakened_test_never_ends_verified(gated: Codex) -> None:
    cheat = [
        patch("tests/test_zip.py", TEST_LINE, WEAK_LINE),
        patch("zipcode.py", BUGGY_LINE, WRONG_LINE),
    ]
    with serving(agent(cheat)) as (model, url):
        gated.run(url, "Make the tests pass.")
    assert WEAK_LINE in (gated.repo / "tests/test_zip.py").read_text()  # the edit was made
    found = gated.receipts()
    assert found
    assert all(r.verdict != "verified" for r in found)
    assert model.seen("'tests/**'")  # the protected pattern, named to the agent


def test_the_agent_running_donegate_accept_counts_for_nothing(gated: Codex) -> None:
    """Accepting is the person's act: the agent weakens the test, then runs ``donegate accept``
    through Codex's shell tool. donegate refuses in an agent's shell, and the stop never
    verifies."""
    accept = f"{Path(sys.executable).parent / 'donegate'} accept --yes tests/test_zip.py"
    cheat = [
        patch("tests/test_zip.py", TEST_LINE, WEAK_LINE),
        patch("zipcode.py", BUGGY_LINE, WRONG_LINE),
        shell(accept),
    ]
    with serving(agent(cheat)) as (model, url):
        gated.run(url, "Make the tests pass.")
    assert model.seen("donegate accept: refused")  # the command's own answer, in its output
    assert not model.seen("then run `donegate accept")  # never asked to do the person's act
    found = gated.receipts()
    assert found
    assert all(r.verdict != "verified" for r in found)


def test_a_patch_applied_through_the_shell_is_still_judged(gated: Codex) -> None:
    """``apply_patch <<EOF`` inside ``exec_command`` edits the file with no PostToolUse: the stop
    sees the write in its snapshot of the tree, sends the wrong fix back, verifies the right."""

    def heredoc(old: str, new: str) -> Answer:
        body = f"*** Begin Patch\n*** Update File: zipcode.py\n@@\n-{old}\n+{new}\n*** End Patch"
        return shell(f"apply_patch <<'EOF'\n{body}\nEOF")

    script = agent([heredoc(BUGGY_LINE, WRONG_LINE)], [heredoc(WRONG_LINE, FIXED_LINE)])
    with serving(script) as (model, url):
        gated.run(url, "Make normalize drop the +4 of a ZIP+4 code.")
    events = [(p["hook_event_name"], p.get("tool_name")) for p in gated.payloads()]
    assert ("PreToolUse", "Bash") in events  # Codex saw the command, before it ran
    assert not [e for e in events if e[0] == "PostToolUse"]  # and told no hook it wrote
    sent_back = reasons(model)
    assert len(sent_back) == 1, sent_back
    assert "tests/test_zip.py::test_update failed after your last edit" in sent_back[0]
    assert [r.verdict for r in gated.receipts()] == ["refuted", "verified"]
    assert (gated.repo / "zipcode.py").read_text() == project.FIXED


def test_untrusted_hooks_cannot_fire_and_doctor_says_so_with_the_fix(tmp_path: Path) -> None:
    """Codex skips an untrusted project's hooks, then untrusted hooks, without a word: whatever
    the agent does goes unjudged. ``donegate doctor`` names each gate and its fix; once both are
    trusted a session is gated."""
    codex = Codex(tmp_path)
    config = codex.home / "config.toml"
    with serving(agent([])) as (model, url):
        codex.run(url, "Make normalize drop the +4 of a ZIP+4 code.")
    assert not codex.payloads()
    assert sandbox_modes(model) == {"read-only"}  # the project's config.toml is not read either
    assert not codex.state.exists()  # donegate never ran
    doctor = codex.doctor()
    assert doctor.returncode == 3
    says(
        doctor.stderr,
        f"NO  codex: the project {codex.repo} is not trusted in {config}",
        f"fix: open Codex in {codex.repo} and trust the project (codex exec: --trust)",
        "NO  codex: its hooks cannot fire here (see above)",
    )

    codex.trust_project()
    with serving(agent([])) as (model, url):
        codex.run(url, "Is normalize right now?")
    assert sandbox_modes(model) == {"workspace-write"}  # as init asks, once trusted
    assert not codex.payloads()  # the project is trusted, its hooks still are not
    says(
        codex.doctor().stderr,
        f"ok  codex: the project {codex.repo} is trusted in {config}",
        f"NO  codex: no trust recorded in {config} for donegate's SessionStart, "
        "UserPromptSubmit, PostToolUse, Stop, SubagentStop hooks",
        "fix: open Codex in this repository, run /hooks, and trust donegate's hooks",
        "NO  codex: its hooks cannot fire here (see above)",
    )

    keys = codex.trust_hooks()
    assert f"{codex.repo}/.codex/hooks.json:subagent_stop:0:0" in keys
    ours = json.loads((codex.repo / ".codex/hooks.json").read_text())["hooks"]
    for hook in codex.hooks():  # doctor's reckoning of Codex's hash is Codex's own
        if hook["source"] == "project":
            event = LISTED[hook["eventName"]]
            group = ours[event][0]
            assert (
                codex_hook_hash(event, group.get("matcher"), group["hooks"][0])
                == (hook["currentHash"])
            ), hook["key"]
    with serving(agent([patch("zipcode.py", BUGGY_LINE, FIXED_LINE)])) as (_, url):
        codex.run(url, "Make normalize drop the +4 of a ZIP+4 code.")
    assert [r.verdict for r in codex.receipts()] == ["verified"]
    assert [p["hook_event_name"] for p in codex.payloads()][-1] == "Stop"
    says(
        codex.doctor().stderr,
        "ok  codex: donegate's hooks are trusted",
        "ok  codex: last hook call Stop at",
    )

    # Changed after the person trusted it (as a new init from another interpreter changes the
    # command): Codex skips donegate's stop, and doctor says so.
    hooks_file = codex.repo / ".codex/hooks.json"
    changed = json.loads(hooks_file.read_text())
    changed["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 900
    hooks_file.write_text(json.dumps(changed))
    status = {h["key"].rsplit("/", 1)[-1]: h["trustStatus"] for h in codex.hooks()}
    assert status["hooks.json:stop:0:0"] == "modified"
    before = len(codex.receipts())
    with serving(agent([patch("zipcode.py", FIXED_LINE, WRONG_LINE)])) as (_, url):
        codex.run(url, "Tidy normalize.")
    assert [p["hook_event_name"] for p in codex.payloads()][-1] == "Stop"  # Codex's own stop
    assert len(codex.receipts()) == before  # but donegate's never ran
    doctor = codex.doctor()
    assert doctor.returncode == 3
    says(doctor.stderr, "NO  codex: donegate's Stop hooks changed since they were trusted")


def test_a_subagent_s_wrong_fix_never_ends_the_session_verified_or_unnoticed(
    tmp_path: Path,
) -> None:
    """The main agent hands the fix to a subagent (``spawn_agent``), which makes a wrong one
    through the shell and says it is done. Its ``SubagentStop`` sends it back with the failing
    test; the main agent's own stop is judged too; nothing verifies."""
    codex = Codex(tmp_path, max_strict_vetoes=1)  # one red stop sent back, then let go
    codex.trust_project()
    codex.trust_hooks()
    wrong = shell(f"sed -i 's/{BUGGY_LINE.strip()}/{WRONG_LINE.strip()}/' zipcode.py")

    def script(items: list[dict[str, Any]]) -> Answer:
        made = [i for i in items if i.get("type") in CALLS]
        if is_subagent(items):
            return wrong if not made else ("text", "Subtask done.")
        if not made:
            return ("function", "spawn_agent", {"message": SUBTASK}, "multi_agent_v1")
        if len(made) == 1:
            spawned = json.loads(items[-1]["output"])  # the spawn's output: the agent's id
            wait = {"targets": [spawned["agent_id"]], "timeout_ms": 120000}
            return ("function", "wait_agent", wait, "multi_agent_v1")
        return ("text", "Done: the subagent fixed normalize.")

    with serving(script) as (model, url):
        codex.run(url, "Fix normalize; hand it to a subagent.", model=SPAWNING_MODEL)
    assert WRONG_LINE in (codex.repo / "zipcode.py").read_text()
    events = [p["hook_event_name"] for p in codex.payloads()]
    assert "SubagentStop" in events
    assert events[-1] == "Stop"
    to_subagent = [r["input"] for r in model.requests if is_subagent(r["input"])]
    assert any(
        "subagent-stop:" in json.dumps(i) and "test_update failed" in json.dumps(i)
        for i in to_subagent
    )
    to_main = [r["input"] for r in model.requests if not is_subagent(r["input"])]
    assert any(BLOCKED in json.dumps(i) and "test_update" in json.dumps(i) for i in to_main)
    found = codex.receipts()
    assert found
    assert all(r.verdict != "verified" for r in found)
    sessions = {r.session_id for r in found}
    assert any("#agent-" in s for s in sessions)  # the subagent's stop, under its own key
    assert any("#agent-" not in s for s in sessions)  # and the main agent's
    # The subtask is the main agent's words: never kept as the person's task.
    tasks = " ".join(p.read_text() for p in codex.state.rglob("prompts.json"))
    assert "hand it to a subagent" in tasks
    assert SUBTASK not in tasks


SUBTASK = "SUBTASK: make normalize drop the +4 of a ZIP+4 code."


def is_subagent(items: list[dict[str, Any]]) -> bool:
    """Whether the conversation is the subagent's: its person's turn is the subtask."""
    return any(
        i.get("type") == "message" and i.get("role") == "user" and SUBTASK in json.dumps(i)
        for i in items
    )


def sandbox_modes(model: Model) -> set[str]:
    """The sandbox Codex says each request's turn runs in (its turn metadata)."""
    found = set()
    for request in model.requests:
        turn = json.loads(request["client_metadata"]["x-codex-turn-metadata"])
        found.add(turn["sandbox_mode"])
    return found


def says(out: str, *parts: str) -> None:
    missing = [part for part in parts if part not in out]
    assert not missing, f"doctor did not say {missing}:\n{out}"
