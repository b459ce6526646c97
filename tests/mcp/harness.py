"""A real ``donegate mcp`` process, spoken to by the MCP SDK's own stdio client.

Every test starts the server as a client would (``python -m donegate mcp``, with its own
configuration and state directory) and calls its tools over standard input and output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, Implementation, TextContent

T = TypeVar("T")
CLIENT = Implementation(name="donegate-tests", version="1.0")
DEADLINE_S = 120  # a whole session: start, a few calls (a pytest run among them), close


@dataclass(frozen=True)
class Server:
    """How to start one server: its configuration, state directory and working directory."""

    config: Path
    state: Path
    cwd: Path

    def run(self, talk: Callable[[ClientSession], Awaitable[T]]) -> T:
        """Start the server, initialise a session, let ``talk`` use it, and close it."""

        async def main() -> T:
            with anyio.fail_after(DEADLINE_S):
                async with self.session() as session:
                    return await talk(session)

        return anyio.run(main)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[ClientSession]:
        params = StdioServerParameters(
            command=sys.executable,
            args=[
                "-m",
                "donegate",
                "mcp",
                "--config",
                str(self.config),
                "--state-dir",
                str(self.state),
            ],
            cwd=self.cwd,
        )
        with (self.state.parent / "server-stderr.log").open("a") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, client_info=CLIENT) as session,
            ):
                await session.initialize()
                yield session


def text(result: CallToolResult) -> str:
    """The result's text content, all of it."""
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def answer(result: CallToolResult) -> dict[str, Any]:
    """A successful call's JSON answer (structured, and the same in its text)."""
    assert not result.is_error, text(result)
    content = result.structured_content
    assert isinstance(content, dict)
    assert json.loads(text(result)) == content
    return content


async def call(session: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    """Call ``tool`` with ``arguments``."""
    return await session.call_tool(tool, arguments)


def receipts(state: Path) -> list[dict[str, Any]]:
    """The ledger's receipts as ``donegate receipts --json`` lists them, newest first."""
    done = subprocess.run(
        [sys.executable, "-m", "donegate", "receipts", "--json", "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    listed = json.loads(done.stdout)
    assert isinstance(listed, list)
    return listed
