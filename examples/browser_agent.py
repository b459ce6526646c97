"""A browser agent gated by donegate: it may say "saved" only once the page shows the change.

    python examples/browser_agent.py

The application is a real web page on loopback (a profile with a display name and a form); the
agent drives it in the system's headless Chromium (Playwright), as a browser agent does. It is
scripted, so the example runs offline: its first try types the new name into the form and says
it is saved without pressing Save (the page still shows the old name); donegate's x-dom_assertion
check loads the page after the change and reads what it renders, sends the agent back with what
it saw, and the second try types the name, presses Save and verifies.
"""

from __future__ import annotations

import argparse
import html
import shutil
import sys
import tempfile
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from donegate.frameworks import CompletionGate
from donegate.ledger import Ledger

NAME = "Grace Hopper"
TASK = f"Change the profile's display name to {NAME}."
TRIES = [(False, f"Saved: the display name is now {NAME}."), (True, f"Saved {NAME}.")]
CONFIG = """\
[[checks]]
check_type = "x-dom_assertion"
name = "display name on the profile page"
url = "{url}/profile"
selector = "#display-name"
expected = {{ text = "{name}" }}
covers = ["profile/*"]
timeout_s = 60
"""


class Profile:
    """The application's store: one profile."""

    def __init__(self) -> None:
        self.display_name = "Ada Lovelace"
        self.lock = threading.Lock()


@contextmanager
def serving(profile: Profile) -> Iterator[str]:
    """The profile page (GET) and its form's target (POST) on 127.0.0.1; yields the base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/profile":
                self._send(404, "not found")
                return
            with profile.lock:
                name = html.escape(profile.display_name)
            self._send(
                200,
                f"<h1>Profile</h1><p>Display name: <span id='display-name'>{name}</span></p>"
                "<form method='post' action='/profile'>"
                f"<input id='name' name='display_name' value='{name}'>"
                "<button id='save' type='submit'>Save</button></form>",
            )

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = urllib.parse.parse_qs(self.rfile.read(length).decode())
            with profile.lock:
                profile.display_name = form.get("display_name", [""])[0]
            self.send_response(303)
            self.send_header("Location", "/profile")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _send(self, status: int, body: str) -> None:
            data = f"<!doctype html><html><body>{body}</body></html>".encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def browser() -> str | None:
    """The system's Chromium (the example, like the check, never downloads one)."""
    return next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state-dir", type=Path, help="the ledger's directory (default: temp)")
    args = parser.parse_args(argv)
    chromium = browser()
    if chromium is None:
        print("browser_agent: no Chromium on PATH (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    profile = Profile()
    with tempfile.TemporaryDirectory(prefix="donegate-browser-") as tmp, serving(profile) as url:
        config = Path(tmp) / "donegate.toml"
        config.write_text(CONFIG.format(url=url, name=NAME))
        state_dir = args.state_dir or Path(tmp) / "state"
        gate = CompletionGate(config, agent="browser-bot", task=TASK, state_dir=state_dir)
        print(f"task: {TASK}  (profile page at {url}/profile)")
        told: list[str] = []
        with sync_playwright() as driver:
            page = driver.chromium.launch(executable_path=chromium).new_page()

            # The agent's one tool: it acts in the browser, and each use is a change of the
            # profile (recorded once the tool returned).
            @gate.mutation(kind="ui_write", target="profile/display-name")
            def set_display_name(name: str, press_save: bool) -> str:
                page.goto(f"{url}/profile")
                page.fill("#name", name)
                if press_save:
                    page.click("#save")
                    page.wait_for_load_state()
                return f"typed {name!r}" + (" and pressed Save" if press_save else "")

            for press_save, said in TRIES:
                set_display_name(NAME, press_save)
                outcome = gate.check(said)
                if outcome.allowed:
                    break
                told.append(outcome.message or "")  # what the model would be given next
        return report(gate.run.session_id, state_dir, told, profile.display_name)


def report(session: str, state_dir: Path, told: list[str], stored: str) -> int:
    """Each try as the ledger recorded it, what the agent was told when sent back, the end."""
    with Ledger(state_dir) as ledger:
        tries = list(reversed(ledger.recent(50, session=session)))
    retries = iter(told)
    for number, receipt in enumerate(tries, start=1):
        said = receipt.claim.get("claimed_outcome", "(no claim)")
        print(f"try {number}: the agent said {said!r}")
        if receipt.decision == "veto":
            print(f"  sent back ({receipt.reason}); the claim is {receipt.verdict}")
            print(f"  the agent's next turn was given: {next(retries, '(nothing)')}")
        else:
            print(f"  let go: {receipt.verdict} ({receipt.reason})")
        print(f"  receipt {receipt.id}")
    verified = bool(tries) and tries[-1].verdict == "verified"
    print(f"stored display name {stored!r}: ", end="")
    print("VERIFIED" if verified else "NOT verified")
    return 0 if verified else 1


if __name__ == "__main__":
    sys.exit(main())
