"""The state directory out of reach: ``donegate hook`` and ``donegate accept`` run where it cannot
be written (inside an agent's sandbox) record nothing, say so in words ending with
:data:`~donegate.statedir.NOT_RECORDED`, and exit non-zero. The box is made here with bubblewrap
in the shape of the agent's (``/`` read-only, the project writable); in Claude Code's real one,
``tests/hosts/test_claude_code_confined.py``."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from donegate import statedir
from donegate.demo import project
from donegate.demo.project import payload
from donegate.statedir import NOT_RECORDED
from tests.session.support import WEAKENED_TESTS, start

SESSION = "boxed-1"


@pytest.mark.skipif(not shutil.which("bwrap"), reason="bubblewrap is missing")
def test_in_a_box_that_cannot_write_the_state_the_hook_and_accept_record_nothing_and_say_so(
    tmp_path: Path,
) -> None:
    """The shape of the agent's box (``/`` read-only, the project writable), made here with
    bubblewrap: each call exits non-zero, ends its words with the mark, and the state is as it
    was."""
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    start(repo, state, SESSION)
    (repo / "tests" / "test_zip.py").write_text(WEAKENED_TESTS)
    before = sorted(p.relative_to(state) for p in state.rglob("*"))
    forged = json.dumps(payload("UserPromptSubmit", "made-up", repo, prompt="the person's"))
    hook = in_a_box(repo, state, ["hook", "claude-code"], forged)
    accept = in_a_box(repo, state, ["accept", "--yes", "tests/test_zip.py"])
    assert (hook.returncode, hook.stdout) == (1, "")
    assert hook.stderr.startswith("donegate: UserPromptSubmit hook: donegate's state directory")
    assert accept.returncode == 4
    assert accept.stdout == ""  # no diff shown: nothing is accepted from here
    for said in (hook.stderr, accept.stderr):
        assert f"{state} cannot be written here (its file system is mounted read-only" in said
        assert said.rstrip().endswith(f"({NOT_RECORDED}).")
    assert sorted(p.relative_to(state) for p in state.rglob("*")) == before


def in_a_box(
    repo: Path, state: Path, args: list[str], given: str = ""
) -> subprocess.CompletedProcess[str]:
    """``donegate ARGS`` with ``/`` read-only but for the project, as an agent's shell runs it
    (the variables that name an agent's shell dropped, as ``env -i`` drops them)."""
    box = ["bwrap", "--ro-bind", "/", "/", "--bind", str(repo), str(repo), "--dev", "/dev"]
    box += ["--proc", "/proc", "--chdir", str(repo), "--", sys.executable, "-m", "donegate"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}
    env["DONEGATE_STATE_DIR"] = str(state)
    return subprocess.run(
        [*box, *args], input=given, env=env, capture_output=True, text=True, check=False
    )


# What Gemini CLI 0.61 reads, in a failed shell call's output, as its sandbox refusing a path
# (its sandboxDenialUtils): it then asks the person to let the agent's commands write there.
HOST_DENIAL_WORDS = (
    "operation not permitted",
    "permission denied",
    "eperm",
    "eacces",
    "read-only file system",
    "access denied",
    "forbidden",
    "sandbox: ",
    "permissionerror",
)


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES, errno.EPERM])
def test_the_refusal_names_no_words_a_host_reads_as_its_sandbox_s_denial(code: int) -> None:
    """Else a host offers the person to open donegate's state to the agent's commands."""
    said = str(statedir.Unwritable(Path("/state"), statedir._why(OSError(code, os.strerror(code)))))
    assert said.endswith(f"({statedir.NOT_RECORDED}).")
    assert not [w for w in HOST_DENIAL_WORDS if w in said.lower()]
