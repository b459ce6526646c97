"""The hooks on a workspace the agent made hostile: FIFOs, /proc, huge files, an early kill.

Every case runs the real ``donegate hook HOST`` process. A hang shows as a subprocess timeout
well under the hang (the hook is given 30 s where the bug held it 60 s and more).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from donegate.demo import project
from donegate.demo.project import git
from donegate.ledger import Ledger, Receipt
from donegate.session.layout import Layout, locked

HANG_TIMEOUT_S = 30
SESSION = "hostile-1"
HOSTS = ["claude-code", "codex", "gemini-cli", "copilot", "cursor"]
# A file far larger than a hook's whole memory (some 60 MB): holding it once crosses the limit,
# whatever the hook's own size. A larger one costs seconds of hashing (git's own reading is the
# slowest) and proves no more.
HUGE = 256 * 1024 * 1024
PEAK_LIMIT = 150 * 1024 * 1024


# A hook call: its payload, and what the host adds to the hook's environment.
Call = tuple[dict[str, Any], dict[str, str]]


def payloads(host: str, repo: Path) -> tuple[Call, Call]:
    """A session start and a stop of ``host`` in ``repo``."""
    if host == "copilot":
        base: dict[str, Any] = {"sessionId": SESSION, "cwd": str(repo), "timestamp": 1}
        start: Call = ({**base, "source": "new"}, {"DONEGATE_HOOK_EVENT": "sessionStart"})
        return start, ({**base, "stopReason": "end_turn"}, {"DONEGATE_HOOK_EVENT": "agentStop"})
    if host == "cursor":
        base = {"conversation_id": SESSION, "workspace_roots": [str(repo)]}
        prompt = {**base, "hook_event_name": "beforeSubmitPrompt", "prompt": "fix it"}
        return (prompt, {}), ({**base, "hook_event_name": "stop", "status": "completed"}, {})
    base = {"session_id": SESSION, "cwd": str(repo)}
    stop_name = "AfterAgent" if host == "gemini-cli" else "Stop"
    stop = {**base, "hook_event_name": stop_name, "stop_hook_active": False}
    return ({**base, "hook_event_name": "SessionStart", "source": "startup"}, {}), (stop, {})


def hook(
    host: str,
    data: dict[str, Any],
    state: Path,
    env: dict[str, str] | None = None,
    wrapper: list[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``donegate hook HOST`` with ``data`` on stdin; raises TimeoutExpired if it hangs."""
    full = {**os.environ, "DONEGATE_STATE_DIR": str(state), **(env or {})}
    return subprocess.run(
        [*(wrapper or []), sys.executable, "-m", "donegate", "hook", host],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        env=full,
        timeout=HANG_TIMEOUT_S,
        check=False,
    )


def receipts(state: Path) -> list[Receipt]:
    with Ledger(state) as ledger:
        return list(reversed(ledger.recent(50)))


def started(tmp_path: Path, host: str = "claude-code") -> tuple[Path, Path]:
    repo, state = project.create(tmp_path / "repo"), tmp_path / "state"
    (start, env), _ = payloads(host, repo)
    assert hook(host, start, state, env).returncode == 0
    return repo, state


def stop(host: str, repo: Path, state: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    _, (data, env) = payloads(host, repo)
    return hook(host, data, state, env, **kw)


@pytest.mark.parametrize("host", HOSTS)
def test_a_fifo_put_in_place_of_a_tracked_file_is_recorded_as_one_never_opened(
    tmp_path: Path, host: str
) -> None:
    repo, state = started(tmp_path, host)
    (repo / "zipcode.py").unlink()
    os.mkfifo(repo / "zipcode.py")  # opening it for reading waits for a writer: forever
    done = stop(host, repo, state)
    assert done.returncode in (0, 2), done.stderr  # 2: a host told to continue by exit code
    assert "Traceback" not in done.stdout + done.stderr
    last = receipts(state)[-1]
    [write] = [w for w in last.decision_doc["writes"] if w["path"] == "zipcode.py"]
    assert (write["change"], write["new_digest"]) == ("modified", "special:fifo")
    assert "special-file" in write["flags"]
    assert last.verdict != "verified"


def test_a_stop_whose_cwd_is_proc_is_refused_as_a_workspace_and_not_verified(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    data = {"session_id": SESSION, "cwd": "/proc", "hook_event_name": "Stop"}
    done = hook("claude-code", {**data, "stop_hook_active": False}, state)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer.get("decision") != "block"
    assert "/proc is not a project directory" in answer["systemMessage"]
    [receipt] = receipts(state)
    assert (receipt.verdict, receipt.decision, receipt.reason) == (
        "unverified",
        "allow",
        "donegate_error",
    )


def peak_rss_bytes(tmp_path: Path) -> tuple[list[str], Path]:
    """A wrapper that runs a command and writes its peak resident memory (its children's
    ``ru_maxrss``, the hook's own since it has no other) to a file."""
    out = tmp_path / "peak"
    code = (
        "import resource, subprocess, sys\n"
        "code = subprocess.call(sys.argv[2:])\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "open(sys.argv[1], 'w').write(str(peak))\n"
        "sys.exit(code)\n"
    )
    return [sys.executable, "-c", code, str(out)], out


def sparse(path: Path, size: int) -> None:
    with path.open("wb") as f:
        f.truncate(size)  # no blocks on disk: reads as zeros


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB is Linux's")
def test_a_huge_untracked_file_is_hashed_in_bounded_memory(tmp_path: Path) -> None:
    repo, state = started(tmp_path)
    sparse(repo / "dump.txt", HUGE)
    wrapper, peak = peak_rss_bytes(tmp_path)
    done = stop("claude-code", repo, state, wrapper=wrapper)
    assert done.returncode == 0, done.stderr
    [write] = receipts(state)[-1].decision_doc["writes"]
    assert (write["path"], write["change"]) == ("dump.txt", "added")
    hashed = subprocess.run(
        ["git", "hash-object", "dump.txt"], cwd=repo, capture_output=True, check=True
    )
    assert write["new_digest"] == hashed.stdout.decode().strip()  # git's own reading of it
    assert int(peak.read_text()) * 1024 < PEAK_LIMIT


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB is Linux's")
def test_a_tracked_file_grown_huge_is_classified_without_being_loaded(tmp_path: Path) -> None:
    repo = project.create(tmp_path / "repo")
    (repo / "notes.md").write_text("# Notes\n")
    git(repo, "add", "notes.md")
    git(repo, "commit", "-qm", "notes")
    state = tmp_path / "state"
    (start, env), _ = payloads("claude-code", repo)
    assert hook("claude-code", start, state, env).returncode == 0
    sparse(repo / "notes.md", HUGE)  # its old text is in git: a comparison would load both
    wrapper, peak = peak_rss_bytes(tmp_path)
    done = stop("claude-code", repo, state, wrapper=wrapper)
    assert done.returncode == 0, done.stderr
    [write] = receipts(state)[-1].decision_doc["writes"]
    assert (write["path"], write["change"], write["kind"]) == ("notes.md", "modified", "doc")
    assert int(peak.read_text()) * 1024 < PEAK_LIMIT


def waiting_for_a_lock(pid: int) -> bool:
    """Whether process ``pid`` is blocked asking for a ``flock`` (the kernel's own list)."""
    with open("/proc/locks") as f:
        return any("->" in line and f" {pid} " in line for line in f)


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs Linux's /proc/locks")
def test_a_stop_killed_before_it_took_the_sessions_lock_is_reported_interrupted(
    tmp_path: Path,
) -> None:
    repo, state = started(tmp_path)
    _, (data, _) = payloads("claude-code", repo)
    full = {**os.environ, "DONEGATE_STATE_DIR": str(state)}
    argv = [sys.executable, "-m", "donegate", "hook", "claude-code"]
    # Another stop of the session holds its lock: this one waits, and is killed waiting.
    with locked(Layout(state).lock(SESSION)):
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, env=full, stdout=subprocess.DEVNULL)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(data).encode())
        proc.stdin.close()
        deadline = time.monotonic() + HANG_TIMEOUT_S
        while not waiting_for_a_lock(proc.pid) and proc.poll() is None:
            assert time.monotonic() < deadline, "the hook never asked for the session's lock"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(HANG_TIMEOUT_S) == -signal.SIGKILL
    after = stop("claude-code", repo, state)
    assert after.returncode == 0, after.stderr
    assert "never finished" in after.stdout  # the person is told, in the host's own terms
    reasons = [r.reason for r in receipts(state)]
    assert reasons[0] == "interrupted"
    assert "pending" not in reasons
    assert list((state / "locks" / "stops").iterdir()) == []  # the dead stop's lock is gone too


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini-cli", "copilot", "cursor"])
def test_a_hook_started_with_its_input_closed_says_so(tmp_path: Path, host: str) -> None:
    env = {**os.environ, "DONEGATE_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run(
        [sys.executable, "-m", "donegate", "hook", host],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
        preexec_fn=lambda: os.close(0),
    )
    assert done.returncode == 0
    assert "standard input is closed" in done.stdout + done.stderr
    assert "AttributeError" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
