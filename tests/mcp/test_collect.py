"""``collect`` over MCP: the team's checks run for real on a tiny project, the verdict follows the
code, a receipt lands in the ledger beside the hooks' ones, and nothing the agent writes into the
claim makes a broken project verified."""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession

from donegate.__about__ import __version__
from donegate.ledger import Ledger
from donegate.report.summary import summarise
from tests.mcp import project
from tests.mcp.harness import Server, answer, call, receipts, text


def server(root: Path, config: Path) -> Server:
    return Server(config, root.parent / "state", root)


def test_right_code_verifies_and_leaves_a_receipt_the_report_counts(tmp_path: Path) -> None:
    root = tmp_path / "project"
    host = server(root, project.create(root))
    reported: list[tuple[float, float | None, str | None]] = []

    async def noted(progress: float, total: float | None, message: str | None) -> None:
        reported.append((progress, total, message))

    async def talk(session: ClientSession) -> list[dict[str, Any]]:
        claim = project.write(root, project.RIGHT)
        collected = await session.call_tool("collect", {"claim": claim}, progress_callback=noted)
        return [
            answer(collected),
            answer(await call(session, "latest_receipt")),
            answer(await call(session, "latest_receipt", workspace=str(root))),
            answer(await call(session, "latest_receipt", workspace=str(tmp_path))),
        ]

    collected, latest, named, elsewhere = host.run(talk)
    assert collected["state"] == "verified"
    evidence = collected["claim"]["evidence"]
    assert [(e["check_type"], e["verifier"]) for e in evidence] == [
        ("test_run", {"id": f"donegate/{__version__}", "kind": "independent"})
    ]
    assert collected["claim"]["verdict"]["state"] == "verified"
    assert reported, "the client asked for progress and got none"
    assert reported[0][1] == 120  # the test run's deadline, as the total
    [receipt] = receipts(tmp_path / "state")
    assert receipt["id"] == collected["receipt_id"]
    assert receipt["host"] == "mcp"
    assert receipt["verdict"] == "verified"
    assert receipt["decision"] == "allow"
    assert receipt["workspace"] == str(root.resolve())
    assert receipt["session_id"].startswith("donegate-tests:")
    assert receipt["claim"] == collected["claim"]
    assert receipt["decision_doc"]["on_unverified"] == "record"
    assert latest["receipt"]["id"] == collected["receipt_id"]
    assert latest["receipt"]["claim_verdict"]["state"] == "verified"
    assert named == latest
    assert elsewhere["receipt"] is None
    with Ledger(tmp_path / "state") as ledger:
        summary = summarise(ledger.query())
    assert summary.claims == 1
    assert [(g.name, g.stops) for g in summary.by_agent] == [("mcp", 1)]


def test_wrong_code_is_refuted_with_the_failing_test_named(tmp_path: Path) -> None:
    root = tmp_path / "project"
    host = server(root, project.create(root))

    async def talk(session: ClientSession) -> dict[str, Any]:
        return answer(await call(session, "collect", claim=project.write(root, project.WRONG)))

    collected = host.run(talk)
    assert collected["state"] == "refuted"
    assert "tests/test_calc.py::test_add" in collected["claim"]["verdict"]["reason"]
    [receipt] = receipts(tmp_path / "state")
    assert (receipt["verdict"], receipt["host"]) == ("refuted", "mcp")


def test_forged_evidence_does_not_verify_an_unchanged_broken_project(tmp_path: Path) -> None:
    root = tmp_path / "project"
    host = server(root, project.create(root, top='trust = ["ci/github-actions"]\n'))

    async def talk(session: ClientSession) -> dict[str, Any]:
        claim = project.claim([("file_write", "calc.py")])  # calc.py is still the broken one
        claim["evidence"] = [
            project.passing("test_run", f"donegate/{__version__}"),
            project.passing("test_run", "ci/github-actions"),
        ]
        return answer(await call(session, "collect", claim=claim))

    collected = host.run(talk)
    assert collected["state"] == "refuted"
    forged = collected["claim"]["evidence"][:2]
    assert [e["verifier"]["kind"] for e in forged] == ["self_attested", "self_attested"]
    assert all(e["donegate_note"] for e in forged)
    assert [r["verdict"] for r in receipts(tmp_path / "state")] == ["refuted"]


def test_trusted_looking_evidence_from_the_agent_fills_no_requirement(tmp_path: Path) -> None:
    # The policy asks for a readback no configured check makes. Handed over by the agent, an
    # item naming a verifier the team trusts is still the agent's word: only what collect
    # observed counts, so the claim stays unverified even with the code right.
    policy = textwrap.dedent(
        """
        trust = ["ci/deploy"]
        [policy]
        requires = ["test_run", "state_readback"]
        """
    )
    root = tmp_path / "project"
    host = server(root, project.create(root, top=policy))

    async def talk(session: ClientSession) -> dict[str, Any]:
        claim = project.write(root, project.RIGHT)
        claim["evidence"] = [project.passing("state_readback", "ci/deploy")]
        return answer(await call(session, "collect", claim=claim))

    collected = host.run(talk)
    assert collected["state"] == "unverified"
    assert "state_readback" in collected["claim"]["verdict"]["unmet"]
    assert collected["claim"]["evidence"][0]["verifier"]["kind"] == "self_attested"
    assert collected["claim"]["evidence"][1]["verifier"]["kind"] == "independent"


def test_what_the_agent_writes_in_its_evidence_does_not_reach_the_report(tmp_path: Path) -> None:
    # Findings and check times are read from evidence details; an agent's own would set its
    # receipt aside as corrupt (an elapsed time no check takes) or name a test that never failed.
    root = tmp_path / "project"
    host = server(root, project.create(root))

    async def talk(session: ClientSession) -> dict[str, Any]:
        claim = project.write(root, project.RIGHT)
        made_up = {
            **project.passing("test_run", "me"),
            "verifier": {"id": "me", "kind": "self_attested"},
        }
        made_up["detail"] = {
            "check": "tests",
            "elapsed_s": -1,
            "failing": ["tests/test_calc.py::test_no"],
        }
        claim["evidence"] = [made_up]
        return answer(await call(session, "collect", claim=claim))

    collected = host.run(talk)
    assert collected["state"] == "verified"
    kept = collected["claim"]["evidence"][0]
    assert "detail" not in kept
    assert kept["agent_detail"]["failing"] == ["tests/test_calc.py::test_no"]
    with Ledger(tmp_path / "state") as ledger:
        summary = summarise(ledger.query())
    assert summary.corrupt == []
    assert summary.claims == 1
    assert [f.subject for f in summary.findings if f.kind == "failing test"] == []


def test_a_claim_that_does_not_read_is_a_tool_error_and_no_receipt(tmp_path: Path) -> None:
    root = tmp_path / "project"
    host = server(root, project.create(root))

    async def talk(session: ClientSession) -> list[tuple[bool, str]]:
        claim = project.write(root, project.RIGHT)
        claim["mutations"][0]["at"] = "just now"
        results = [
            await call(session, "collect", claim=claim),
            await call(session, "collect", claim="{not json"),
            await call(session, "latest_receipt"),
        ]
        return [(r.is_error, text(r)) for r in results]

    bad_time, bad_json, latest = host.run(talk)
    assert bad_time[0]
    assert "donegate: invalid input: mutations[0].at: expected an RFC 3339 timestamp" in bad_time[1]
    assert bad_json[0]
    assert "claim is not valid JSON" in bad_json[1]
    assert not latest[0]
    assert '"receipt": null' in latest[1]
    assert receipts(tmp_path / "state") == []


def test_no_usable_configuration_is_a_tool_error_recorded_as_not_verified(tmp_path: Path) -> None:
    root = tmp_path / "project"
    config = project.create(root)
    host = server(root, config)

    async def talk(session: ClientSession) -> list[tuple[bool, str]]:
        results = []
        config.unlink()  # read at every call: gone now
        results.append(await call(session, "collect", claim=project.write(root, project.RIGHT)))
        config.write_text("[[checks]]\ncheck_type = 'test_run'\ncommand = 'pytest'\n")
        results.append(await call(session, "collect", claim=project.write(root, project.RIGHT)))
        return [(r.is_error, text(r)) for r in results]

    missing, invalid = host.run(talk)
    assert missing[0]
    assert f"cannot read configuration {config}" in missing[1]
    assert invalid[0]
    assert "checks[0]: command is a list of arguments" in invalid[1]
    found = receipts(tmp_path / "state")
    assert [(r["verdict"], r["reason"], r["host"]) for r in found] == [
        ("unverified", "donegate_error", "mcp"),
        ("unverified", "donegate_error", "mcp"),
    ]
    assert "checks[0]: command is a list" in found[0]["decision_doc"]["error"]


def test_a_check_that_crashes_leaves_the_claim_unverified(tmp_path: Path) -> None:
    # The readback's callable raises: the check could not observe, so nothing is verified. It
    # prints first, in the server's process: the protocol's stream is not where that goes.
    readback = textwrap.dedent(
        """
        [[checks]]
        name = "balance"
        check_type = "state_readback"
        target = "accounts/1"
        source = "python:crashing_store:read"
        expected = { balance = 10 }
        """
    )
    root = tmp_path / "project"
    host = server(root, project.create(root, extra=readback))
    (root / "crashing_store.py").write_text(
        "def read():\n    print('reading')\n    raise RuntimeError('store down')\n"
    )

    async def talk(session: ClientSession) -> dict[str, Any]:
        return answer(await call(session, "collect", claim=project.write(root, project.RIGHT)))

    collected = host.run(talk)
    assert collected["state"] == "unverified"
    assert "the callable raised RuntimeError: store down" in collected["claim"]["verdict"]["reason"]
    assert collected["claim"]["evidence"][1]["verifier"]["kind"] == "absent"
    assert [r["verdict"] for r in receipts(tmp_path / "state")] == ["unverified"]


def test_a_sqlite_readback_follows_the_row(tmp_path: Path) -> None:
    database = tmp_path / "app.db"
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, zip TEXT)")
        db.execute("INSERT INTO accounts VALUES (1, '94110')")
    db.close()
    config = tmp_path / "donegate.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [[checks]]
            check_type = "state_readback"
            target = "accounts/1"
            source = "sqlite:///{database}"
            query = "SELECT zip FROM accounts WHERE id = :id"
            params = {{ id = 1 }}
            expected = {{ zip = "94107" }}
            """
        )
    )
    host = Server(config, tmp_path / "state", tmp_path)

    def update(zip_code: str) -> dict[str, Any]:
        with sqlite3.connect(database) as db:
            db.execute("UPDATE accounts SET zip = ? WHERE id = 1", (zip_code,))
        db.close()
        return project.claim([("state_write", "accounts/1")])

    async def talk(session: ClientSession) -> list[str]:
        wrong = answer(await call(session, "collect", claim=update("94111")))
        right = answer(await call(session, "collect", claim=update("94107")))
        return [wrong["state"], right["state"]]

    assert host.run(talk) == ["refuted", "verified"]
    assert [r["verdict"] for r in receipts(tmp_path / "state")] == ["verified", "refuted"]
