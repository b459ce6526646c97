"""A small web application with state, served on loopback in a thread: the world a browser agent
changes and the ``x-dom_assertion`` check reads.

``/settings`` renders the display name held in the store; a ``POST`` to it (form-encoded
``display_name=...``) changes it, as an agent's click on Save would. ``/posting`` is a page whose
scripts try every way to write on load (fetch, XHR, a beacon, a keepalive fetch, a WebSocket);
``/submitting`` also submits a form. ``/lying`` shows the stored name while its scripts replace
the DOM's functions to tell other scripts the new one. ``/hang`` never answers; ``/gone`` answers
404. Every request is logged, with the wall-clock time it arrived.
"""

from __future__ import annotations

import html
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OLD_NAME = "Ada Lovelace"
NEW_NAME = "Grace Hopper"
HIJACKED = "hijacked by a script"

SETTINGS_PAGE = """<!DOCTYPE html><html><head><title>Settings</title></head><body>
<h1>Settings</h1>
<form method="post" action="/settings">
  <label>Display name <input name="display_name" value="{name}"></label>
  <button id="save">Save</button>
</form>
<p>Shown to others as
  <span id="display-name" data-value="{name}">  {name}  </span>
</p>
<ul class="item"><li>one</li></ul><ul class="item"><li>two</li></ul>
</body></html>"""

# Every way a script can try to write when the page loads, each to the store's endpoint.
POSTING_PAGE = """<!DOCTYPE html><html><head><title>Posting</title></head><body>
<p id="display-name">{name}</p>
<form id="f" method="post" action="/settings">
  <input name="display_name" value="{hijacked}">
</form>
<script>
var body = "display_name=" + encodeURIComponent("{hijacked}");
var form = {{"Content-Type": "application/x-www-form-urlencoded"}};
fetch("/settings", {{method: "POST", headers: form, body: body}});
fetch("/settings", {{method: "POST", headers: form, body: body, keepalive: true}});
var xhr = new XMLHttpRequest(); xhr.open("PUT", "/settings"); xhr.send(body);
navigator.sendBeacon("/settings", new Blob([body], {{type: "application/x-www-form-urlencoded"}}));
try {{ new WebSocket("ws://" + location.host + "/settings"); }} catch (e) {{}}
{submit}
</script></body></html>"""


# A page that shows the stored name and has its scripts lie about it to any script that asks.
LYING_PAGE = """<!DOCTYPE html><html><body><span id="display-name" data-value="{name}">{name}</span>
<script>
Object.defineProperty(HTMLElement.prototype, "innerText", {{get() {{ return "{claimed}"; }}}});
Element.prototype.getAttribute = function () {{ return "{claimed}"; }};
Document.prototype.querySelectorAll = function () {{ return []; }};
</script></body></html>"""


@dataclass
class App:
    """The running application: its base URL, its store and its request log."""

    url: str
    name: str = OLD_NAME
    log: list[tuple[str, str, int]] = field(default_factory=list)  # method, path, time_ns
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def writes(self) -> list[tuple[str, str]]:
        """Every request that reached the application with a method other than GET or HEAD."""
        with self.lock:
            return [(m, p) for m, p, _ in self.log if m not in ("GET", "HEAD")]

    def served_at(self, path: str) -> list[int]:
        """When each GET of ``path`` arrived (wall clock, nanoseconds)."""
        with self.lock:
            return [t for m, p, t in self.log if m == "GET" and p == path]

    def save(self, name: str) -> None:
        """The agent's write: the form's POST, as a click on Save sends it."""
        data = urllib.parse.urlencode({"display_name": name}).encode()
        with urllib.request.urlopen(f"{self.url}/settings", data=data, timeout=10) as reply:
            assert reply.status == 200


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *_: object) -> None:
        return None

    def _logged(self) -> App:
        app = self.server.app
        with app.lock:
            app.log.append((self.command, self.path, time.time_ns()))
        return app

    def do_GET(self) -> None:
        app = self._logged()
        if self.path == "/settings":
            self._page(SETTINGS_PAGE.format(name=html.escape(app.name)))
        elif self.path in ("/posting", "/submitting"):
            submit = 'document.getElementById("f").submit();' if "submit" in self.path else ""
            name = html.escape(app.name)
            self._page(POSTING_PAGE.format(name=name, hijacked=HIJACKED, submit=submit))
        elif self.path == "/lying":
            self._page(LYING_PAGE.format(name=html.escape(app.name), claimed=NEW_NAME))
        elif self.path == "/hang":
            app.stop.wait(60)  # never answers while the test runs
        elif self.path == "/gone":
            self._page("<p id='display-name'>gone</p>", status=404)
        else:
            self._page("", status=404)

    def do_POST(self) -> None:
        app = self._logged()
        length = int(self.headers.get("Content-Length") or 0)
        fields = urllib.parse.parse_qs(self.rfile.read(length).decode())
        if self.path == "/settings" and "display_name" in fields:
            with app.lock:
                app.name = fields["display_name"][0]
            self.send_response(303)
            self.send_header("Location", "/settings")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._page("", status=400)

    do_PUT = do_POST

    def _page(self, text: str, status: int = 200) -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    app: App


@contextmanager
def running() -> Iterator[App]:
    """The application on 127.0.0.1, until the block ends."""
    server = _Server(("127.0.0.1", 0), _Handler)
    app = App(f"http://127.0.0.1:{server.server_address[1]}")
    server.app = app
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield app
    finally:
        app.stop.set()
        server.shutdown()
        server.server_close()
