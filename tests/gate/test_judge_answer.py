"""The judge's answer read strictly: a key given twice is refused, the providers' documented
content shapes (OpenAI's text or parts, Anthropic's blocks) are read, and no answer, however
nested or fenced, crashes or stalls the stop.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from donegate.demo.scripted_judge import Reply, anthropic_reply, openai_reply, serving
from donegate.gate.judge_answer import JudgeFailure, parse_answer
from donegate.gate.judge_client import ask
from donegate.gate.judge_config import JudgeConfig
from tests.gate.judging import DONE, assert_judge_error, decide


def test_a_duplicate_verdict_in_the_answer_is_refused(tmp_path: Path) -> None:
    twice = '{"verdict": "continue", "detail": "tests are fitted", "verdict": "done"}'
    with serving([openai_reply(twice)]) as judge:
        decision = decide(tmp_path, judge.url)
    assert_judge_error(decision, "malformed")
    assert decision.judge is not None
    assert "verdict" in (decision.judge.error or "")


def test_a_duplicate_key_in_the_response_body_is_refused(tmp_path: Path) -> None:
    veto = {"verdict": "continue", "detail": "tests are fitted", "gap_class": "other"}
    first, last = ({"role": "assistant", "content": json.dumps(a)} for a in (veto, DONE))
    body = f'{{"choices": [{{"message": {json.dumps(first)}, "message": {json.dumps(last)}}}]}}'
    with serving([Reply(200, body)]) as judge:
        decision = decide(tmp_path, judge.url)
    assert_judge_error(decision, "malformed")


def test_a_deeply_nested_body_is_malformed_not_a_crash(tmp_path: Path) -> None:
    with serving([Reply(200, "[" * 200_000 + "]" * 200_000)]) as judge:
        decision = decide(tmp_path, judge.url)
    assert_judge_error(decision, "malformed")


def _with_content(content: list[dict[str, Any]]) -> Reply:
    body = json.loads(openai_reply("").body)
    body["choices"][0]["message"]["content"] = content
    return Reply(200, json.dumps(body))


def test_openai_content_in_text_parts_is_read(tmp_path: Path) -> None:
    """OpenAI's chat message content may be a list of parts; the text parts are the answer."""
    text = json.dumps({"verdict": "continue", "detail": "no test", "gap_class": "other"})
    halves = _with_content(
        [
            {"type": "thinking", "thinking": "not the answer"},
            {"type": "text", "text": text[:20]},
            {"type": "text", "text": text[20:]},
        ]
    )
    with serving([halves]) as judge:
        decision = decide(tmp_path, judge.url)
    assert decision.reason == "judge_continue"
    assert "[other] no test" in (decision.message or "")


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ([{"type": "refusal", "refusal": "I can't help with that."}], "refused"),
        ([{"type": "text", "text": 3}], "malformed"),
        ([], "malformed"),
        ([{"type": "image_url", "image_url": {"url": "x"}}], "malformed"),
    ],
    ids=["refusal_part", "text_not_text", "no_parts", "no_text_part"],
)
def test_openai_parts_without_usable_text_fail(
    tmp_path: Path, content: list[dict[str, Any]], kind: str
) -> None:
    with serving([_with_content(content)]) as judge:
        decision = decide(tmp_path, judge.url)
    assert_judge_error(decision, kind)


def test_anthropic_text_blocks_are_joined_and_others_skipped(tmp_path: Path) -> None:
    body = json.loads(anthropic_reply(DONE).body)
    text = body["content"][0]["text"]
    body["content"] = [
        {"type": "thinking", "thinking": "hmm", "signature": "x"},
        {"type": "text", "text": text[:10]},
        {"type": "text", "text": text[10:]},
    ]
    with serving([Reply(200, json.dumps(body))]) as judge:
        answer = ask(JudgeConfig("anthropic", "m", base_url=judge.url), "s", "p")
    assert json.loads(answer) == DONE


def test_a_fence_of_whitespace_is_read_at_once() -> None:
    """The fence is taken off by slicing: a backtracking pattern took 55 s on 4,000 spaces."""
    script = (
        "from donegate.gate.judge_answer import JudgeFailure, parse_answer\n"
        "try:\n"
        "    parse_answer('```' + ' ' * 50_000 + 'x', frozenset())\n"
        "except JudgeFailure as exc:\n"
        "    print(exc.kind)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.strip() == "malformed", done.stderr


def test_a_fenced_answer_is_still_read() -> None:
    fenced = "  ```json\n" + json.dumps(DONE) + "\n```  \n"
    assert parse_answer(fenced, frozenset()).verdict == "done"
    with pytest.raises(JudgeFailure, match="malformed"):
        parse_answer("```" + json.dumps(DONE), frozenset())
