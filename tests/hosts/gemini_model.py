"""A scripted model behind the Gemini API, on loopback: what the real Gemini CLI talks to in the
conformance tests, in place of Google's servers (``GOOGLE_GEMINI_BASE_URL``).

The CLI streams its turns from ``models/NAME:streamGenerateContent?alt=sse``; the script, a
function of the request (its ``contents`` and the tools it declares), answers each with text or
one function call. Its side requests get what they ask for: ``countTokens`` a count, a plain
``generateContent`` (a classifier or a check that wants JSON) an empty JSON object, a model
listing none, anything else an empty object. Every request is kept, so a test can check what
reached the model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# One answer: ("text", words) or ("tool", name, args).
Answer = tuple[Any, ...]
Script = Callable[["Turn"], Answer]
USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


class Turn:
    """One streamed request, as the script reads it."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body
        self.contents: list[dict[str, Any]] = body.get("contents", [])

    @property
    def tools(self) -> set[str]:
        """The names of the functions the request declares."""
        return {
            f.get("name", "")
            for tool in self.body.get("tools", [])
            for f in tool.get("functionDeclarations", [])
        }

    def calls(self, name: str) -> int:
        """How many calls of ``name`` the model made in this conversation."""
        return sum(
            1
            for content in self.contents
            for part in content.get("parts", [])
            if part.get("functionCall", {}).get("name") == name
        )

    def calls_since(self, index: int) -> int:
        """How many function calls the model made after content ``index``."""
        return sum(
            1
            for content in self.contents[index + 1 :]
            for part in content.get("parts", [])
            if "functionCall" in part
        )

    def prompts(self) -> list[int]:
        """The indices of the user contents that carry text: the prompt, then each text the
        CLI sent on its own (a stop hook's reason); tool results are not among them."""
        return [
            index
            for index, content in enumerate(self.contents)
            if content.get("role") == "user"
            and any("text" in part for part in content.get("parts", []))
        ]


class Model:
    """The server's state: its script and every request it was sent, by path."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()

    @property
    def turns(self) -> list[dict[str, Any]]:
        """The bodies of the streamed requests (the agent's turns), in order."""
        return [body for path, body in self.requests if "streamGenerateContent" in path]

    def seen(self, text: str) -> bool:
        """Whether ``text`` reached the model in any streamed request's contents."""
        return any(text in json.dumps(body.get("contents", [])) for body in self.turns)


def _chunks(answer: Answer) -> Iterator[dict[str, Any]]:
    if answer[0] == "text":
        part: dict[str, Any] = {"text": answer[1]}
    else:
        part = {"functionCall": {"name": answer[1], "args": answer[2]}}
    content = {"role": "model", "parts": [part]}
    yield {"candidates": [{"content": content, "index": 0}]}
    last = {"role": "model", "parts": [{"text": ""}]}
    finished = {"content": last, "finishReason": "STOP", "index": 0}
    yield {"candidates": [finished], "usageMetadata": USAGE}


def _handler(model: Model) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            with model.lock:
                model.requests.append((self.path, {}))
            self._json({"models": []})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0) or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            with model.lock:
                model.requests.append((self.path, body))
            if "streamGenerateContent" in self.path:
                self._stream(model.script(Turn(body)))
            elif ":countTokens" in self.path:
                self._json({"totalTokens": 10})
            elif ":generateContent" in self.path:
                reply = {"role": "model", "parts": [{"text": "{}"}]}
                done = {"content": reply, "finishReason": "STOP", "index": 0}
                self._json({"candidates": [done], "usageMetadata": USAGE})
            else:
                self._json({})

        def _stream(self, answer: Answer) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            for chunk in _chunks(answer):
                self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
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
    model = Model(script)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(model))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
