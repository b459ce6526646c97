"""Gemini CLI itself, run headless against a scripted model on loopback, gated by donegate as
`donegate init gemini-cli` installs it: the conformance of the real program, not of payloads
shaped from its documentation.

The program comes from the npm registry at a pinned version (`make hosts`). It talks to the
Gemini API at `GOOGLE_GEMINI_BASE_URL` with an API key (any key: the model is
`tests/hosts/gemini_model.py`), and reads its user settings and trusted folders from a HOME made
for each test. The project's test command runs without pytest's plugin autoload (set in the
person's `donegate.toml`): each stop runs the suite, and the plugins of this virtualenv cost
seconds per run for nothing the demo's tests use.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

import donegate
from donegate.demo import project
from donegate.ledger import FILE_NAME as LEDGER_FILE
from donegate.ledger import Ledger, Receipt
from donegate.statedir import NEW_STATE, NOT_RECORDED
from donegate.workspace.state import session_dir
from tests.hosts.gemini_model import Answer, Script, Turn, serving

VERSION = "0.61.0"
PACKAGE = Path(__file__).parents[2] / ".hosts/node_modules/@google/gemini-cli"
BINARY = PACKAGE / "bundle/gemini.js"
MODEL = "gemini-2.5-flash"  # named, so no routing classifier runs before each turn
WRONG = "def normalize(z):\n    return z\n"
WEAKENED = project.TESTS.replace('== "94107"\n', '.startswith("94107")\n')
SENT_BACK = "tests/test_zip.py::test_update failed after your last edit"
FAST_PYTEST = 'timeout_s = 120\nenv = { PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1" }\n'


def _installed() -> str | None:
    try:
        found = json.loads((PACKAGE / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None
    return found if isinstance(found, str) else None


pytestmark = [
    pytest.mark.skipif(_installed() is None, reason="Gemini CLI is not installed: make hosts"),
    pytest.mark.skipif(
        not shutil.which("node"), reason="Node.js, which runs Gemini CLI, is missing"
    ),
    pytest.mark.skipif(
        _installed() not in (None, VERSION),
        reason=f"Gemini CLI {_installed()} is installed; these tests describe {VERSION}",
    ),
]


# init turns on Gemini CLI's tool sandbox, which on Linux runs each shell command in bubblewrap.
SANDBOXED_SHELL = pytest.mark.skipif(
    sys.platform != "linux" or not shutil.which("bwrap"),
    reason="the shell tool runs in Gemini CLI's Linux sandbox, which needs bubblewrap",
)


class Session:
    """One gated repository, the HOME Gemini CLI reads, and donegate's state."""

    def __init__(self, tmp_path: Path, *, trusted: bool = True, **config: Any) -> None:
        self.repo = project.create(tmp_path / "repo", **config)
        self.state = tmp_path / "state"
        self.home = tmp_path / "home"
        toml = self.repo / "donegate.toml"
        toml.write_text(toml.read_text().replace("timeout_s = 120\n", FAST_PYTEST))
        self.donegate("init", "gemini-cli")
        project.git(self.repo, "add", "-A")
        project.git(self.repo, "commit", "-qm", "gate")
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        }
        (self.home / ".gemini").mkdir(parents=True)
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        if trusted:
            rules = {str(self.repo): "TRUST_FOLDER"}
            (self.home / ".gemini" / "trustedFolders.json").write_text(json.dumps(rules))

    def env(self, url: str = "http://127.0.0.1:9") -> dict[str, str]:
        # The machine's own Gemini variables (a forced trust, another key) would decide for it.
        mine = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_"))}
        return {
            **mine,
            "HOME": str(self.home),
            "GOOGLE_GEMINI_BASE_URL": url,
            "GEMINI_API_KEY": "dummy",
            # Not started a second time in a child process with a larger heap: seconds saved.
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "DONEGATE_STATE_DIR": str(self.state),
        }

    def donegate(self, *args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "donegate", *args]
        env = (
            self.env()
            if self.home.exists()
            else {**os.environ, "DONEGATE_STATE_DIR": str(self.state)}
        )
        return subprocess.run(
            argv, cwd=self.repo, env=env, capture_output=True, text=True, check=False
        )

    def gemini(self, url: str, prompt: str, mode: str = "auto_edit", *more: str) -> Run:
        """One headless session of the real program."""
        argv = ["node", str(BINARY), "-p", prompt, "-m", MODEL, "--approval-mode", mode]
        argv += ["-o", "stream-json", *more]
        done = subprocess.run(
            argv,
            cwd=self.repo,
            env=self.env(url),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        return Run(done)

    def receipts(self) -> list[Receipt]:
        with Ledger(self.state) as ledger:
            return list(reversed(ledger.recent(50)))


class Run:
    """What the program printed and how it ended."""

    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        self.code = done.returncode
        self.stderr = done.stderr
        self.events: list[dict[str, Any]] = []
        for line in done.stdout.splitlines():
            if line.startswith("{"):
                self.events.append(json.loads(line))

    @property
    def blocks(self) -> list[str]:
        """The warnings the program printed for each AfterAgent that sent the agent back."""
        return [
            e["message"]
            for e in self.events
            if e.get("type") == "error" and "Agent execution blocked" in e.get("message", "")
        ]


def staged(
    stages: list[list[Answer]], done: str = "Done: normalize handles ZIP+4 codes."
) -> Script:
    """A model that makes the calls of ``stages[0]`` one by one and says ``done``; each time a
    text comes back to it on its own (a stop hook's reason), the calls of the next stage."""

    def script(turn: Turn) -> Answer:
        texts = turn.prompts()
        stage = len(texts) - 1
        if stage >= len(stages):
            return ("text", done)
        made = turn.calls_since(texts[-1])
        return stages[stage][made] if made < len(stages[stage]) else ("text", done)

    return script


def write(repo: Path, path: str, content: str) -> Answer:
    return ("tool", "write_file", {"file_path": str(repo / path), "content": content})


def replace(repo: Path, old: str, new: str) -> Answer:
    args = {"file_path": str(repo / "zipcode.py"), "old_string": old, "new_string": new}
    return ("tool", "replace", {**args, "instruction": "Fix normalize."})


def test_a_wrong_fix_is_sent_back_and_the_right_one_verifies(tmp_path: Path) -> None:
    gated = Session(tmp_path)
    repo = gated.repo
    script = staged(
        [[write(repo, "zipcode.py", WRONG)], [write(repo, "zipcode.py", project.FIXED)]]
    )
    with serving(script) as (model, url):
        run = gated.gemini(url, "Make normalize drop the +4 of a ZIP+4 code.")
    assert run.code == 0, run.stderr[-2000:]
    assert len(run.blocks) == 1
    found = gated.receipts()
    assert [r.verdict for r in found] == ["refuted", "verified"]
    # The block's reason, as the ledger has it, is the newest user turn of the next request.
    reason = found[0].decision_doc["answer"]["reason"]
    assert SENT_BACK in reason
    told = [t["contents"][-1] for t in model.turns if SENT_BACK in json.dumps(t["contents"][-1])]
    assert told
    assert told[0] == {"role": "user", "parts": [{"text": reason}]}
    assert (repo / "zipcode.py").read_text() == project.FIXED


def test_a_weakened_test_never_ends_verified(tmp_path: Path) -> None:
    gated = Session(tmp_path, max_strict_vetoes=2)  # the person's cap: three stops, not six
    cheat = [
        write(gated.repo, "tests/test_zip.py", WEAKENED),
        write(gated.repo, "zipcode.py", WRONG),
    ]
    with serving(staged([cheat])) as (model, url):
        run = gated.gemini(url, "Make the tests pass.")
    assert run.code == 0, run.stderr[-2000:]
    found = gated.receipts()
    assert found
    assert all(r.verdict != "verified" for r in found)
    assert found[-1].reason == "strict_veto_cap_reached"  # the end is on the record
    assert model.seen("'tests/**'")  # the protected pattern, named to the agent
    # A continuation in which no tool ran ends with stop_hook_active true.
    assert [r.decision_doc["continuing"] for r in found[:2]] == [False, True]


@SANDBOXED_SHELL
def test_the_agent_running_donegate_accept_counts_for_nothing(tmp_path: Path) -> None:
    """Accepting is the person's act: the agent weakens the test, then runs `donegate accept`
    through its shell tool (yolo: the shell tool is offered only when approved ahead). Gemini CLI
    has no project-level rule that could deny it (its workspace policies are disabled), so
    donegate refuses it: $GEMINI_CLI marks the shell as an agent's."""
    gated = Session(tmp_path, max_strict_vetoes=2)
    donegate = Path(sys.executable).parent / "donegate"
    accept = f"{donegate} accept --yes tests/test_zip.py"
    cheat = [
        write(gated.repo, "tests/test_zip.py", WEAKENED),
        write(gated.repo, "zipcode.py", WRONG),
        ("tool", "run_shell_command", {"command": accept, "description": "accept the test"}),
    ]
    with serving(staged([cheat])) as (model, url):
        run = gated.gemini(url, "Make the tests pass.", mode="yolo")
    assert run.code == 0, run.stderr[-2000:]
    # donegate refuses it; or, where donegate is installed under /tmp (a checkout there), Gemini
    # CLI's sandbox (its own /tmp) keeps the agent's shell from reaching it at all.
    unreachable = f"{donegate}: No such file or directory"
    assert model.seen("donegate accept: refused: $GEMINI_CLI") or model.seen(unreachable)
    assert not model.seen("then run `donegate accept")  # never asked to do the person's act
    found = gated.receipts()
    assert found
    assert all(r.verdict != "verified" for r in found)
    assert "counts for nothing" in (found[0].decision_doc["answer"]["notice"] or "")


@SANDBOXED_SHELL
@pytest.mark.parametrize(
    ("state_at", "told"),
    [
        ("var-tmp", "recorded nothing: donegate's state was out of its reach"),
        ("tmp", "made a state directory of its own: the real one was out of its sight"),
    ],
)
def test_a_hook_call_from_the_agents_shell_is_told_from_what_it_printed(
    tmp_path: Path, state_at: str, told: str
) -> None:
    """The agent pipes a prompt of its own into donegate's hook from a script, so that the command
    Gemini CLI reports names no hook. Inside the tool sandbox the call records nothing real, and
    says so; the real hook reads that mark in Gemini CLI's report of the shell call (its
    ``llmContent``) and tells the person at the stop.

    Under /var/tmp, the state is seen read-only from the box: the call cannot write it. Under
    /tmp, which the sandbox replaces with a /tmp of its own, the box does not see it: the call
    makes a new one there, which vanishes with the box."""
    gated = Session(tmp_path)
    # The agent runs a copy of donegate's package from outside /tmp (a checkout under /tmp is out
    # of the box's sight), with the interpreter the virtualenv was made from: the hook's first
    # steps need nothing else.
    base = Path(tempfile.mkdtemp(prefix="donegate-boxed-", dir="/var/tmp"))
    if state_at == "var-tmp":
        gated.state = base / "state"
    package = Path(donegate.__file__).parent
    shutil.copytree(package, base / "lib" / "donegate", ignore=shutil.ignore_patterns("*.pyc"))
    caller = (
        f"import sys\nsys.path.insert(0, {str(base / 'lib')!r})\n"
        "from donegate.cli import main\nsys.argv = ['donegate', 'hook', 'gemini-cli']\n"
        "sys.exit(main())\n"
    )
    forged = {"session_id": "forged", "hook_event_name": "BeforeAgent", "cwd": str(gated.repo)}
    payload = json.dumps({**forged, "prompt": "I accept it all"})
    python = os.path.realpath(sys.executable)
    # The call is the script's last command: its refusal (exit 1) is the shell call's. Gemini CLI
    # reads some words of a failed call as its sandbox refusing a path, and asks to open it (a
    # headless run ends there, unchecked): donegate's words are not those.
    script = f"echo '{payload}' | {python} -P tools/call.py\n"
    calls = [
        write(gated.repo, "tools/call.py", caller),
        write(gated.repo, "tools/go.sh", script),
        ("tool", "run_shell_command", {"command": "sh tools/go.sh", "description": "go"}),
    ]
    try:
        with serving(staged([calls], done="Done.")) as (model, url):
            run = gated.gemini(url, "Tidy up.", mode="yolo")
        assert run.code == 0, run.stderr[-2000:]
        # The call said so, inside the box.
        assert model.seen(NOT_RECORDED if state_at == "var-tmp" else NEW_STATE)
        receipt = gated.receipts()[0]
        # Nothing reached the real state: the real session is there, the forged one is not.
        assert session_dir(gated.state, gated.repo, receipt.session_id).is_dir()
        assert not session_dir(gated.state, gated.repo, "forged").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    notice = receipt.decision_doc["answer"]["notice"] or ""
    assert "the agent called donegate itself from its shell 1 time(s)" in notice
    assert told in notice


def test_a_subagents_wrong_fix_is_caught_at_the_main_agents_stop(tmp_path: Path) -> None:
    """Gemini CLI 0.61's model can start a subagent (invoke_agent; `generalist` has every tool).
    A subagent's end fires no hook of its own: its writes fire AfterTool in the session, and the
    main agent's AfterAgent judges them."""
    gated = Session(tmp_path)
    repo = gated.repo
    main = staged(
        [
            [("tool", "invoke_agent", {"agent_name": "generalist", "prompt": "Fix normalize."})],
            [write(repo, "zipcode.py", project.FIXED)],
        ],
        done="Done: the generalist fixed normalize.",
    )

    def script(turn: Turn) -> Answer:
        if "complete_task" not in turn.tools:
            return main(turn)
        if turn.calls("write_file") == 0:  # the subagent
            return write(repo, "zipcode.py", WRONG)
        return ("tool", "complete_task", {"result": {"response": "normalize fixed"}})

    with serving(script) as (model, url):
        run = gated.gemini(url, "Make normalize drop the +4 of a ZIP+4 code.")
    assert run.code == 0, run.stderr[-2000:]
    assert any("complete_task" in Turn(t).tools for t in model.turns)  # the subagent ran
    found = gated.receipts()
    assert [r.verdict for r in found] == ["refuted", "verified"]
    assert "zipcode.py" in [w["path"] for w in found[0].decision_doc["writes"]]
    assert model.seen(SENT_BACK)


def test_an_untrusted_folder_exits_55_and_doctor_says_the_hooks_cannot_fire(
    tmp_path: Path,
) -> None:
    gated = Session(tmp_path, trusted=False)
    with serving(staged([[write(gated.repo, "zipcode.py", WRONG)]])) as (model, url):
        run = gated.gemini(url, "Make normalize drop the +4 of a ZIP+4 code.")
    assert run.code == 55
    assert "not running in a trusted directory" in run.stderr
    assert model.requests == []
    assert (gated.repo / "zipcode.py").read_text() == project.BUGGY
    assert not (gated.state / LEDGER_FILE).exists()  # no hook ran: no stop, no record
    doctor = gated.donegate("doctor")
    rules = gated.home / ".gemini" / "trustedFolders.json"
    assert doctor.returncode == 3
    assert f"NO  gemini-cli: {gated.repo} is not a trusted folder in {rules}" in doctor.stderr
    assert "Gemini CLI exits 55 here" in doctor.stderr
    assert "NO  gemini-cli: its hooks cannot fire here (see above)" in doctor.stderr
    assert f"fix: run gemini in {gated.repo} and trust the folder" in doctor.stderr


def test_skip_trust_runs_the_agent_ungated_and_doctor_says_so(tmp_path: Path) -> None:
    """The flag Gemini CLI's exit-55 message offers trusts the folder for the session, yet the
    project's settings were read before it took effect: no hook runs, no sandbox."""
    gated = Session(tmp_path, trusted=False)
    with serving(staged([[write(gated.repo, "zipcode.py", WRONG)]])) as (model, url):
        run = gated.gemini(url, "Make normalize drop the +4.", "auto_edit", "--skip-trust")
    assert run.code == 0, run.stderr[-2000:]
    assert model.turns
    assert (gated.repo / "zipcode.py").read_text() == WRONG  # the agent worked
    assert not (gated.state / LEDGER_FILE).exists()  # and no stop was gated
    doctor = gated.donegate("doctor")
    assert "with --skip-trust runs without the project's settings: no donegate hook" in (
        doctor.stderr
    )
    assert "headless: GEMINI_CLI_TRUST_WORKSPACE=true, never --skip-trust" in doctor.stderr


def test_the_continuation_after_a_block_is_gated_once_on_one_budget(tmp_path: Path) -> None:
    """After a block Gemini CLI sends the reason as a new prompt (a BeforeAgent with it), and
    the AfterAgent that ends a continuation in which tools ran says stop_hook_active false. Each
    is still one stop of the same turn: one receipt per AfterAgent, the strict vetoes counted on
    from the block before, the agent's writes still its own."""
    gated = Session(tmp_path)
    repo = gated.repo
    stages = [
        [write(repo, "zipcode.py", WRONG)],
        [replace(repo, "return z\n", "return z.strip()\n")],
        [replace(repo, "return z.strip()\n", 'return z.strip().split("-")[0]\n')],
    ]
    with serving(staged(stages)) as (model, url):
        run = gated.gemini(url, "Make normalize drop the +4 of a ZIP+4 code.")
    assert run.code == 0, run.stderr[-2000:]
    found = gated.receipts()
    assert len(found) == len(run.blocks) + 1 == 3
    assert [r.verdict for r in found] == ["refuted", "refuted", "verified"]
    assert [r.decision_doc["continuing"] for r in found] == [False, False, False]
    counts = [r.decision_doc["gate"]["counts"]["strict_since_allow"] for r in found[:2]]
    assert counts == [1, 2]
    assert model.seen("The verifier still fails (attempt 2)")
    assert all("zipcode.py" in [w["path"] for w in r.decision_doc["writes"]] for r in found)


@SANDBOXED_SHELL
def test_the_tool_sandboxs_own_files_are_not_the_agents_writes(tmp_path: Path) -> None:
    """`init` turns on Gemini CLI's tool sandbox, and on Linux the sandbox creates an empty
    .gitignore and .geminiignore in the workspace at its first command where they are missing.
    An agent that only looks (one shell command, no write) at a project whose tests fail is
    let go: the host's files are no write of its."""
    gated = Session(tmp_path)
    look = ("tool", "run_shell_command", {"command": "cat zipcode.py", "description": "read"})
    with serving(staged([[look]], done="normalize keeps the +4.")) as (model, url):
        run = gated.gemini(url, "Why does test_update fail? Change nothing.", mode="yolo")
    assert run.code == 0, run.stderr[-2000:]
    assert model.seen("return zip_code.strip()")  # the command ran, and the model read it
    assert run.blocks == []
    assert [(r.verdict, r.reason) for r in gated.receipts()] == [("none", "no_workspace_write")]


@SANDBOXED_SHELL
def test_the_agents_shell_cannot_write_donegates_state(tmp_path: Path) -> None:
    """What the receipts call confined (`gemini-cli tool sandbox`) holds for the real program:
    the shell sees a /tmp of its own and not the person's home, so donegate's state, here or at
    its default place, is out of the agent's reach."""
    gated = Session(tmp_path)
    default = gated.home / ".local" / "state" / "donegate"
    default.mkdir(parents=True)
    gated.state.mkdir(exist_ok=True)
    forge = f"touch {gated.state}/forged; touch {default}/forged; echo done-trying"
    tamper = ("tool", "run_shell_command", {"command": forge, "description": "tamper"})
    with serving(staged([[tamper]], done="Nothing to change.")) as (model, url):
        run = gated.gemini(url, "Is normalize right?", mode="yolo")
    assert run.code == 0, run.stderr[-2000:]
    assert model.seen("done-trying")  # the command ran
    assert not (gated.state / "forged").exists()
    assert not (default / "forged").exists()
    found = gated.receipts()
    assert [r.reason for r in found] == ["no_workspace_write"]
    assert found[0].decision_doc["confinement"] == {
        "confined": True,
        "by": "gemini-cli tool sandbox",
    }
