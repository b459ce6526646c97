"""A scripted judge: a real HTTP server on loopback that speaks the providers' chat protocols.

It answers ``POST .../chat/completions`` (OpenAI-compatible) and ``POST .../v1/messages``
(Anthropic) with replies given in advance, in order, and records every request it got. The demo
uses it to show a judge without a model or a network; the tests use it to play every answer a
provider can give (a verdict, a refusal, a 5xx, a slow reply, a body that is not the protocol).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted reply: status, raw body, and how long to wait before sending it."""

    status: int = 200
    body: str = ""
    delay_s: float = 0.0


def openai_reply(answer: dict[str, Any] | str, **message: Any) -> Reply:
    """A chat completion whose message content is ``answer`` (a dict is sent as JSON text)."""
    content = answer if isinstance(answer, str) else json.dumps(answer)
    body = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **message},
                "finish_reason": "stop",
            }
        ],
    }
    return Reply(200, json.dumps(body))


def anthropic_reply(answer: dict[str, Any] | str, stop_reason: str = "end_turn") -> Reply:
    """A Messages API response whose one text block is ``answer``."""
    text = answer if isinstance(answer, str) else json.dumps(answer)
    body = {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": "scripted",
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
    }
    return Reply(200, json.dumps(body))


@dataclass
class Request:
    """One request the server got."""

    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ScriptedJudge:
    """The running server: its base URL, the replies still to give, the requests it got."""

    url: str
    replies: list[Reply]
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_reply(self, request: Request) -> Reply:
        with self.lock:
            self.requests.append(request)
            if not self.replies:
                return Reply(500, '{"error": "the script has no more replies"}')
            return self.replies.pop(0)


@contextmanager
def serving(replies: list[Reply] | None = None) -> Iterator[ScriptedJudge]:
    """Serve ``replies`` in order on 127.0.0.1 until the block ends."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    judge = ScriptedJudge(f"http://127.0.0.1:{httpd.server_address[1]}", list(replies or []))
    httpd.scripted = judge  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield judge
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        judge: ScriptedJudge = self.server.scripted  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = judge.next_reply(Request(self.path, headers, body))
        time.sleep(reply.delay_s)
        data = reply.body.encode()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (a timeout test): nothing left to say
            return

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return
