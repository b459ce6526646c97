"""The completion gate for an agent built with a Python framework, usable with none.

::

    from donegate.frameworks import CompletionGate

    gate = CompletionGate("donegate.toml", agent="support-bot", task="Move account 4471")

    @gate.mutation(kind="state_write", target="accounts/{account_id}")
    def update_address(account_id: int, address: str) -> str: ...

    outcome = gate.check("Updated the address of account 4471.")
    if outcome.sent_back:
        ...  # give outcome.message to the model and let it try again

A *run* is one task of the agent: its own session in the gate (its own budget) and the changes
its tools made. The gate begins one when it is built; :meth:`CompletionGate.begin` begins the
next. A run begun inside a thread or an asyncio task is that context's own (a context variable),
so concurrent runs of one agent keep their changes apart.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from donegate.errors import InvalidInput
from donegate.frameworks import _reading
from donegate.frameworks._reading import Change
from donegate.frameworks._tools import wrap
from donegate.frameworks.outcome import NotVerified, Outcome
from donegate.instant import Instant

if TYPE_CHECKING:
    from donegate.claim import Claim
    from donegate.config import Config
    from donegate.gate import Decision
    from donegate.gate.options import GateOptions
    from donegate.ledger import Ledger

F = TypeVar("F", bound=Callable[..., Any])

# What the agent is told on a veto: about the systems its tools changed, never about files,
# commands or a verifier it could run. Each asks for what the agent can do with its tools.
# A team's [gate] feedback_templates override these one by one.
_NOTHING_CHANGED = (
    "Nothing has been changed yet, and this task needs a change. Make it with your tools, then "
    "answer again."
)
TEMPLATES: Mapping[str, str] = MappingProxyType(
    {
        # Every change a tool records is a "source" write: the other two never arise here.
        "no_source_write_absent": _NOTHING_CHANGED,
        "no_source_write_cosmetic": _NOTHING_CHANGED,
        "no_source_write_other": _NOTHING_CHANGED,
        "verification_after_write_red": (
            "donegate read the world back after your changes, and it does not show the task "
            "done.{findings} Correct it with your tools, then answer again."
        ),
        "failed_verification": (
            "The world still does not show the task done (attempt {attempts}).{findings} "
            "Correct it with your tools, then answer again."
        ),
        "repeated_verification_failures": (
            "The world has not shown the task done {attempts} times in a row.{findings} Re-read "
            "what was observed and reconsider the approach before changing anything again."
        ),
        "missing_verification": (
            "Your changes have not been read back yet. Answer again once they are made."
        ),
    }
)
CONFIG_INVALID = "config_invalid"
FAILED = "donegate_error"


class Run:
    """One task of the agent: its session id, and what its tools changed, in order."""

    def __init__(
        self,
        session_id: str,
        task: str | None,
        requires_write: bool | None,
        config: Config | None,
        config_error: str | None,
    ) -> None:
        self.session_id = session_id
        self.task = task
        self.requires_write = requires_write
        self.config = config
        self.config_error = config_error
        self.attempts = 0
        self.last: Outcome | None = None
        self._changes: list[Change] = []
        self._lock = threading.Lock()

    @property
    def changes(self) -> tuple[Change, ...]:
        """The changes recorded so far, oldest first."""
        with self._lock:
            return tuple(self._changes)

    def record(
        self, kind: str, target: str, tool: str | None = None, error: str | None = None
    ) -> None:
        """Record one change, timed now: call it after the change was made."""
        change = Change(kind, target, Instant.now(), tool, error)
        with self._lock:
            self._changes.append(change)


class CompletionGate:
    """Gates one agent's end on the team's checks, as ``donegate`` gates a coding agent's stop.

    ``config`` is the team's ``donegate.toml`` (a path, or a loaded :class:`Config`): the checks,
    the ``[policy]`` and the ``[gate]`` budgets come only from it. It is read when each run
    begins; a file that is missing or invalid lets no run be verified (every check says so).
    ``agent`` names the agent in receipts, ``host`` the framework (``pydantic-ai``,
    ``openai-agents``, ``langgraph``; ``python`` by default). ``state_dir`` is where the ledger
    and the gate's state live (else ``$DONEGATE_STATE_DIR``, else the user's state directory).
    ``requires_write``: whether the task needs a change (None: the team's ``[gate]`` decides,
    else yes); ``strict``: a run let go without being verified raises :class:`NotVerified`.

    A run that changed nothing has no claim to check, and the ladder decides on that alone: a
    task that needs a change is sent back (``no_source_write``, a soft veto, ``max_vetoes`` of
    them), one that needs none is let go, not verified (``no_workspace_write``).
    """

    def __init__(
        self,
        config: str | Path | Config = "donegate.toml",
        *,
        agent: str,
        task: str | None = None,
        host: str = "python",
        state_dir: str | Path | None = None,
        requires_write: bool | None = None,
        strict: bool = False,
    ) -> None:
        for name, value in (("agent", agent), ("host", host)):
            if not isinstance(value, str) or not value.strip():
                raise InvalidInput(f"got {value!r}, expected a non-blank name", name)
        self.agent = agent
        self.host = host
        self.state_dir = state_dir
        self.strict = strict
        self._config = config
        self._current: ContextVar[Run | None] = ContextVar("donegate_run", default=None)
        self._latest = self.begin(task, requires_write=requires_write)

    def begin(self, task: str | None = None, *, requires_write: bool | None = None) -> Run:
        """Begin the next run, in this thread or task (and those it starts): a new session with
        a budget of its own, no changes yet, and the configuration as it is now."""
        config, error = self._load()
        session_id = f"{self.agent}-{secrets.token_hex(6)}"
        run = Run(session_id, task, requires_write, config, error)
        self._current.set(run)
        self._latest = run
        return run

    @property
    def run(self) -> Run:
        """The current run: the one begun in this context, else the last one begun."""
        return self._current.get() or self._latest

    @property
    def max_sendbacks(self) -> int | None:
        """The most times in a row the current run can be sent back before the team's budgets
        let it go (None: no budget bounds it, one of them being 0). A framework that counts its
        own retries should allow at least this many: past its own count a veto is let go as
        ``blocks_in_a_row_cap_reached``, not verified."""
        config = self.run.config
        if config is None:
            return 0
        options = _options(config)
        budgets = [options.max_vetoes, options.max_strict_vetoes]
        if options.judge is not None:
            budgets.append(options.judge.max_invocations)
        total = None if 0 in budgets else sum(budgets)
        if options.max_blocks_in_a_row > 0:
            cap = options.max_blocks_in_a_row - 1
            total = cap if total is None else min(total, cap)
        return total

    def record(self, kind: str, target: str, *, tool: str | None = None) -> None:
        """Record a change the agent made without a wrapped tool (call it once it is made)."""
        self.run.record(kind, target, tool)

    def mutation(self, *, kind: str, target: str) -> Callable[[F], F]:
        """Wrap a tool that changes the world: each call is recorded in the current run, timed
        when it ended, with ``target`` filled from the call's arguments (``accounts/{id}``).
        A call that raised is recorded as attempted (see :mod:`._tools`)."""

        def recording(kind_: str, target_: str, tool: str | None, error: str | None) -> None:
            self.run.record(kind_, target_, tool, error)

        def decorate(func: F) -> F:
            return wrap(func, kind=kind, target=target, record=recording)

        return decorate

    def check(self, claimed_outcome: str, *, sendbacks_left: int | None = None) -> Outcome:
        """May the current run end now, having said ``claimed_outcome``? One receipt per call.

        1. the receipt is opened, pending: whatever happens next, the attempt is on record.
        2. the team's configuration, as the run began: missing or invalid, the run is let go
           not verified (``config_invalid``): the agent cannot mend it.
        3. the run's changes become the claim's mutations; the configured checks read the world
           (``collect``) and the claim gets its verdict. No change: no claim (verdict ``none``).
        4. the gate decides from the changes and the verdict: its ladder, its budgets (the
           ``[gate]`` table) and the run's history. ``sendbacks_left`` is how many more times the
           framework can send the agent back (0: a veto is let go, as the in-a-row cap does).
        5. ``[policy] on_unverified`` other than ``block`` lets a vetoed run go, on the record.
        6. the receipt is closed; a strict gate raises :class:`NotVerified` for a run let go
           without being verified.

        donegate failing on the way (anything but a decision) lets the run go not verified
        (``donegate_error``), said in the receipt; a ledger that cannot be written raises.
        """
        run = self.run
        run.attempts += 1
        from donegate.ledger import Ledger

        with Ledger(self.state_dir) as ledger:
            receipt_id = self._open(ledger, run)  # 1
            try:
                outcome = self._decide(ledger, receipt_id, run, claimed_outcome, sendbacks_left)
            except Exception as exc:
                outcome = self._failed(ledger, receipt_id, run, claimed_outcome, exc)
        run.last = outcome
        if self.strict and outcome.allowed and not outcome.verified:
            raise NotVerified(outcome)  # 6
        return outcome

    # -- the steps --------------------------------------------------------------------------

    def _decide(
        self,
        ledger: Ledger,
        receipt_id: int,
        run: Run,
        said: str,
        sendbacks_left: int | None,
    ) -> Outcome:
        if run.config is None:  # 2
            why = f"donegate: this run is NOT verified: {run.config_error}"
            return self._let_go(ledger, receipt_id, run, said, CONFIG_INVALID, why)
        config = run.config
        changes = run.changes
        claim = self._verify(run, config, said, changes)  # 3
        decision = self._gate(run, config, said, changes, claim, sendbacks_left)  # 4
        mode = (config.policy.on_unverified if config.policy is not None else None) or "block"
        sent_back = not decision.confirm and mode == "block"  # 5
        verified = decision.confirm and decision.outcome == "verified"
        verdict = claim.verdict.state if claim is not None and claim.verdict else "none"
        notice = None if sent_back or verified else _notice(decision, claim)
        outcome = Outcome(
            allowed=not sent_back,
            verified=verified,
            verdict=verdict,
            reason=decision.reason,
            message=decision.message if sent_back else None,
            notice=notice,
            receipt_id=receipt_id,
            session_id=run.session_id,
            attempt=run.attempts,
            converted_from=decision.converted_from,
        )
        doc = {**self._doc(run, outcome, changes), "gate": decision.to_json_dict()}
        doc["on_unverified"] = mode
        claim_doc = claim.to_json_dict() if claim is not None else {}
        self._close(ledger, receipt_id, outcome, claim_doc, doc)  # 6
        return outcome

    def _verify(
        self, run: Run, config: Config, said: str, changes: tuple[Change, ...]
    ) -> Claim | None:
        if not changes:
            return None
        from donegate.collect import collect

        claim = _reading.build_claim(run.session_id, self.agent, run.task, said, changes)
        state_dir = None if self.state_dir is None else Path(self.state_dir)
        return collect(claim, config, state_dir=state_dir)

    def _gate(
        self,
        run: Run,
        config: Config,
        said: str,
        changes: tuple[Change, ...],
        claim: Claim | None,
        sendbacks_left: int | None,
    ) -> Decision:
        from donegate.gate import Gate, GateContext, GateStore

        store = GateStore.in_state_dir(self.state_dir)
        try:
            gate = Gate(_options(config), store=store)
            history = gate.history(run.session_id)
            if sendbacks_left is not None and sendbacks_left <= 0:
                # The framework cannot send the agent back again: the next veto is let go,
                # attributably (blocks_in_a_row_cap_reached), not lost in its own error.
                cap = history.blocks_in_a_row + 1
                gate.options = gate.options._replace(max_blocks_in_a_row=cap)
            facts = _reading.facts(changes, claim, history, run.requires_write)
            satisfies = tuple(tuple(s.settings.satisfies or ()) for s in config.checks)
            if claim is not None and claim.verdict is not None and any(satisfies):
                facts.update(_reading.requirement_facts(claim, satisfies))
            context = GateContext(run.session_id, task=run.task, stop_reason="sentinel", text=said)
            return gate.decide(run.session_id, facts, context=context)
        finally:
            store.close()

    def _load(self) -> tuple[Config | None, str | None]:
        from donegate.config import Config, load_config

        if isinstance(self._config, Config):
            return self._config, None
        try:
            config = load_config(self._config)
            _options(config)  # [gate] mistakes are found now, not at the first check
        except Exception as exc:
            return None, f"the configuration {self._config} cannot be used: {_describe(exc)}"
        return config, None

    def _failed(
        self, ledger: Ledger, receipt_id: int, run: Run, said: str, exc: Exception
    ) -> Outcome:
        notice = f"donegate: this run is NOT verified: donegate failed: {_describe(exc)}"
        return self._let_go(ledger, receipt_id, run, said, FAILED, notice)

    def _let_go(
        self, ledger: Ledger, receipt_id: int, run: Run, said: str, reason: str, notice: str
    ) -> Outcome:
        outcome = Outcome(
            allowed=True,
            verified=False,
            verdict="unverified",
            reason=reason,
            message=None,
            notice=notice,
            receipt_id=receipt_id,
            session_id=run.session_id,
            attempt=run.attempts,
        )
        doc = {**self._doc(run, outcome, run.changes), "error": notice, "said": said[:200]}
        self._close(ledger, receipt_id, outcome, {}, doc)
        return outcome

    def _open(self, ledger: Ledger, run: Run) -> int:
        from donegate.ledger import PENDING

        return ledger.record(
            session_id=run.session_id,
            host=self.host,
            workspace=self._workspace(run),
            verdict="unverified",
            decision="allow",
            reason=PENDING,
            claim={},
            decision_doc={"agent": self.agent, "attempt": run.attempts, "pending": True},
        )

    def _close(
        self,
        ledger: Ledger,
        receipt_id: int,
        outcome: Outcome,
        claim: Mapping[str, Any],
        doc: Mapping[str, Any],
    ) -> None:
        ledger.close_receipt(
            receipt_id,
            verdict=outcome.verdict,
            decision="allow" if outcome.allowed else "veto",
            reason=outcome.reason,
            claim=claim,
            decision_doc=doc,
        )

    def _doc(self, run: Run, outcome: Outcome, changes: tuple[Change, ...]) -> dict[str, Any]:
        said = outcome.message if outcome.sent_back else outcome.notice
        return {
            "host_event": "agent_end",
            "agent": self.agent,
            "task": run.task,
            "attempt": run.attempts,
            "answer": {"decision": "block" if outcome.sent_back else "allow", "reason": said},
            "mutations": [
                {"kind": c.kind, "target": c.target, "at": str(c.at), "tool": c.tool}
                | ({"error": c.error} if c.error else {})
                for c in changes
            ],
        }

    def _workspace(self, run: Run) -> str:
        # Receipts group by workspace: the directory of the team's file, as for coding agents.
        if run.config is not None:
            return str(run.config.base_dir)
        return str(Path(str(self._config)).resolve().parent)


def _options(config: Config) -> GateOptions:
    """The team's ``[gate]`` options, with the framework's feedback under the team's own."""
    options = config.gate.gate_options()
    templates = {**TEMPLATES, **options.feedback_templates}
    return options._replace(feedback_templates=MappingProxyType(templates))


def _notice(decision: Decision, claim: Claim | None) -> str:
    """What the person is told of a run let go without being verified."""
    why = decision.reason
    if decision.converted_from is not None:
        why = f"{decision.reason}, after {decision.converted_from}"
    found = ""
    if claim is not None and claim.verdict is not None and claim.verdict.state != "verified":
        found = f": {_reading.findings(claim)}"
    elif decision.message:
        found = f": {decision.message}"
    return f"donegate: this run is NOT verified ({why}){found}"


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, InvalidInput) else f"{type(exc).__name__}: {exc}"
