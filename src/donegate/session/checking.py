"""A stop's checks: run sealed, the test command started before the claim's models are loaded.

The checks run on a private copy of the exact bytes the stop's snapshot hashed (see
:mod:`donegate.sealed.copy`). Building the claim loads pydantic and the claim models, and the
scan parses what the agent wrote: a few tenths of a second in which the machine's other core
would wait. So, where the team's configuration is one plain ``test_run`` (as ``donegate
collect``'s prestart reads it), its command starts as soon as the copy is ready, and the claim
and the scan are made while it runs. Nothing is decided early: the check takes the run over only
if it is exactly the run it would have started (the same command, settings, place, claim
mutations); otherwise the early run is stopped and the check runs its own, as without it.

For a confined agent, whose copy is kept from stop to stop, the command starts earlier still: it
is parked in the kept copy before the stop takes its snapshot (:func:`park`), its interpreter and
pytest loading on the other core, and given its run once the copy is up to date (see
``donegate.sealed._parker`` for what makes that run the one a cold start would make).
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator, Sequence

from donegate.session.settings import CONFIG_FILE, Settings
from donegate.session.workspace import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from donegate.claim import Claim
    from donegate.sealed._launch import Launch, Place, Started
    from donegate.sealed.copy import Sealed


def park(space: Workspace, settings: Settings) -> Started | None:
    """The team's one plain ``test_run`` started in the workspace's kept copy and held before it
    reads any file of it (see ``_launch.park``), for a confined agent's stop: its interpreter
    and pytest load while the stop takes its snapshot. None where it cannot be."""
    launch = _plain_launch(settings)
    if launch is None or not settings.has_checks:
        return None
    from donegate.sealed import _isolation, _launch
    from donegate.sealed.copy import kept_copy

    _isolation.probe_soon()
    kept = kept_copy(space.root, space.layout.state_dir)
    place = None if kept is None else _place(space, settings, kept, ())
    if place is None or not _launch.parkable(launch, place):
        return None
    try:
        return _launch.park(launch, place)
    except OSError:  # then the run starts cold, once the copy is ready
        return None


@contextlib.contextmanager
def sealed_run(
    space: Workspace,
    settings: Settings,
    mutations: Sequence[tuple[str, str]],
    *,
    keep: bool,
    parked: Started | None = None,
) -> Iterator[tuple[Sealed | None, Started | None]]:
    """The sealed copy for this stop's checks (None without checks), and the test command
    already started in it for ``mutations`` (id, target) when the configuration allows: the
    ``parked`` run given its run (see :func:`park`), where it fits.

    ``keep``: the agent is confined (it cannot write the state directory), so the copy is kept
    for the next stop, which then copies only what changed.
    """
    if settings.config_text is None or not settings.has_checks:
        yield None, None
        return
    from donegate.sealed import _isolation
    from donegate.sealed.copy import seal

    _isolation.probe_soon()  # answered while the copy is brought up to date
    state = space.layout.state_dir
    with seal(space.current, state_dir=state, keep=keep) as sealed:
        started = _start(space, settings, sealed, mutations, parked)
        try:
            yield sealed, started
        finally:
            if started is not None:
                started.close()  # idempotent: a check that took it over has closed it already


def _start(
    space: Workspace,
    settings: Settings,
    sealed: Sealed,
    mutations: Sequence[tuple[str, str]],
    parked: Started | None,
) -> Started | None:
    """The team's one plain ``test_run`` started in ``sealed`` (``parked`` given it, where it
    fits), or None (the check starts it)."""
    from donegate.sealed import _launch

    # A parked run was started for this very configuration's launch: not parsed again.
    launch = parked.launch if parked is not None else _plain_launch(settings)
    place = _place(space, settings, sealed, mutations)
    if not sealed.counts or launch is None or place is None:
        return None  # the check refuses to run on this copy, or starts its own
    if parked is not None:
        if parked.release(place, [sealed.root]):
            return parked
        parked.close()  # it holds the run's bytecode prefix, which the new run is to use
    started = _launch.start(launch, place)
    return started if isinstance(started, _launch.Started) else None


def _plain_launch(settings: Settings) -> Launch | None:
    """The launch of the team's one plain ``test_run`` (see ``_launch.plain_launch``), or None."""
    from donegate import configtext
    from donegate.errors import InvalidInput
    from donegate.sealed import _launch

    if settings.config_text is None:
        return None
    try:
        source = str(settings.root / CONFIG_FILE)
        raw, _ = configtext.expanded(settings.config_text, os.environ, source)
    except InvalidInput:
        return None  # the check says why, from the same text
    return _launch.plain_launch(raw)


def _place(
    space: Workspace, settings: Settings, sealed: Sealed, mutations: Sequence[tuple[str, str]]
) -> Place | None:
    """Where the run happens in ``sealed``; None when the configuration's folder lies outside
    the sealed workspace."""
    from donegate.sealed import _launch

    workdir = sealed.workdir(settings.root)
    if workdir is None:
        return None
    return _launch.Place(
        base_dir=settings.root,
        run_dir=workdir,
        mutations=tuple(mutations),
        tainted=space.tainted,
        pythonpath=sealed.pythonpath,
        bytecode=sealed.bytecode,
        lasting=sealed.lasting,
    )


# What a stop imports once its checks have run: imported while the command runs instead, when
# the process would otherwise wait on it with a core to spare. What collect needs after its run
# (the verdict, the JUnit reader) it warms itself (donegate.collect._AFTER_RUN).
_AFTER_RUN = (
    "donegate.collect",
    "donegate.signing.evidence",
    "donegate.signing.keys",  # cryptography: some 20 ms
    "donegate.teamledger.background",
)


def while_it_runs(started: Started | None) -> None:
    """Import what the stop needs after ``started`` ends, if it still runs. Only a warm-up: a
    module that fails to import here is imported again where it is used, and fails there."""
    if started is None or not started.running:
        return
    for name in _AFTER_RUN:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def checked(
    claim: Claim,
    settings: Settings,
    space: Workspace,
    sealed: Sealed | None,
    started: Started | None,
    void_runs: tuple[str, ...] = (),
) -> Claim:
    """``claim`` with the configured checks' evidence and its verdict.

    Without checks the claim still gets a verdict (unverified: nothing observed it), so that the
    receipt says what was written and that nothing confirmed it.
    """
    from donegate.collect import collect
    from donegate.config import parse_config
    from donegate.verdict import verify_claim

    if sealed is None or settings.config_text is None:
        return verify_claim(claim)
    source = str(settings.root / CONFIG_FILE)
    config = parse_config(settings.config_text, base_dir=settings.root, source=source)
    return collect(
        claim,
        config,
        sealed=sealed,
        tainted=space.tainted,
        void_runs=void_runs,
        state_dir=space.layout.state_dir,
        prestarted=started,
    )
