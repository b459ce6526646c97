"""HTTP requests that end by a deadline and read at most a capped body.

httpx's timeouts bound each socket operation, so a server that sends a byte a second keeps a
request alive forever. Here every socket a request opens is recorded (through httpcore's
``trace`` extension) and shut down when the deadline passes, which ends any read blocked on it;
the body is read in chunks and never past ``max_bytes``.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from donegate.checks._deadline import Deadline, DeadlineExceeded

if TYPE_CHECKING:
    import httpx

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
# The most a configuration may ask for: a body is held in memory whole.
MAX_BODY_BYTES_LIMIT = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Fetched:
    """A response's status and headers, and its body up to the cap."""

    status: int
    headers: httpx.Headers
    body: bytes
    truncated: bool
    redirect_to: str | None = None

    @property
    def text(self) -> str:
        """The body as text (UTF-8, undecodable bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")


@dataclass
class SocketWatch:
    """Shuts down every socket it saw once ``deadline`` passes; use as a context manager."""

    deadline: Deadline
    _sockets: list[socket.socket] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _timer: threading.Timer | None = None

    def __enter__(self) -> SocketWatch:
        self._timer = threading.Timer(self.deadline.remaining(), self._shut_all)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's trace hook: remember the socket of each new (or TLS-wrapped) stream."""
        if event.endswith((".connect_tcp.complete", ".start_tls.complete")):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                with self._lock:
                    self._sockets.append(sock)
            if self.deadline.expired():
                self._shut_all()

    def _shut_all(self) -> None:
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):  # already closed
                    sock.shutdown(socket.SHUT_RDWR)  # wakes a recv blocked in another thread


def fetch(
    client: httpx.Client,
    request: tuple[str, str, dict[str, str]],
    watch: SocketWatch,
    max_bytes: int,
) -> Fetched:
    """``request`` (method, URL, headers) through ``client``, ended by ``watch``'s deadline.

    Raises :class:`DeadlineExceeded` when the deadline passes first, and ``httpx.HTTPError``
    for any other failure.
    """
    import httpx

    deadline = watch.deadline
    if deadline.expired():
        raise deadline.exceeded("the request")
    method, url, headers = request
    extensions = {"trace": watch.trace}
    timeout = httpx.Timeout(max(deadline.remaining(), 0.001))
    try:
        with client.stream(
            method, url, headers=headers, timeout=timeout, extensions=extensions
        ) as response:
            body, truncated = _capped_body(response, max_bytes, deadline)
            if deadline.expired():
                # Shutting the socket at the deadline ends a body without a length as if it
                # were complete: what was read by then is not the answer.
                raise deadline.exceeded("the request")
            location = response.headers.get("location", "") if response.is_redirect else None
            return Fetched(response.status_code, response.headers, body, truncated, location)
    except httpx.HTTPError:
        if deadline.expired():
            raise deadline.exceeded("the request") from None
        raise


def _capped_body(
    response: httpx.Response, max_bytes: int, deadline: Deadline
) -> tuple[bytes, bool]:
    parts: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        if deadline.expired():
            raise deadline.exceeded("the request")
        parts.append(chunk[: max_bytes - size])
        size += len(chunk)
        if size > max_bytes:
            return b"".join(parts), True
    return b"".join(parts), False


__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "MAX_BODY_BYTES_LIMIT",
    "DeadlineExceeded",
    "Fetched",
    "SocketWatch",
    "fetch",
]
