"""The MCP server: verify, collect and the latest receipt, for hosts that have no hooks.

An MCP client (Cline, Windsurf, Zed, ...) starts ``donegate mcp`` and its agent may call three
tools:

- ``verify(claim, now?)``: the verdict the rules give the claim, as ``donegate verify`` computes
  it, under the team's policy and trusting only the verifiers the team's file names;
- ``collect(claim)``: the team's configured checks run, as ``donegate collect`` runs them; the
  claim comes back with their evidence and its verdict, and a receipt is recorded (host ``mcp``);
- ``latest_receipt(workspace?)``: the newest receipt recorded for a workspace.

The server cannot stop the agent: the agent decides whether to call it, and nothing here gates a
stop. What it guarantees is the other half: an answer is never better than the world. Evidence
the agent writes into a claim never counts here unless it names a verifier the team's file trusts
(``verify``) or donegate collected it in this call (``collect``); the checks come only from the
team's file (read at every call, never from the agent's arguments); and anything that could not
be decided (bad JSON, an invalid claim, a missing or invalid ``donegate.toml``, donegate failing)
is a tool error with donegate's message and the JSON path, never a verdict.

:class:`Service` holds the three operations without the MCP SDK; :func:`build_server` puts them
behind the SDK's ``MCPServer``; :func:`serve` runs that on standard input and output.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from donegate import configtext, statedir
from donegate.__about__ import __version__
from donegate.claim import Claim, Evidence, Verifier, parse_claim
from donegate.collect import collect as collect_claim
from donegate.config import Config, parse_config
from donegate.errors import DonegateError, InternalError, InvalidInput
from donegate.instant import Instant
from donegate.ledger import Ledger, Receipt
from donegate.sealed._bytecode import STORE_DIR
from donegate.verdict import VerifyOptions, verify_claim

HOST = "mcp"
PROGRESS_EVERY_S = 2.0
_DONEGATES = ("detail", "donegate_note", "dsse")  # what donegate writes on evidence it collected
_NOT_HERE = (
    "says independent, but the agent gave it to donegate mcp: only evidence collected here counts"
)
_NOT_NOW = "claims donegate's verifier id but was not collected by this call: call collect for that"

ClaimArgument = Annotated[
    dict[str, Any] | str,
    Field(description="A Completion Claim v0.1 document: a JSON object, or its JSON text."),
]


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the server reads the team's configuration and records receipts.

    ``config_path`` is resolved once, when the server starts: the agent's tools never name it, and
    a working directory changed later does not move it.
    """

    config_path: Path
    state_dir: Path | None = None

    @property
    def workspace(self) -> Path:
        """The project the receipts belong to: the directory of the team's file."""
        return self.config_path.parent


@dataclass(slots=True)
class Service:
    """The three tools' work, without the protocol: each returns JSON data or raises
    :class:`~donegate.errors.DonegateError` (:class:`InvalidInput` for what the caller gave)."""

    settings: Settings
    session_id: str = field(default_factory=lambda: f"{os.getpid()}-{os.urandom(6).hex()}")
    started_digest: str | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        # What the team's file was when the server started: a collect under a different file
        # (the agent can edit it, it lives in the working tree) is said so on its receipt.
        try:
            self.started_digest = _digest(configtext.read_text(self.settings.config_path))
        except InvalidInput:
            self.started_digest = None

    def verify(self, claim: object, now: str | None = None) -> dict[str, Any]:
        """The claim's verdict under the team's policy, trusting only the team's verifiers.

        Exactly ``donegate verify --trust ID... [--policy]`` with the file's trust and policy, but
        for one thing: evidence naming donegate itself does not count even when the file trusts
        that id, since only collect observes as donegate here, and the agent wrote this claim.
        """
        document = load(claim)
        config, _ = self._config()
        trusted = config.trust
        document = _not_collected(
            document, lambda item: item.verifier.id in trusted and _mine(item.verifier.id)
        )
        options = VerifyOptions(policy=config.applied_policy(), now=_instant(now), trust=trusted)
        verdict = verify_claim(document, options).to_json_dict()["verdict"]
        assert isinstance(verdict, dict)
        return verdict

    def collect(self, claim: object, client: str | None = None) -> dict[str, Any]:
        """The configured checks' evidence added to the claim, its verdict, and its receipt.

        Once the claim is read, a collect that cannot finish (no usable configuration, donegate
        failing) still leaves a receipt, as a hook's failed stop does: not verified, and why.
        """
        document = _handed_over(load(claim))
        try:
            config, text = self._config()
            done = collect_claim(
                document, config, bytecode=self._bytecode(), state_dir=self.settings.state_dir
            )
        except Exception as exc:
            self._record_failure(exc, client)
            raise
        assert done.verdict is not None
        changed = self.started_digest is not None and _digest(text) != self.started_digest
        warnings = [*config.warnings()]
        if changed:
            warnings.append(f"{self.settings.config_path} changed since donegate mcp started")
        doc = done.to_json_dict()
        about = {"config": {"path": str(self.settings.config_path), "sha256": _digest(text)}}
        try:
            receipt_id = self._record(
                client,
                done.verdict.state,
                done.verdict.reason,
                doc,
                {**about, "config_changed": changed},
            )
        except DonegateError as exc:
            raise InternalError(
                f"the claim is {done.verdict.state}, but its receipt could not be recorded: {exc}"
            ) from None
        return {
            "state": done.verdict.state,
            "receipt_id": receipt_id,
            "warnings": warnings,
            "claim": doc,
        }

    def latest_receipt(self, workspace: str | None = None) -> dict[str, Any]:
        """The newest closed receipt of ``workspace`` (the server's by default), or none."""
        where = self.settings.workspace if workspace is None else _workspace(workspace)
        with Ledger(self.settings.state_dir) as ledger:
            found = ledger.latest(where)
            path = ledger.path
        if found is None:
            return {"receipt": None, "message": f"no receipt for {where} in {path}"}
        return {"receipt": _summary(found), "message": f"receipt {found.id} in {path}"}

    def longest_deadline_s(self) -> float | None:
        """The longest deadline among the configured checks (None when none is known)."""
        try:
            config, _ = self._config()
        except DonegateError:
            return None  # the call itself says why
        deadlines = [
            float(value)
            for spec in config.checks
            for value in (
                getattr(spec.settings, "timeout_s", None),
                getattr(spec.settings, "wait_s", None),
            )
            if isinstance(value, int | float) and not isinstance(value, bool)
        ]
        return max(deadlines, default=None)

    def _config(self) -> tuple[Config, str]:
        """The team's configuration, read now, and its text; errors name the file."""
        path = self.settings.config_path
        try:
            text = configtext.read_text(path)
        except InvalidInput as exc:
            raise InvalidInput(
                f"{exc} (the team's checks and trust come from this file; "
                "donegate mcp --config names another)"
            ) from None
        try:
            return parse_config(text, base_dir=path.parent, source=str(path)), text
        except InvalidInput as exc:
            if str(path) in str(exc):
                raise
            raise InvalidInput(f"{exc} (in {path})", exc.path) from None

    def _bytecode(self) -> Path | None:
        try:
            return statedir.ensure(self.settings.state_dir) / STORE_DIR
        except InvalidInput:
            return None  # no state directory: the run compiles its imports anew

    def _record(
        self,
        client: str | None,
        verdict: str,
        reason: str | None,
        claim: dict[str, Any],
        about: dict[str, Any],
    ) -> int:
        with Ledger(self.settings.state_dir) as ledger:
            return ledger.record(
                session_id=f"{client or HOST}:{self.session_id}",
                host=HOST,
                workspace=self.settings.workspace,
                verdict=verdict,
                decision="allow",  # the server stops nothing: the agent chose to ask
                reason=reason,
                claim=claim,
                decision_doc={
                    "host_event": "mcp collect",
                    "client": client,
                    # Whatever the policy says, a tool can only record: no stop waits on it.
                    "on_unverified": "record",
                    "server": f"donegate/{__version__}",
                    **about,
                },
            )

    def _record_failure(self, exc: Exception, client: str | None) -> None:
        what = str(exc) if isinstance(exc, DonegateError) else f"{type(exc).__name__}: {exc}"
        error = {"error": what, "at": Instant.now().text}
        with contextlib.suppress(DonegateError):  # the tool's error says what failed first
            self._record(client, "unverified", "donegate_error", {}, error)


def load(claim: object) -> Claim:
    """The claim the tool was given, through the one loader, as JSON text.

    An object is written back to text first: the loader reads ``max_age_s`` as the decimal the text
    writes, and a JSON-RPC request's numbers arrive as floats, whose shortest text is the one sent.
    """
    if isinstance(claim, str):
        return parse_claim(claim)
    if not isinstance(claim, dict):
        raise InvalidInput(f"a claim is a JSON object or its text, got {type(claim).__name__}")
    try:
        text = json.dumps(claim, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"the claim is not JSON data: {exc}") from None
    return parse_claim(text)


def _not_collected(claim: Claim, forged: Callable[[Evidence], bool]) -> Claim:
    """``claim`` with the evidence ``forged`` picks out relabelled ``self_attested``, noted why."""
    if not any(forged(item) for item in claim.evidence):
        return claim
    evidence = [_relabelled(item) if forged(item) else item for item in claim.evidence]
    return claim.model_copy(update={"evidence": evidence})


def _handed_over(claim: Claim) -> Claim:
    """``claim`` as the agent hands it to collect: every item in it is the agent's word.

    An item it calls independent is relabelled ``self_attested`` (the server did not observe it),
    and the names donegate writes on the items it collects (``detail``, ``donegate_note``,
    ``dsse``) are given an ``agent_`` prefix: the receipt's report reads findings and check times
    from them, and an agent's made-up ones (a failing test, an elapsed time no check takes, which
    would set the receipt aside as corrupt) must not read as donegate's.
    """
    if not claim.evidence:
        return claim
    evidence = [_as_agents(item) for item in claim.evidence]
    return claim.model_copy(update={"evidence": evidence})


def _as_agents(item: Evidence) -> Evidence:
    if any(name in (item.model_extra or {}) for name in _DONEGATES):
        data = item.model_dump(mode="json", exclude_unset=True)
        for name in _DONEGATES:
            if name in data:
                data[f"agent_{name}"] = data.pop(name)
        item = Evidence.model_validate(data)
    return _relabelled(item) if item.verifier.kind == "independent" else item


def _relabelled(item: Evidence) -> Evidence:
    note = _NOT_NOW if _mine(item.verifier.id) else _NOT_HERE
    return item.model_copy(
        update={
            "verifier": Verifier(id=item.verifier.id, kind="self_attested"),
            "donegate_note": note,
        }
    )


def _mine(verifier_id: str) -> bool:
    """The id is one donegate signs its own evidence with (``donegate/<version>``)."""
    return verifier_id.startswith("donegate/")


def _instant(text: str | None) -> Instant | None:
    if text is None:
        return None
    try:
        return Instant.parse(text)
    except ValueError as exc:
        raise InvalidInput(f"expected an RFC 3339 time, got {text[:80]!r}: {exc}", "now") from None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _workspace(text: str) -> Path:
    try:
        return Path(text).expanduser().resolve()
    except (OSError, ValueError, RuntimeError) as exc:
        raise InvalidInput(f"not a usable path: {exc}", "workspace") from None


def _summary(receipt: Receipt) -> dict[str, Any]:
    """The receipt without its documents, and the verdict its claim carries."""
    whole = receipt.to_json()
    whole.pop("decision_doc")
    claim = whole.pop("claim")
    whole["claim_verdict"] = claim.get("verdict") if isinstance(claim, dict) else None
    whole["show"] = f"donegate receipts show {receipt.id}"
    return whole


def build_server(settings: Settings) -> MCPServer:
    """The MCP server offering :class:`Service`'s three tools over ``settings``."""
    service = Service(settings)
    server: MCPServer = MCPServer(
        name="donegate",
        version=__version__,
        instructions=(
            "Check your completion claim against the world before you say you are done. "
            "collect runs the team's checks on a claim and records a receipt; verify computes "
            "a claim's verdict; latest_receipt shows the newest receipt. Evidence you write "
            "yourself never counts."
        ),
        log_level="WARNING",
    )

    @server.tool()
    def verify(
        claim: ClaimArgument,
        now: Annotated[
            str | None, Field(description="Decision time, RFC 3339; default: the clock.")
        ] = None,
    ) -> dict[str, Any]:
        """Compute a Completion Claim's verdict (verified, unverified or refuted) by the spec's
        rules, as `donegate verify` does, under the team's policy. Evidence counts only from the
        verifiers the team's donegate.toml trusts; evidence you wrote yourself, or that names
        donegate as its verifier, does not (call collect to have donegate observe). Returns the
        verdict: state, unmet, reason and a finding per evidence item. Records no receipt."""
        return _answer(lambda: service.verify(claim, now))

    @server.tool()
    async def collect(claim: ClaimArgument, ctx: Context[Any, Any]) -> dict[str, Any]:
        """Run the team's configured checks (tests, endpoint health, state readbacks, from
        donegate.toml only) after the claim's mutations, add their evidence to the claim and
        compute its verdict; the result is recorded as a receipt that the team's report counts.
        List every change you made as a mutation, timed when you made it. Evidence you put in
        the claim yourself does not count. Returns the state, the receipt id and the claim."""
        client = _client_name(ctx)
        return await _with_progress(ctx, service, lambda: service.collect(claim, client))

    @server.tool()
    def latest_receipt(
        workspace: Annotated[
            str | None,
            Field(description="A project directory; default: the one donegate mcp serves."),
        ] = None,
    ) -> dict[str, Any]:
        """The newest receipt recorded for the workspace (by collect here, or by a host's
        hook): its id, time, verdict, decision and reason, or none, said plainly."""
        return _answer(lambda: service.latest_receipt(workspace))

    return server


def serve(settings: Settings) -> None:
    """Serve the tools on standard input and output until the client closes them."""
    build_server(settings).run("stdio")


def _answer(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``work``'s answer, or a tool error with donegate's words: never a verdict."""
    try:
        return work()
    except InvalidInput as exc:
        raise ToolError(f"donegate: invalid input: {exc}") from None
    except DonegateError as exc:
        raise ToolError(f"donegate: {exc}") from None
    except Exception as exc:  # the one boundary where a failure becomes the tool's error
        raise ToolError(f"donegate: internal error: {type(exc).__name__}: {exc}") from None


async def _with_progress(
    ctx: Context[Any, Any], service: Service, work: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """``work`` in a worker thread, its progress reported (when the client asked for it) until
    it ends. The checks keep their own deadlines; a cancelled call still waits for its receipt
    (the thread is not abandoned)."""
    total = service.longest_deadline_s()
    started = time.monotonic()

    async def tick() -> None:
        while True:
            elapsed = round(time.monotonic() - started)
            try:
                await ctx.report_progress(elapsed, total, f"running the team's checks: {elapsed} s")
            except Exception:  # progress is a courtesy: a client gone stops it, not the checks
                return
            await anyio.sleep(PROGRESS_EVERY_S)

    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        outcome = await anyio.to_thread.run_sync(_settled, work)
        group.cancel_scope.cancel()
    if isinstance(outcome, ToolError):
        raise outcome
    return outcome


def _settled(work: Callable[[], dict[str, Any]]) -> dict[str, Any] | ToolError:
    """:func:`_answer`'s answer or its error, returned: raised inside the task group, the error
    would reach the client wrapped in an exception group, as a crash."""
    try:
        return _answer(work)
    except ToolError as exc:
        return exc


def _client_name(ctx: Context[Any, Any]) -> str | None:
    """The client's name as its ``initialize`` gave it, if it did (stdio has no session id)."""
    try:
        params = ctx.request_context.session.client_params
    except ValueError:  # no request: called outside the protocol
        return None
    if params is None:
        return None
    name = "".join(c for c in params.client_info.name if c.isprintable())[:64]
    return name or None
