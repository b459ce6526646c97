"""Collecting independent evidence for a claim, and verifying it: the one-call Python API.

::

    from donegate.collect import collect
    from donegate.config import load_config

    done = collect(claim, load_config("donegate.toml"))
    done.verdict.state   # "verified", "unverified" or "refuted"

Every configured check runs (concurrently, after the claim's mutations) and becomes one evidence
item signed ``donegate/<version>``. A check that could not observe is recorded with verifier kind
``absent`` and the reason, and keeps the claim from being verified: the team configured it, so a
verdict without it would be a verdict on less than the team asked for.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from donegate import globs
from donegate.__about__ import __version__
from donegate.checks import CheckContext, Observation, lookup
from donegate.claim import Claim, Evidence, Verifier
from donegate.config import CheckSpec, Config
from donegate.instant import Instant

if TYPE_CHECKING:
    from collections.abc import Callable

    from donegate.sealed._launch import Started
    from donegate.sealed.copy import Sealed

VERIFIER_ID = f"donegate/{__version__}"

# Modules needed only once the checks have run: imported while a check's command runs (the
# process waits on it, so a core is idle), not before it starts.
_AFTER_RUN = (
    "donegate.verdict",
    "xml.etree.ElementTree",  # test_run's JUnit reports (donegate.checks.runners._junit)
)


def collect(
    claim: Claim,
    config: Config,
    *,
    now: Instant | None = None,
    sealed: Sealed | None = None,
    tainted: frozenset[str] = frozenset(),
    void_runs: tuple[str, ...] = (),
    bytecode: Path | None = None,
    prestarted: Started | None = None,
    state_dir: Path | None = None,
) -> Claim:
    """``claim`` with one evidence item per configured check appended, and its verdict computed.

    Evidence already in the claim is kept, but only donegate's own and that of verifiers the
    configuration trusts can count; an item that claims donegate's verifier id without having been
    collected here is relabelled ``self_attested``. With ``sealed`` (see
    :func:`donegate.sealed.copy.seal`) the checks run on that copy of the workspace.
    ``tainted`` names paths whose content an agent wrote and no person accepted (see
    :class:`~donegate.checks.CheckContext`). ``void_runs`` says why no ``test_run`` may count
    (code under test that can shape its own verdict): such checks are recorded as absent.
    ``bytecode`` is where test runs keep the bytecode donegate compiled for them (a sealed run
    uses its state directory's); without one, every run compiles its imports anew.
    ``prestarted`` is a test command started before this call (see :mod:`donegate.cli.prestart`):
    the configuration's one ``test_run`` takes it over if it was started for exactly that check
    and this claim, and it is stopped otherwise. ``state_dir`` is the caller's state directory
    (a check keeps there what its evidence names; default: the default one).
    """
    claim = _relabel_forged(claim)
    prefetch = _Prefetch(_AFTER_RUN)
    collected = collect_evidence(
        claim,
        config,
        sealed=sealed,
        tainted=tainted,
        void_runs=void_runs,
        bytecode=bytecode,
        on_spawn=prefetch.start,
        prestarted=prestarted,
        state_dir=state_dir,
    )
    prefetch.join()
    # Imported here, whether or not the prefetch did: a module it failed to import raises now.
    from donegate.verdict import VerifyOptions, verify_claim

    first = len(claim.evidence)
    with_evidence = claim.model_copy(
        update={"evidence": [*claim.evidence, *collected], **_extensions(claim, collected)}
    )
    options = VerifyOptions(
        policy=config.applied_policy(),
        now=now,
        trust=config.trust | {VERIFIER_ID},
        # Every configured check must itself confirm the claim: a partial pass is no pass.
        required={first + i: spec.label for i, spec in enumerate(config.checks)},
        causes={first + i: cause for i, cause in enumerate(map(_cause, collected)) if cause},
    )
    return verify_claim(with_evidence, options)


def collect_evidence(
    claim: Claim,
    config: Config,
    *,
    sealed: Sealed | None = None,
    tainted: frozenset[str] = frozenset(),
    void_runs: tuple[str, ...] = (),
    bytecode: Path | None = None,
    on_spawn: Callable[[], None] | None = None,
    prestarted: Started | None = None,
    state_dir: Path | None = None,
) -> list[Evidence]:
    """Run every configured check concurrently; one evidence item each, in configuration order.

    ``on_spawn`` is called by a check whose command has started, ``prestarted`` is offered to a
    configuration of one check (see :class:`~donegate.checks.CheckContext`).
    """
    if prestarted is not None and len(config.checks) != 1:
        prestarted.close()  # started for one test_run: no other configuration runs it
        prestarted = None
    if not config.checks:
        return []
    context = CheckContext(
        config.base_dir,
        tuple(claim.mutations),
        config.redactor,
        tainted=tainted,
        bytecode=bytecode,
        on_spawn=on_spawn,
        prestarted=prestarted,
        state_dir=state_dir,
    )
    if sealed is not None:
        context = _in_copy(context, sealed)
    if len(config.checks) == 1:  # nothing to run beside it: no pool to import and start
        try:
            return [_observe(config.checks[0], claim, config, context, sealed, void_runs)]
        finally:
            if prestarted is not None:
                prestarted.close()  # ended here if the check did not take it over
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(config.checks)) as pool:
        futures = [
            pool.submit(_observe, spec, claim, config, context, sealed, void_runs)
            for spec in config.checks
        ]
        return [future.result() for future in futures]


EXTENSION_PREFIX = "x-"
"""A check type that is not one of the format's own: its evidence names the extension it uses."""


def _extensions(claim: Claim, collected: list[Evidence]) -> dict[str, Any]:
    """``{"extensions": {check_type: URI}}`` for the extension check types collected here, added
    to what the claim already lists (donegate's entry wins over one the agent wrote); else
    nothing, and the claim is left without the field."""
    used: dict[str, JsonValue] = {}
    for item in collected:
        if item.check_type.startswith(EXTENSION_PREFIX):
            uri = getattr(lookup(item.check_type), "extension", None)
            if isinstance(uri, str):
                used[item.check_type] = uri
    if not used:
        return {}
    listed = (claim.model_extra or {}).get("extensions")
    return {"extensions": {**(listed if isinstance(listed, dict) else {}), **used}}


def _in_copy(context: CheckContext, sealed: Sealed) -> CheckContext:
    workdir = sealed.workdir(context.base_dir)
    if workdir is None:  # nothing to run on: _unsealed_why refuses every check
        return context
    return dataclasses.replace(
        context,
        workdir=workdir,
        workdir_lasts=sealed.lasting,
        pythonpath=sealed.pythonpath,
        bytecode=sealed.bytecode,
    )


def _unsealed_why(sealed: Sealed, context: CheckContext) -> str | None:
    """Why no check may run on ``sealed``, if none may."""
    if context.workdir is None:
        return f"{context.base_dir} lies outside the sealed workspace {sealed.workspace}"
    if not sealed.counts:
        return "the checks would not run on the bytes donegate hashed: " + "; ".join(
            sealed.findings
        )
    return None


def _observe(
    spec: CheckSpec,
    claim: Claim,
    config: Config,
    context: CheckContext,
    sealed: Sealed | None,
    void_runs: tuple[str, ...] = (),
) -> Evidence:
    # The observation begins now (rule 2 compares this with the mutations), or began when the
    # command offered to this check started (earlier than any other start of it).
    early = context.prestarted
    at = Instant.now() if early is None else Instant.from_ns(early.at_ns)
    started = time.monotonic()
    why = _unsealed_why(sealed, context) if sealed is not None else None
    if void_runs and spec.settings.check_type == "test_run":
        observation = Observation.absent(
            "the written code can shape its own verdict, so no test run counts: "
            + "; ".join(void_runs),
            code_findings=list(void_runs),
        )
    elif why is not None:
        observation = Observation.absent(
            why, sealed_findings=list(sealed.findings if sealed else [])
        )
    else:
        observation = _collect(spec, context)
    if sealed is not None:
        observation = _unsealed(observation, sealed)
    elapsed = round(time.monotonic() - started, 3)
    return _evidence(spec, observation, at, elapsed, claim, config)


def _collect(spec: CheckSpec, context: CheckContext) -> Observation:
    try:
        return lookup(spec.settings.check_type).collect(spec.settings, context)
    except Exception as exc:  # a crashed check is an absent one, never a pass
        return Observation.absent(f"the check crashed: {type(exc).__name__}: {exc}")


def _unsealed(observation: Observation, sealed: Sealed) -> Observation:
    """The observation with the copy's paths written as the workspace's (evidence names files
    as the agent and the team know them)."""
    detail = _mapped(observation.detail, sealed)
    assert isinstance(detail, dict)
    why = sealed.unsealed(observation.why_not) if observation.why_not is not None else None
    return Observation(observation.observed, detail, why)


def _mapped(value: JsonValue, sealed: Sealed) -> JsonValue:
    if isinstance(value, str):
        return sealed.unsealed(value)
    if isinstance(value, list):
        return [_mapped(v, sealed) for v in value]
    if isinstance(value, dict):
        return {k: _mapped(v, sealed) for k, v in value.items()}
    return value


def _evidence(
    spec: CheckSpec,
    observation: Observation,
    at: Instant,
    elapsed: float,
    claim: Claim,
    config: Config,
) -> Evidence:
    settings, redact = spec.settings, config.redactor
    detail: dict[str, JsonValue] = {"check": spec.label, "elapsed_s": elapsed, **observation.detail}
    if observation.why_not is not None:
        detail["why_not_counted"] = observation.why_not
    if settings.warnings():
        detail["warnings"] = list(settings.warnings())
    fields: dict[str, Any] = {
        "check_type": settings.check_type,
        "target": redact.text(settings.target or settings.default_target()),
        "expected": settings.expected,
        "at": at,
        "covers": _covers(spec, claim, config),
        "detail": redact.json(detail),
    }
    if observation.observed is None:
        return Evidence(**fields, verifier=Verifier(id=VERIFIER_ID, kind="absent"))
    observed = redact.json(observation.observed)
    verifier = Verifier(id=VERIFIER_ID, kind="independent")
    return Evidence(**fields, observed_value=observed, verifier=verifier)


def _cause(item: Evidence) -> str | None:
    """What donegate saw of an item it collected, for the verdict's reason: why the check did
    not happen, else which tests failed (the reason would otherwise say only "verifier kind
    absent", or "exit_code expected 0, observed 1")."""
    from donegate.checks.test_run import failing_text, failing_total

    detail = (item.model_extra or {}).get("detail")
    if not isinstance(detail, dict):
        return None
    why, failing = detail.get("why_not_counted"), detail.get("failing")
    if isinstance(why, str):
        return why
    if isinstance(failing, list) and failing:
        return failing_text([str(name) for name in failing], failing_total(item.observed_value))
    return None


def _covers(spec: CheckSpec, claim: Claim, config: Config) -> list[str]:
    patterns = spec.settings.covers
    base = str(config.base_dir)
    return [
        m.id
        for m in claim.mutations
        if patterns is None or globs.first_match(globs.normalise(m.target, base), patterns)
    ]


def _relabel_forged(claim: Claim) -> Claim:
    forged = [i for i, e in enumerate(claim.evidence) if e.verifier.id.startswith("donegate/")]
    if not forged:
        return claim
    evidence = list(claim.evidence)
    for i in forged:
        item = evidence[i]
        evidence[i] = item.model_copy(
            update={
                "verifier": Verifier(id=item.verifier.id, kind="self_attested"),
                "donegate_note": "claims donegate's verifier id but was not collected by this run",
            }
        )
    return claim.model_copy(update={"evidence": evidence})


class _Prefetch:
    """Imports modules in a background thread, started at most once, from any thread.

    It only warms ``sys.modules``: the code that needs a module imports it again, which waits for
    an import under way and raises the error of one that failed (a failed import leaves nothing
    behind), so the prefetch can make nothing pass that would not without it.
    """

    def __init__(self, modules: tuple[str, ...]) -> None:
        self._modules = modules
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Begin importing, unless already begun; never raises (the imports then happen later)."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, name="donegate-prefetch", daemon=True)
            # No thread to spare: the modules are imported where they are used.
            with contextlib.suppress(RuntimeError):
                self._thread.start()

    def join(self) -> None:
        """Wait for the imports to end, if they began."""
        with self._lock:
            thread = self._thread
        if thread is not None and thread.ident is not None:
            thread.join()

    def _run(self) -> None:
        for name in self._modules:
            try:
                importlib.import_module(name)
            except Exception:  # raised again, in the caller's thread, where the module is used
                return
