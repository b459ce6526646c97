"""What ``donegate mcp`` offers: three tools, their input schemas, and nothing the agent could
point at a command or a configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession

from tests.mcp.harness import Server, answer, call


def test_it_lists_verify_collect_and_latest_receipt(tmp_path: Path) -> None:
    server = Server(tmp_path / "donegate.toml", tmp_path / "state", tmp_path)

    async def talk(session: ClientSession) -> dict[str, dict[str, Any]]:
        listed = await session.list_tools()
        return {tool.name: tool.input_schema for tool in listed.tools}

    schemas = server.run(talk)
    assert sorted(schemas) == ["collect", "latest_receipt", "verify"]
    claim_types = [{"additionalProperties": True, "type": "object"}, {"type": "string"}]
    assert schemas["verify"]["required"] == ["claim"]
    assert schemas["verify"]["properties"]["claim"]["anyOf"] == claim_types
    assert sorted(schemas["verify"]["properties"]) == ["claim", "now"]
    # collect takes the claim and nothing else: no config path, no command, no URL.
    assert sorted(schemas["collect"]["properties"]) == ["claim"]
    assert schemas["collect"]["required"] == ["claim"]
    assert sorted(schemas["latest_receipt"]["properties"]) == ["workspace"]
    assert "required" not in schemas["latest_receipt"]


def test_no_receipt_yet_is_said_plainly(tmp_path: Path) -> None:
    server = Server(tmp_path / "donegate.toml", tmp_path / "state", tmp_path)

    async def talk(session: ClientSession) -> dict[str, Any]:
        return answer(await call(session, "latest_receipt"))

    said = server.run(talk)
    assert said["receipt"] is None
    assert (
        said["message"]
        == f"no receipt for {tmp_path.resolve()} in {tmp_path / 'state' / 'receipts.sqlite3'}"
    )
