"""A scripted model behind OpenAI's Responses API, streamed, on loopback: what Codex CLI talks to
in the conformance tests, in place of a real model.

Codex posts the whole conversation each time (``input``: messages, the model's own calls and
their outputs) and reads a stream of ``response.*`` events: every finished output item arrives as
``response.output_item.done`` and the turn ends with ``response.completed``. The script is a
function of ``input``; it answers with text, one function call (``exec_command``;
``spawn_agent``, named with its namespace: JSON arguments) or one freeform tool call
(``apply_patch``: the patch as its raw input). Every request is kept, so a test can check what
reached the model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# One answer: ("text", words), ("function", name, arguments[, namespace]) or
# ("custom", name, input).
Answer = tuple[Any, ...]
Script = Callable[[list[dict[str, Any]]], Answer]


class Model:
    """The server's state: its script and every request it was sent."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()

    def seen(self, text: str) -> bool:
        """Whether ``text`` reached the model in any request's input."""
        return any(text in json.dumps(r.get("input", [])) for r in self.requests)

    def answer(self, body: dict[str, Any]) -> tuple[int, Answer]:
        with self._lock:
            self.requests.append(body)
            return len(self.requests), self.script(body.get("input", []))


def _item(answer: Answer, call: int) -> dict[str, Any]:
    if answer[0] == "text":
        content = [{"type": "output_text", "text": answer[1], "annotations": []}]
        return {"type": "message", "role": "assistant", "id": f"msg_{call}", "content": content}
    if answer[0] == "function":
        item = {
            "type": "function_call",
            "id": f"fc_{call}",
            "call_id": f"call_{call}",
            "name": answer[1],
            "arguments": json.dumps(answer[2]),
        }
        # A tool inside a namespace (spawn_agent in multi_agent_v1) is called by both names.
        return {**item, "namespace": answer[3]} if len(answer) > 3 else item
    if answer[0] == "custom":
        return {
            "type": "custom_tool_call",
            "id": f"ctc_{call}",
            "call_id": f"call_{call}",
            "name": answer[1],
            "input": answer[2],
        }
    raise ValueError(f"unknown answer {answer[0]!r}: expected text, function or custom")


def events(answer: Answer, call: int) -> Iterator[dict[str, Any]]:
    """The stream of one response: created, its one item, completed."""
    response = {"id": f"resp_{call}", "object": "response", "status": "in_progress"}
    yield {"type": "response.created", "response": response}
    item = _item(answer, call)
    yield {"type": "response.output_item.added", "output_index": 0, "item": item}
    yield {"type": "response.output_item.done", "output_index": 0, "item": item}
    usage = {
        "input_tokens": 10,
        "input_tokens_details": None,
        "output_tokens": 5,
        "output_tokens_details": None,
        "total_tokens": 15,
    }
    done = {**response, "status": "completed", "usage": usage}
    yield {"type": "response.completed", "response": done}


def _handler(model: Model) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            model.paths.append(f"GET {self.path}")
            self._json(404, {"error": {"message": "not served here"}})

        def do_POST(self) -> None:
            model.paths.append(f"POST {self.path}")
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.rstrip("/").endswith("/responses"):
                self._json(404, {"error": {"message": "not served here"}})
                return
            call, answer = model.answer(body)
            stream = "".join(
                f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events(answer, call)
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(stream)))
            self.end_headers()
            self.wfile.write(stream)

        def _json(self, status: int, data: dict[str, Any]) -> None:
            out = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    return Handler


@contextmanager
def serving(script: Script) -> Iterator[tuple[Model, str]]:
    """The model and its base URL (ending in ``/v1``), for as long as the block runs."""
    model = Model(script)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(model))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
