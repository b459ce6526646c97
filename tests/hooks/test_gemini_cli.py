"""Gemini CLI's adapter against the payloads the real program sent (fixtures/gemini-cli/0.61.0,
captured from `tests/hosts/test_gemini_cli.py`'s sessions: the hook's stdin teed to a file, the
machine's paths replaced by ``<repo>``, ``<home>`` and ``<tmp>``), and what `init gemini-cli`
writes for it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from donegate.hooks import gemini_cli
from donegate.hooks.doctor import Doctor
from donegate.hooks.install import GEMINI_SANDBOX_FILES, install, installed
from donegate.session import mutations
from donegate.session.event import HookAnswer

FIXTURES = Path(__file__).parent / "fixtures" / "gemini-cli" / "0.61.0"
REPO = "/home/dev/repo"


def payload(name: str) -> Any:
    text = (FIXTURES / f"{name}.json").read_text()
    text = text.replace("<repo>", REPO).replace("<home>", "/home/dev").replace("<tmp>", "/tmp")
    return json.loads(text)


def test_each_event_the_real_program_sent_maps_to_its_kind() -> None:
    kinds = {f.stem: gemini_cli.parse(payload(f.stem)).kind for f in FIXTURES.glob("*.json")}
    assert kinds == {
        "SessionStart": "baseline",
        "BeforeAgent": "baseline",
        "BeforeAgent-after-deny": "baseline",
        "AfterTool-write_file": "tool_use",
        "AfterTool-replace": "tool_use",
        "AfterTool-run_shell_command": "tool_use",
        "AfterAgent": "stop",
        "AfterAgent-continuing": "stop",
        "AfterAgent-after-tools": "stop",
    }
    assert {gemini_cli.parse(payload(name)).host for name in kinds} == {"gemini-cli"}


def test_file_tools_name_their_file_and_the_shell_its_command() -> None:
    for name in ("AfterTool-write_file", "AfterTool-replace"):
        use = gemini_cli.parse(payload(name)).tool_use
        assert use is not None
        assert use.paths == (f"{REPO}/zipcode.py",)
    shell = gemini_cli.parse(payload("AfterTool-run_shell_command")).tool_use
    assert shell is not None
    assert shell.paths == ()
    assert shell.command == "python -m pytest -q -p no:cacheprovider tests"


def test_the_stop_and_its_continuations_as_sent() -> None:
    first = gemini_cli.parse(payload("AfterAgent"))
    assert first.cwd == Path(REPO)
    assert not first.continuing
    assert first.prompt == "Make normalize drop the +4 of a ZIP+4 code."
    assert first.last_message is not None
    assert first.last_message.strip() == "Done: normalize handles ZIP+4 codes."
    # A continuation in which no tool ran: stop_hook_active true.
    assert gemini_cli.parse(payload("AfterAgent-continuing")).continuing
    # One in which tools ran: false, though it follows a block; the prompt is the person's.
    after = gemini_cli.parse(payload("AfterAgent-after-tools"))
    assert not after.continuing
    assert after.prompt == first.prompt
    assert after.last_message is not None
    assert after.last_message.count("Done: normalize handles ZIP+4 codes.") == 3  # every round


def test_the_reason_of_a_block_comes_back_as_a_before_agent_prompt() -> None:
    event = gemini_cli.parse(payload("BeforeAgent-after-deny"))
    assert event.prompt is not None
    assert event.prompt.startswith("The verifier fails after your source change.")


def test_of_a_long_prompt_response_the_end_is_kept() -> None:
    """prompt_response grows by every round's text; a claim keeps SAID_KEPT characters of what
    the agent said, so those are its last words, not its first."""
    data = payload("AfterAgent-after-tools")
    rounds = [f"Round {n}: I looked at zipcode.py and changed nothing yet." for n in range(200)]
    data["prompt_response"] = "\n".join([*rounds, "Done: the tests pass now."])
    said = gemini_cli.parse(data).last_message
    assert said is not None
    assert len(said) == gemini_cli.SAID_KEPT == mutations.MAX_OUTCOME_CHARS
    assert said.endswith("Done: the tests pass now.")
    assert said.startswith("…")
    short = gemini_cli.parse(payload("AfterAgent")).last_message
    assert short == payload("AfterAgent")["prompt_response"]  # whole when it fits


def test_deny_sends_the_agent_back() -> None:
    event = gemini_cli.parse(payload("AfterAgent"))
    out = json.loads(
        gemini_cli.render(HookAnswer.block("fix it", notice="sent back"), event).stdout
    )
    assert out == {"decision": "deny", "reason": "fix it", "systemMessage": "sent back"}
    assert gemini_cli.render(HookAnswer.allow(), event).stdout == ""
    tool = gemini_cli.parse(payload("AfterTool-write_file"))
    assert gemini_cli.render(HookAnswer.block("no"), tool).stdout == ""  # only a stop is denied


def test_init_makes_the_files_the_tool_sandbox_would_make_in_the_session(tmp_path: Path) -> None:
    """Gemini CLI 0.61's Linux tool sandbox creates an empty .gitignore and .geminiignore at its
    first command where they are missing; made by init, they are no write of the agent's."""
    (tmp_path / ".gitignore").write_text("build/\n")
    install(tmp_path, "gemini-cli", "donegate hook gemini-cli")
    assert set(GEMINI_SANDBOX_FILES) == {".gitignore", ".geminiignore"}
    assert (tmp_path / ".gitignore").read_text() == "build/\n"  # the person's, kept
    assert (tmp_path / ".geminiignore").read_text() == ""
    install(tmp_path, "gemini-cli", "donegate hook gemini-cli")  # again: nothing changes
    assert (tmp_path / ".gitignore").read_text() == "build/\n"
    assert installed(tmp_path, "gemini-cli") == [
        "SessionStart",
        "BeforeAgent",
        "AfterTool",
        "AfterAgent",
    ]


def test_init_leaves_a_dangling_link_where_a_sandbox_file_would_be(tmp_path: Path) -> None:
    (tmp_path / ".geminiignore").symlink_to(tmp_path / "elsewhere")
    install(tmp_path, "gemini-cli", "donegate hook gemini-cli")
    assert not (tmp_path / "elsewhere").exists()  # never written through the link
    assert (tmp_path / ".gitignore").exists()


def test_other_hosts_get_no_such_files(tmp_path: Path) -> None:
    install(tmp_path, "claude-code", "donegate hook claude-code")
    assert not (tmp_path / ".geminiignore").exists()
    assert not (tmp_path / ".gitignore").exists()


def test_doctor_names_a_missing_sandbox_file_while_the_sandbox_is_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    (home / ".gemini").mkdir(parents=True)
    rules = {str(repo): "TRUST_FOLDER"}  # the project's settings (its sandbox) count
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps(rules))
    monkeypatch.setenv("HOME", str(home))
    for name in [k for k in os.environ if k.startswith("GEMINI_")]:
        monkeypatch.delenv(name)
    install(repo, "gemini-cli", "donegate hook gemini-cli")
    doctor = Doctor(repo, tmp_path / "state", run_checks=False)
    said = [(f.ok, f.what) for f in doctor.host("gemini-cli")]
    assert (True, "gemini-cli: the files its tool sandbox would make are here") in said
    (repo / ".geminiignore").unlink()
    found = [f for f in doctor.host("gemini-cli") if ".geminiignore" in f.what]
    assert [(f.ok, f.fix) for f in found] == [
        (False, "donegate init gemini-cli (makes them, empty)")
    ]
    assert "no .geminiignore: Gemini CLI's tool sandbox makes them" in found[0].what
    settings = repo / ".gemini" / "settings.json"
    settings.write_text(
        settings.read_text().replace('"toolSandboxing": true', '"toolSandboxing": false')
    )
    assert not [
        f
        for f in doctor.host("gemini-cli")
        if "sandbox would make" in f.what or ".geminiignore" in f.what
    ]
