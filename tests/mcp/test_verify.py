"""``verify`` over MCP gives the verdict ``donegate verify`` gives, under the team's trust; an
input it cannot read is a tool error, never a verdict."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession

from tests.mcp.harness import Server, answer, call, text

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.json"))
NOW = "2026-08-27T18:05:00Z"  # the examples' own decision time (tests/test_examples.py)
TRUSTED = "gitreal-gate/0.3"


def server(tmp_path: Path, config: str = f'trust = ["{TRUSTED}"]\n') -> Server:
    (tmp_path / "donegate.toml").write_text(config)
    return Server(tmp_path / "donegate.toml", tmp_path / "state", tmp_path)


def cli_verdict(path: Path, *trust: str) -> dict[str, Any]:
    """What ``donegate verify --json`` says of the claim at ``path``, run as a command."""
    flags = [arg for verifier in trust for arg in ("--trust", verifier)]
    done = subprocess.run(
        [sys.executable, "-m", "donegate", "verify", str(path), "--now", NOW, "--json", *flags],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode in (0, 1, 3), done.stderr
    verdict = json.loads(done.stdout)["verdict"]
    assert isinstance(verdict, dict)
    return verdict


def trusted_refutation(tmp_path: Path) -> Path:
    """The refuted example with its readback made by the verifier the team trusts."""
    document = json.loads(
        (Path(__file__).parents[2] / "examples/refuted-wrong-zip.json").read_text()
    )
    document["evidence"][0]["verifier"]["id"] = TRUSTED
    path = tmp_path / "refuted-by-trusted.json"
    path.write_text(json.dumps(document))
    return path


def test_every_example_gets_the_verdict_the_cli_gives(tmp_path: Path) -> None:
    claims = [*EXAMPLES, trusted_refutation(tmp_path)]

    async def talk(session: ClientSession) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        verdicts = []
        for path in claims:
            as_object = answer(
                await call(session, "verify", claim=json.loads(path.read_text()), now=NOW)
            )
            as_text = answer(await call(session, "verify", claim=path.read_text(), now=NOW))
            verdicts.append((as_object, as_text))
        return verdicts

    got = server(tmp_path).run(talk)
    for path, (as_object, as_text) in zip(claims, got, strict=True):
        expected = cli_verdict(path, TRUSTED)
        assert as_object == expected, path.name
        assert as_text == expected, path.name
    states = [as_object["state"] for as_object, _ in got]
    assert sorted(set(states)) == ["refuted", "unverified", "verified"]


def test_the_agents_own_independent_evidence_counts_for_nothing(tmp_path: Path) -> None:
    # No trust in the team's file: every verifier the agent names is its own word.
    document = json.loads(
        (Path(__file__).parents[2] / "examples/verified-readback.json").read_text()
    )

    async def talk(session: ClientSession) -> dict[str, Any]:
        return answer(await call(session, "verify", claim=document, now=NOW))

    verdict = server(tmp_path, "").run(talk)
    assert verdict["state"] == "unverified"
    assert verdict["evidence"][0]["counts"] is False
    assert verdict == cli_verdict(EXAMPLES[-1], "nobody-the-team-named")


def test_evidence_naming_donegate_does_not_count_even_if_the_team_trusts_the_id(
    tmp_path: Path,
) -> None:
    # Only collect observes as donegate; in a claim handed to verify that id is anyone's to write.
    document = json.loads(
        (Path(__file__).parents[2] / "examples/verified-readback.json").read_text()
    )
    document["evidence"][0]["verifier"]["id"] = "donegate/0.1.0"

    async def talk(session: ClientSession) -> dict[str, Any]:
        return answer(await call(session, "verify", claim=document, now=NOW))

    verdict = server(tmp_path, 'trust = ["donegate/0.1.0"]\n').run(talk)
    assert verdict["state"] == "unverified"
    assert verdict["evidence"][0]["why"] == (
        "self-attested evidence never satisfies a requirement (rule 1)"
    )


BAD_CLAIMS: dict[str, tuple[Any, str]] = {
    "not JSON": ('{"spec_version": "0.1",', "donegate: invalid input: claim is not valid JSON"),
    "a bad time": ("bad-at", "mutations[0].at: expected an RFC 3339 timestamp"),
    "no task": ("no-task", "task: required field is missing"),
    "a dangling reference": ("dangling", "evidence[0].covers[0]: names no mutation: 'm9'"),
}


def broken(kind: str) -> Any:
    document = json.loads(
        (Path(__file__).parents[2] / "examples/verified-readback.json").read_text()
    )
    if kind == "bad-at":
        document["mutations"][0]["at"] = "yesterday"
    elif kind == "no-task":
        del document["task"]
    elif kind == "dangling":
        document["evidence"][0]["covers"] = ["m9"]
    else:
        return kind
    return document


@pytest.mark.parametrize("case", sorted(BAD_CLAIMS))
def test_a_claim_that_does_not_read_is_a_tool_error_naming_where(tmp_path: Path, case: str) -> None:
    given, said = BAD_CLAIMS[case]

    async def talk(session: ClientSession) -> tuple[bool, str, object]:
        result = await call(session, "verify", claim=broken(given), now=NOW)
        return result.is_error, text(result), result.structured_content

    is_error, message, structured = server(tmp_path).run(talk)
    assert is_error
    assert structured is None
    assert said in message
    assert "verified" not in message


def test_other_bad_arguments_are_tool_errors(tmp_path: Path) -> None:
    document = json.loads(EXAMPLES[-1].read_text())

    async def talk(session: ClientSession) -> list[tuple[bool, str]]:
        results = [
            await call(session, "verify", claim=document, now="tomorrow"),
            await call(session, "verify", claim=[document]),
            await call(session, "verify"),
        ]
        return [(r.is_error, text(r)) for r in results]

    said = server(tmp_path).run(talk)
    assert [is_error for is_error, _ in said] == [True, True, True]
    bad_now, a_list, nothing = (message for _, message in said)
    assert "now: expected an RFC 3339 time, got 'tomorrow'" in bad_now
    assert "claim" in a_list
    assert "claim" in nothing


@pytest.mark.parametrize(
    ("config", "said"),
    [
        (None, "cannot read configuration"),
        ("colour = 1\n", "colour: unknown key"),
        (
            "[[checks]]\ncheck_type = 'test_run'\ncommand = ['true']\ntimeout_s = -1\n",
            "checks[0].timeout_s",
        ),
        ("trust = 'everyone'\n", "trust: expected a list of verifier ids"),
        ("[policy\n", "is not valid TOML"),
    ],
)
def test_a_missing_or_invalid_configuration_is_a_tool_error(
    tmp_path: Path, config: str | None, said: str
) -> None:
    host = Server(tmp_path / "donegate.toml", tmp_path / "state", tmp_path)
    if config is not None:
        (tmp_path / "donegate.toml").write_text(config)

    async def talk(session: ClientSession) -> tuple[bool, str]:
        result = await call(session, "verify", claim=EXAMPLES[-1].read_text(), now=NOW)
        return result.is_error, text(result)

    is_error, message = host.run(talk)
    assert is_error
    assert message.startswith("Error executing tool verify: donegate: invalid input: ")
    assert said in message
    assert str(tmp_path / "donegate.toml") in message
