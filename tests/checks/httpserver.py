"""A real HTTP server on loopback, in a thread, whose answers a test can change while it runs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
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


Route = Callable[[], Reply]


@dataclass
class Server:
    """The running server: its base URL, its routes, and how often each path was asked."""

    url: str
    routes: dict[str, Route]
    hits: dict[str, int] = field(default_factory=dict)


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
        body = reply.body.encode()
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        return
