"""A scripted model behind Anthropic's Messages API, streamed, on loopback: what a real host
program talks to in the conformance tests, in place of a real model.

The script is a function of the conversation so far (the request's ``messages``); it answers
with text or one tool call. Requests without tools (titles, summaries) get a plain "ok". Every
request is kept, so a test can check what reached the model. A host that runs subagents sends
their conversations to the same server: :func:`serving_requests` hands the script the whole
request (system prompt, tools), which tells them apart.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# One answer: ("text", words) or ("tool", name, input).
Answer = tuple[Any, ...]
Script = Callable[[list[dict[str, Any]]], Answer]
# A script of the whole request: ``system``, ``tools`` and ``messages``.
RequestScript = Callable[[dict[str, Any]], Answer]


class Model:
    """The server's state: its script and every request it was sent."""

    def __init__(
        self, script: Script | None = None, *, request_script: RequestScript | None = None
    ) -> None:
        self.script = script
        self.request_script = request_script
        self.requests: list[dict[str, Any]] = []
        self.calls = 0
        # A host's subagents talk to the model while their parent waits, or beside it.
        self.lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> tuple[Answer, int]:
        """The script's answer to one request, and the request's number (from 1)."""
        with self.lock:
            self.requests.append(body)
            self.calls += 1
            call = self.calls
        if not body.get("tools"):
            return ("text", "ok"), call
        if self.request_script is not None:
            return self.request_script(body), call
        assert self.script is not None, "a model needs a script"
        return self.script(body["messages"]), call

    def seen(self, text: str) -> bool:
        """Whether ``text`` reached the model in any request's messages."""
        return any(text in json.dumps(r.get("messages", [])) for r in self.requests)


def _events(answer: Answer, model: str, call: int) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": f"msg_{call}", "type": "message", "role": "assistant", "model": model}
    start: dict[str, Any] = {**message, "content": [], "stop_reason": None, "usage": usage}
    yield "message_start", {"type": "message_start", "message": start}
    if answer[0] == "text":
        block: dict[str, Any] = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": answer[1]}
        stop = "end_turn"
    else:
        block = {"type": "tool_use", "id": f"toolu_{call}", "name": answer[1], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(answer[2])}
        stop = "tool_use"
    yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
    yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    end = {"stop_reason": stop, "stop_sequence": None}
    yield "message_delta", {"type": "message_delta", "delta": end, "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}


def _handler(model: Model) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if "count_tokens" in self.path:
                self._json({"input_tokens": 10})
                return
            answer, call = model.answer(body)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            for name, data in _events(answer, body.get("model", "claude"), call):
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

        def _json(self, data: dict[str, Any]) -> None:
            out = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    return Handler


@contextmanager
def serving(script: Script) -> Iterator[tuple[Model, str]]:
    """The model and its base URL, for as long as the block runs."""
    with _serving(Model(script)) as served:
        yield served


@contextmanager
def serving_requests(script: RequestScript) -> Iterator[tuple[Model, str]]:
    """As :func:`serving`, for a script that reads the whole request (one that waits holds only
    its own request: the server answers each on a thread of its own)."""
    with _serving(Model(request_script=script)) as served:
        yield served


@contextmanager
def _serving(model: Model) -> Iterator[tuple[Model, str]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(model))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
