"""A deploy agent gated by donegate: it may say "deployed" only once the live endpoint answers the
version it claims.

    python examples/deploy_agent.py                               # plain Python, no framework
    python examples/deploy_agent.py --framework openai-agents     # the OpenAI Agents SDK
    python examples/deploy_agent.py --framework langgraph         # LangGraph

The service is a real HTTP server on loopback; the agent's deploy tool changes what it answers.
The agent is scripted, so the example runs offline: its first try deploys a release candidate
(which never goes out) and says it deployed 1.4.2; donegate's endpoint_health check reads the
live version, sends it back with what it saw, and the second try deploys 1.4.2 and verifies.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from donegate.frameworks import CompletionGate
from donegate.ledger import Ledger

VERSION = "1.4.2"
TASK = f"Deploy version {VERSION} of the api service."
TRIES = [("1.4.2-rc1", f"Deployed {VERSION}."), (VERSION, f"Deployed {VERSION}; it is live now.")]
CONFIG = """\
[[checks]]
check_type = "endpoint_health"
name = "live version"
url = "{url}/version"
expected = {{ status = 200, body_contains = '"version": "{version}"' }}
covers = ["services/*"]
timeout_s = 5
"""


class Service:
    """What the api service runs; a release candidate never rolls out."""

    def __init__(self) -> None:
        self.version = "1.4.1"

    def deploy(self, service: str, version: str) -> str:
        if "-rc" not in version:
            self.version = version
        return f"deployment of {service} {version} started"


@contextmanager
def serving(service: Service) -> Iterator[str]:
    """The service's /version on 127.0.0.1, in a thread; yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"version": service.version}).encode()
            self.send_response(200 if self.path == "/version" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# -- the same scripted agent, three ways ---------------------------------------------------


def plain(gate: CompletionGate, deploy: Callable[[str, str], str], told: list[str]) -> str:
    """No framework: the application's own loop asks the gate before it lets the agent finish."""
    for version, said in TRIES:
        deploy("api", version)
        outcome = gate.check(said)
        if outcome.allowed:
            return said
        told.append(outcome.message or "")  # what the model would be given next
    return said


def openai_agents(gate: CompletionGate, deploy: Callable[[str, str], str], told: list[str]) -> str:
    from agents import Agent, ModelResponse, RunConfig, Usage, function_tool
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from donegate.frameworks.openai_agents import run_gated

    def turns() -> Iterator[list[Any]]:
        for number, (version, said) in enumerate(TRIES):
            args = json.dumps({"service": "api", "version": version})
            ident = f"call_{number}"
            yield [
                ResponseFunctionToolCall(
                    id=ident, call_id=ident, type="function_call", name="deploy", arguments=args
                )
            ]
            text = ResponseOutputText(text=said, type="output_text", annotations=[])
            yield [
                ResponseOutputMessage(
                    id=f"msg_{number}",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[text],
                )
            ]

    class Scripted(Model):
        def __init__(self) -> None:
            self.script = turns()

        async def get_response(
            self,
            system_instructions: str | None,
            input: Any,
            model_settings: Any,
            tools: Any,
            output_schema: Any,
            handoffs: Any,
            tracing: Any,
            **kwargs: Any,
        ) -> Any:
            last = input[-1] if isinstance(input, list) and input else None
            if isinstance(last, dict) and last.get("role") == "user" and len(input) > 1:
                told.append(str(last.get("content")))
            return ModelResponse(output=next(self.script), usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    agent = Agent(name="deploy-bot", model=Scripted(), tools=[function_tool(deploy)])
    result = asyncio.run(run_gated(agent, TASK, gate, run_config=RunConfig(tracing_disabled=True)))
    return str(result.final_output)


def langgraph(gate: CompletionGate, deploy: Callable[[str, str], str], told: list[str]) -> str:
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    from donegate.frameworks.langgraph import add_verification

    script = iter(
        message
        for number, (version, said) in enumerate(TRIES)
        for message in (
            AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "deploy",
                        "id": f"c{number}",
                        "args": {"service": "api", "version": version},
                    }
                ],
            ),
            AIMessage(said),
        )
    )

    # Annotated as Any: LangGraph reads a node's hints, and these names are local to this function.
    def agent(state: Any) -> dict[str, Any]:
        last = state["messages"][-1]
        if isinstance(last, HumanMessage) and len(state["messages"]) > 1:
            told.append(str(last.content))
        return {"messages": [next(script)]}

    def after_agent(state: Any) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "verify"

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([tool(deploy)]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", after_agent, ["tools", "verify"])
    builder.add_edge("tools", "agent")
    add_verification(builder, gate, back="agent")
    final = builder.compile().invoke({"messages": [HumanMessage(TASK)]})
    return str(final["messages"][-1].content)


FRAMEWORKS = {"python": plain, "openai-agents": openai_agents, "langgraph": langgraph}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=sorted(FRAMEWORKS), default="python")
    parser.add_argument("--state-dir", type=Path, help="the ledger's directory (default: temp)")
    args = parser.parse_args(argv)
    running = Service()
    with tempfile.TemporaryDirectory(prefix="donegate-deploy-") as tmp, serving(running) as url:
        config = Path(tmp) / "donegate.toml"
        config.write_text(CONFIG.format(url=url, version=VERSION))
        state_dir = args.state_dir or Path(tmp) / "state"
        host = args.framework
        gate = CompletionGate(config, agent="deploy-bot", task=TASK, host=host, state_dir=state_dir)

        # The tool the agent calls: each call is a mutation of services/<name>.
        @gate.mutation(kind="deploy", target="services/{service}")
        def deploy(service: str, version: str) -> str:
            """Deploy a version of a service."""
            return running.deploy(service, version)

        told: list[str] = []
        print(f"task: {TASK}  (framework: {host}; service at {url})")
        answer = FRAMEWORKS[host](gate, deploy, told)
        return report(gate.run.session_id, state_dir, answer, told, running.version)


def report(session: str, state_dir: Path, answer: str, told: list[str], live: str) -> int:
    """Each try as the ledger recorded it, what the agent was told when sent back, the end."""
    with Ledger(state_dir) as ledger:
        tries = list(reversed(ledger.recent(50, session=session)))
    retries = iter(told)
    for number, receipt in enumerate(tries, start=1):
        deployed = [m["target"] for m in receipt.claim.get("mutations", [])]
        said = receipt.claim.get("claimed_outcome", "(no claim)")
        print(f"try {number}: the agent said {said!r} after deploying {deployed}")
        if receipt.decision == "veto":
            print(f"  sent back ({receipt.reason}); the claim is {receipt.verdict}")
            print(f"  the agent's next turn was given: {next(retries, '(nothing)')}")
        else:
            print(f"  let go: {receipt.verdict} ({receipt.reason})")
        print(f"  receipt {receipt.id}")
    verified = bool(tries) and tries[-1].verdict == "verified"
    print(f"live version {live}; final answer {answer!r}: ", end="")
    print("VERIFIED" if verified else "NOT verified")
    return 0 if verified else 1


if __name__ == "__main__":
    sys.exit(main())
