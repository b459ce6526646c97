"""A real HTTP server on loopback, in a thread, whose answers a test can change while it runs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    """What the server answers on one path."""

    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    # A body sent chunk by chunk, ``pause_s`` apart, with no length: it ends when the chunks do
    # or the client hangs up. ``trickle_head`` sends the status line and headers that way too.
    stream: Iterable[bytes] | None = None
    pause_s: float = 0.0
    trickle_head: bool = False


Route = Callable[[], Reply]


@dataclass
class Server:
    """The running server: its base URL, its routes, and how often each path was asked."""

    url: str
    routes: dict[str, Route]
    hits: dict[str, int] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)  # body bytes written, per path
    hung_up: threading.Event = field(default_factory=threading.Event)  # a client closed mid-reply


@contextmanager
def serving(routes: dict[str, Route]) -> Iterator[Server]:
    """Serve ``routes`` (path -> reply factory) on 127.0.0.1 until the block ends."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    server = Server(f"http://127.0.0.1:{httpd.server_address[1]}", routes)
    httpd.donegate_server = server  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        server: Server = self.server.donegate_server  # type: ignore[attr-defined]
        server.hits[self.path] = server.hits.get(self.path, 0) + 1
        route = server.routes.get(self.path)
        reply = route() if route else Reply(404, "not found")
        time.sleep(reply.delay_s)
        if reply.stream is not None:
            try:
                self._stream(server, reply)
            except OSError:  # the client hung up (reset or broken pipe)
                server.hung_up.set()
            return
        body = reply.body.encode()
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, server: Server, reply: Reply) -> None:
        assert reply.stream is not None
        head = f"HTTP/1.0 {reply.status} OK\r\nContent-Type: application/json\r\n\r\n".encode()
        pieces = [head[i : i + 2] for i in range(0, len(head), 2)] if reply.trickle_head else [head]
        for piece in pieces:
            self._send(piece, reply.pause_s)
        for chunk in reply.stream:
            self._send(chunk, reply.pause_s)
            server.sent[self.path] = server.sent.get(self.path, 0) + len(chunk)

    def _send(self, data: bytes, pause_s: float) -> None:
        self.wfile.write(data)
        self.wfile.flush()
        time.sleep(pause_s)

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        return
