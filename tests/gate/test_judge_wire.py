"""The judge's wire against a provider that will not stop, on real loopback sockets: a trickled
answer, an endless body, a gzip bomb. The exchange ends by ``timeout_s`` and the body cap
whatever the provider does, and the stop ends ``completion_judge_error``, never verified.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from donegate.demo.scripted_judge import openai_reply
from donegate.gate.judge_client import MAX_BODY_BYTES, ask
from donegate.gate.judge_config import JudgeConfig
from tests.gate.judging import DONE, assert_judge_error, decide
from tests.gate.rawjudge import at_once, endless, raw_judge, response, trickle

MiB = 1024 * 1024

# --- one deadline for the whole exchange ------------------------------------------------------


@pytest.mark.parametrize("whole", [False, True], ids=["body", "head_and_body"])
def test_a_trickled_done_ends_at_the_deadline_not_verified(tmp_path: Path, whole: bool) -> None:
    """Each byte comes well within a per-read timeout; the exchange as a whole does not."""
    reply = response(openai_reply(DONE).body.encode())
    pause_s = 0.05
    trickle_s = len(reply) * pause_s  # about 16 s
    with raw_judge(trickle(reply, pause_s, whole)) as judge:
        started = time.monotonic()
        decision = decide(tmp_path, judge.url, timeout_s=1)
        elapsed = time.monotonic() - started
    assert_judge_error(decision, "timeout")
    assert judge.sent[0] < len(reply) // 2
    assert elapsed < trickle_s / 2


def test_an_answer_whole_before_the_deadline_counts(tmp_path: Path) -> None:
    """Control: the same server, trickling fast enough, is read to the end and answers done."""
    reply = response(openai_reply(DONE).body.encode())
    with raw_judge(trickle(reply, 0.001, whole=True)) as judge:
        decision = decide(tmp_path, judge.url, timeout_s=30)
    assert decision.reason == "verified_after_write"
    assert decision.source == "judge"
    assert decision.outcome == "verified"


# --- a bounded body ----------------------------------------------------------------------------

# The child measures its own peak memory around one call: the test process's peak is its own.
CHILD = """
import json, resource, sys
from donegate.gate.judge_answer import JudgeFailure
from donegate.gate.judge_client import ask
from donegate.gate.judge_config import JudgeConfig
config = JudgeConfig("openai", "m", base_url=sys.argv[1], timeout_s=60)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    ask(config, "system", "prompt")
    kind = None
except JudgeFailure as exc:
    kind = exc.kind
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"kind": kind, "grew_kib": after - before}))
"""


def call_in_child(url: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, url], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("gzip", [False, True], ids=["endless_body", "gzip_bomb"])
def test_a_body_past_the_cap_is_refused_in_bounded_memory(gzip: bool) -> None:
    """256 MiB offered (compressed to about 256 KiB for the bomb); the client stops at the cap."""
    with raw_judge(endless(256 * MiB, gzip=gzip)) as judge:
        result = call_in_child(judge.url)
    assert result["kind"] == "too_large"
    assert result["grew_kib"] * 1024 < MAX_BODY_BYTES + 32 * MiB
    if not gzip:  # the client hung up at the cap: only the kernel's buffers took more
        assert judge.sent[0] < 64 * MiB


def test_a_body_at_the_cap_is_still_read() -> None:
    """Control: the cap refuses only what passes it; padding up to it is a readable answer."""
    body = openai_reply(DONE).body.encode()
    padded = body[:-1] + b" " * (MAX_BODY_BYTES - len(body)) + b"}"
    with raw_judge(at_once(response(padded))) as judge:
        answer = ask(JudgeConfig("openai", "m", base_url=judge.url), "s", "p")
    assert json.loads(answer) == DONE


def test_an_unusable_url_is_a_transport_failure_not_a_crash(tmp_path: Path) -> None:
    decision = decide(tmp_path, "http://judge\x00.local/v1")
    assert_judge_error(decision, "transport")
