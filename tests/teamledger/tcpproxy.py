"""A TCP proxy on loopback for the team ledger's fault tests, run as its own process.

``python tcpproxy.py PORT [MARKER]`` forwards a free loopback port (printed on the first line of
its output) to ``127.0.0.1:PORT``. With ``MARKER``, the proxy stops itself (SIGSTOP) when a
client sends bytes holding it, before passing them on: a server that froze mid-conversation, at
a statement the test chose, while the kernel still accepts and acknowledges every packet.
"""

from __future__ import annotations

import os
import selectors
import signal
import socket
import sys


def main(target: int, marker: bytes) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    events = selectors.DefaultSelector()
    events.register(listener, selectors.EVENT_READ)
    peers: dict[socket.socket, socket.socket] = {}
    while True:
        for key, _ in events.select():
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if sock is listener:
                _accept(listener, target, events, peers)
            else:
                _forward(sock, peers, events, marker)


def _accept(
    listener: socket.socket,
    target: int,
    events: selectors.BaseSelector,
    peers: dict[socket.socket, socket.socket],
) -> None:
    client, _ = listener.accept()
    server = socket.create_connection(("127.0.0.1", target))
    peers[client], peers[server] = server, client
    events.register(client, selectors.EVENT_READ)
    events.register(server, selectors.EVENT_READ)


def _forward(
    sock: socket.socket,
    peers: dict[socket.socket, socket.socket],
    events: selectors.BaseSelector,
    marker: bytes,
) -> None:
    other = peers[sock]
    data = sock.recv(65536)
    if not data:  # one side left: the other goes too
        for end in (sock, other):
            events.unregister(end)
            peers.pop(end, None)
            end.close()
        return
    if marker and marker in data:
        os.kill(os.getpid(), signal.SIGSTOP)
    other.sendall(data)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2].encode() if len(sys.argv) > 2 else b"")
