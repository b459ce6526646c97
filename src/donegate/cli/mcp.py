"""``donegate mcp``: the MCP server for hosts without hooks, on standard input and output.

The SDK is imported only here, when the command runs: ``import donegate.cli`` stays light.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import click

from donegate.errors import InvalidInput

_EPILOG = """\b
A client's configuration (the usual "mcpServers" form; use absolute paths):
  {
    "mcpServers": {
      "donegate": {
        "command": "donegate",
        "args": ["mcp", "--config", "/path/to/project/donegate.toml"]
      }
    }
  }

\b
Exit codes: 0 when the client closed the connection, 4 when the MCP SDK is missing
(pip install 'donegate[mcp]'), 5 internal error.
"""


@click.command(epilog=_EPILOG)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("donegate.toml"),
    show_default=True,
    help="The team's configuration: checks, trust, policy. Read at every call; the agent's "
    "tools cannot name another. Its directory is the workspace of the receipts.",
)
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where receipts live; default $DONEGATE_STATE_DIR, else ~/.local/state/donegate.",
)
def mcp(config_path: Path, state_dir: Path | None) -> int:
    """Serve donegate to an MCP client (Cline, Windsurf, Zed, ...) over stdio.

    For hosts without hooks. The agent gets three tools:

    \b
      collect(claim)
          Run the team's checks (from --config, never from the agent) after the
          claim's mutations; return the claim with their evidence and verdict,
          and record a receipt (host "mcp") that donegate receipts and donegate
          report show beside the hooks' receipts.
      verify(claim, now?)
          The claim's verdict as donegate verify computes it, under the team's
          policy, trusting only the verifiers the team's file lists.
      latest_receipt(workspace?)
          The newest receipt recorded for the workspace, or none, said so.

    Evidence the agent writes into a claim never counts unless donegate collected it in that
    call, or (verify) it names a verifier the team trusts. Bad input, a missing or invalid
    configuration, or a failure of donegate comes back as a tool error, never as a verdict.

    What it cannot do: stop the agent. The agent decides whether to call the tools, and may
    stop without them; only a host's hooks (donegate init) gate a stop. Without hooks donegate
    sees the changes the claim lists and what the checks observe, not the agent's other writes.
    """
    if importlib.util.find_spec("mcp") is None:
        raise InvalidInput("donegate mcp needs the MCP SDK: pip install 'donegate[mcp]'")
    from donegate.mcp_server import Settings, serve

    serve(Settings(config_path.expanduser().resolve(), state_dir))
    return 0
