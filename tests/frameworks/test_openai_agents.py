"""The OpenAI Agents SDK gated by run_gated: the SDK's real runner, a scripted model.

A deploy agent's tool changes what a real HTTP server on loopback answers, and an
``endpoint_health`` check reads it; a support agent writes a real SQLite file, read back.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from agents import Agent, OutputGuardrailTripwireTriggered, RunConfig, Runner, function_tool

from donegate.frameworks import CompletionGate, NotVerified, Outcome
from donegate.frameworks.openai_agents import completion_guardrail, run_gated
from tests.checks.httpserver import Reply, Server, serving
from tests.frameworks.agents_model import ScriptedModel, call, say
from tests.frameworks.support import ACCOUNT, NEW, TASK, Accounts, readback_config, receipts

QUIET = RunConfig(tracing_disabled=True)  # no trace leaves the machine
VERSION = "1.4.2"


class Service:
    """What is deployed: the server answers its version."""

    def __init__(self) -> None:
        self.version = "1.4.1"

    def reply(self) -> Reply:
        return Reply(200, json.dumps({"version": self.version}))


@pytest.fixture
def service() -> Iterator[tuple[Service, Server]]:
    deployed = Service()
    with serving({"/version": deployed.reply}) as server:
        yield deployed, server


def deploy_gate(tmp_path: Path, server: Server, *, strict: bool = False) -> CompletionGate:
    config = tmp_path / "donegate.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [gate]
            max_strict_vetoes = 2

            [[checks]]
            check_type = "endpoint_health"
            name = "api version"
            url = "{server.url}/version"
            expected = {{ status = 200, body_contains = '"version": "{VERSION}"' }}
            covers = ["services/*"]
            timeout_s = 5
            """
        )
    )
    return CompletionGate(
        config,
        agent="deploy-bot",
        host="openai-agents",
        state_dir=tmp_path / "state",
        strict=strict,
    )


def deploy_agent(
    model: ScriptedModel, deployed: Service, gate: CompletionGate | None
) -> Agent[None]:
    def deploy(service: str, version: str) -> str:
        """Deploy a version of a service."""
        deployed.version = "1.4.1" if version.endswith("-rc") else version  # an rc deploys nothing
        return f"deployed {service} {version}"

    if gate is not None:
        deploy = gate.mutation(kind="deploy", target="services/{service}")(deploy)
    return Agent(name="deploy-bot", model=model, tools=[function_tool(deploy)])


def test_a_true_deploy_verifies_on_the_first_try(
    tmp_path: Path, service: tuple[Service, Server]
) -> None:
    deployed, server = service
    gate = deploy_gate(tmp_path, server)
    model = ScriptedModel(call("deploy", service="api", version=VERSION), say("Deployed 1.4.2."))
    result = asyncio.run(
        run_gated(deploy_agent(model, deployed, gate), "Deploy api 1.4.2", gate, run_config=QUIET)
    )
    assert result.final_output == "Deployed 1.4.2."
    [receipt] = receipts(tmp_path / "state")
    assert (receipt.host, receipt.verdict, receipt.decision) == (
        "openai-agents",
        "verified",
        "allow",
    )
    assert receipt.claim["mutations"][0]["target"] == "services/api"


def test_without_the_gate_a_deploy_that_did_not_go_out_is_accepted(
    service: tuple[Service, Server],
) -> None:
    deployed, _ = service
    model = ScriptedModel(call("deploy", service="api", version="1.4.2-rc"), say("Deployed 1.4.2."))
    result = asyncio.run(
        Runner.run(deploy_agent(model, deployed, None), "Deploy api 1.4.2", run_config=QUIET)
    )
    assert result.final_output == "Deployed 1.4.2."
    assert deployed.version == "1.4.1"


def test_a_deploy_that_did_not_go_out_is_sent_back_with_the_reason(
    tmp_path: Path, service: tuple[Service, Server]
) -> None:
    deployed, server = service
    gate = deploy_gate(tmp_path, server)
    model = ScriptedModel(
        call("deploy", service="api", version="1.4.2-rc"),
        say("Deployed 1.4.2."),
        call("deploy", service="api", version=VERSION),
        say("Deployed 1.4.2, for real."),
    )
    agent = deploy_agent(model, deployed, gate)
    result = asyncio.run(run_gated(agent, "Deploy api 1.4.2", gate, run_config=QUIET))
    assert result.final_output == "Deployed 1.4.2, for real."
    told = model.told(2)  # the first call of the second run: the gate's reason, as the user's
    assert "api version observed" in told
    assert '"body_contains": false' in told
    assert any("Deployed 1.4.2." in json.dumps(item, default=str) for item in model.inputs[2])
    assert [r.decision for r in receipts(tmp_path / "state")] == ["veto", "allow"]
    assert deployed.version == VERSION


def test_a_deploy_agent_that_never_deploys_ends_not_verified(
    tmp_path: Path, service: tuple[Service, Server]
) -> None:
    deployed, server = service
    gate = deploy_gate(tmp_path, server)
    model = ScriptedModel(call("deploy", service="api", version="1.4.2-rc"), then=say("Deployed."))
    result = asyncio.run(
        run_gated(deploy_agent(model, deployed, gate), "Deploy api 1.4.2", gate, run_config=QUIET)
    )
    assert result.final_output == "Deployed."
    last = receipts(tmp_path / "state")[-1]
    assert (last.verdict, last.reason) == ("refuted", "strict_veto_cap_reached")


def test_strict_mode_raises_out_of_the_run(tmp_path: Path, service: tuple[Service, Server]) -> None:
    deployed, server = service
    gate = deploy_gate(tmp_path, server, strict=True)
    model = ScriptedModel(call("deploy", service="api", version="1.4.2-rc"), then=say("Deployed."))
    with pytest.raises(NotVerified, match="strict_veto_cap_reached"):
        asyncio.run(
            run_gated(
                deploy_agent(model, deployed, gate), "Deploy api 1.4.2", gate, run_config=QUIET
            )
        )


def test_the_guardrail_alone_trips_with_the_outcome(
    tmp_path: Path, service: tuple[Service, Server]
) -> None:
    deployed, server = service
    gate = deploy_gate(tmp_path, server)
    model = ScriptedModel(call("deploy", service="api", version="1.4.2-rc"), say("Deployed."))
    agent = deploy_agent(model, deployed, gate)
    agent.output_guardrails = [completion_guardrail(gate)]
    with pytest.raises(OutputGuardrailTripwireTriggered) as tripped:
        asyncio.run(Runner.run(agent, "Deploy api 1.4.2", run_config=QUIET))
    outcome = tripped.value.guardrail_result.output.output_info
    assert isinstance(outcome, Outcome)
    assert outcome.sent_back
    assert outcome.verdict == "refuted"


def test_a_support_agent_that_writes_the_wrong_value_is_sent_back(tmp_path: Path) -> None:
    accounts = Accounts.create(tmp_path)
    gate = CompletionGate(
        readback_config(tmp_path, accounts.url),
        agent="support-bot",
        task=TASK,
        host="openai-agents",
        state_dir=tmp_path / "state",
    )

    @function_tool
    @gate.mutation(kind="state_write", target="accounts/{account_id}")
    def update_address(account_id: int, address: str) -> str:
        """Set the postal address of an account."""
        accounts.write(account_id, address)
        return "updated"

    model = ScriptedModel(
        call("update_address", account_id=ACCOUNT, address="9 New Str"),
        say("Done."),
        call("update_address", account_id=ACCOUNT, address=NEW),
        say("Corrected."),
    )
    agent = Agent(name="support-bot", model=model, tools=[update_address])
    result = asyncio.run(run_gated(agent, TASK, gate, run_config=QUIET))
    assert result.final_output == "Corrected."
    assert '"9 New Str"' in model.told(2)
    assert accounts.address() == NEW


def test_fewer_reruns_than_the_budget_let_the_run_go_on_the_record(
    tmp_path: Path, service: tuple[Service, Server]
) -> None:
    deployed, server = service
    gate = deploy_gate(tmp_path, server)
    model = ScriptedModel(call("deploy", service="api", version="1.4.2-rc"), then=say("Deployed."))
    agent = deploy_agent(model, deployed, gate)
    result = asyncio.run(run_gated(agent, "Deploy", gate, run_config=QUIET, max_sendbacks=1))
    assert result.final_output == "Deployed."
    decided = receipts(tmp_path / "state")
    assert [r.decision for r in decided] == ["veto", "allow"]
    assert decided[-1].reason == "blocks_in_a_row_cap_reached"
    assert decided[-1].verdict == "refuted"
