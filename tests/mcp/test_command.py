"""``donegate mcp`` as a command: its help teaches the setup, and the CLI does not load the SDK
until the server starts."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import contextlib, io, json, sys
from donegate.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    codes = [main(["--help"]), main(["mcp", "--help"])]
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "mcp")
print(json.dumps([codes, out.getvalue(), loaded]))
"""


def test_help_and_the_command_list_load_no_mcp_module() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    codes, said, loaded = json.loads(done.stdout)
    assert codes == [0, 0]
    assert "mcp" in said.split("Commands:")[1]
    assert loaded == []


def test_help_says_what_it_offers_what_it_cannot_do_and_how_to_set_it_up() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "donegate", "mcp", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    said = done.stdout
    for tool in ("collect(claim)", "verify(claim, now?)", "latest_receipt(workspace?)"):
        assert tool in said
    assert "What it cannot do: stop the agent." in " ".join(said.split())
    snippet = json.loads(said[said.index("{") : said.rindex("}") + 1])
    assert snippet == {
        "mcpServers": {
            "donegate": {
                "command": "donegate",
                "args": ["mcp", "--config", "/path/to/project/donegate.toml"],
            }
        }
    }
