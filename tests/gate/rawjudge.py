"""A judge on a raw loopback socket: the test writes the reply's bytes, as slowly or as many as
it likes (a trickle, an endless body, a gzip bomb), which no ``http.server`` handler lets it do."""

from __future__ import annotations

import socket
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


@dataclass
class Wire:
    """One accepted connection, as the script sees it: write, and know when to stop."""

    conn: socket.socket
    stop: threading.Event
    sent: list[int] = field(default_factory=lambda: [0])

    def write(self, data: bytes) -> bool:
        """Send ``data``; False once the client hung up or the server is stopping."""
        if self.stop.is_set():
            return False
        try:
            self.conn.sendall(data)
        except OSError:  # reset or broken pipe: the client gave up
            return False
        self.sent[0] += len(data)
        return True


Script = Callable[[Wire], None]


@dataclass
class RawJudge:
    """The running server: its base URL and the reply bytes it managed to send."""

    url: str
    sent: list[int]


@contextmanager
def raw_judge(script: Script) -> Iterator[RawJudge]:
    """Answer every request on 127.0.0.1 by running ``script`` on its connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)  # a closed listener does not wake an accept() blocked on it
    stop = threading.Event()
    judge = RawJudge(f"http://127.0.0.1:{listener.getsockname()[1]}", [0])
    thread = threading.Thread(target=_serve, args=(listener, script, stop, judge), daemon=True)
    thread.start()
    try:
        yield judge
    finally:
        stop.set()
        listener.close()
        thread.join(timeout=10)


def _serve(listener: socket.socket, script: Script, stop: threading.Event, judge: RawJudge) -> None:
    while not stop.is_set():
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        except OSError:  # the listener was closed: the block ended
            return
        conn.settimeout(None)
        with conn:
            _read_request(conn)
            script(Wire(conn, stop, judge.sent))
            with suppress(OSError):
                conn.shutdown(socket.SHUT_WR)


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.lower().split(b"\r\n")
        if line.startswith(b"content-length:")
    )
    while len(body) < length:
        body += conn.recv(65536)


def trickle(reply: bytes, pause_s: float, whole: bool) -> Script:
    """Send ``reply`` (a full response) one byte every ``pause_s``: its body, or all of it."""

    def script(wire: Wire) -> None:
        head, _, body = reply.partition(b"\r\n\r\n")
        slow = reply if whole else body
        if not whole and not wire.write(head + b"\r\n\r\n"):
            return
        for i in range(len(slow)):
            if not wire.write(slow[i : i + 1]):
                return
            wire.stop.wait(pause_s)

    return script


def at_once(reply: bytes) -> Script:
    """Send ``reply`` (a full response) in one write."""

    def script(wire: Wire) -> None:
        wire.write(reply)

    return script


def endless(limit: int, gzip: bool = False) -> Script:
    """A body with no length that stops only after ``limit`` bytes (decoded) or a hang-up.

    With ``gzip``, the body is a stream of zeros compressed about a thousand to one.
    """

    def script(wire: Wire) -> None:
        encoding = b"Content-Encoding: gzip\r\n" if gzip else b""
        if not wire.write(HEAD + encoding + b"Connection: close\r\n\r\n"):
            return
        block = b"x" * 65536
        packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS) if gzip else None
        for _ in range(limit // len(block)):
            data = packer.compress(bytes(len(block))) if packer else block
            if data and not wire.write(data):
                return

    return script


def response(body: bytes) -> bytes:
    """A complete HTTP/1.1 200 response carrying ``body``."""
    return HEAD + f"Content-Length: {len(body)}\r\n\r\n".encode() + body
