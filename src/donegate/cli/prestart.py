"""``donegate collect``'s test command, started before the rest of donegate is loaded.

A collect spends about a tenth of a second loading click, pydantic and the claim models before it
can start the team's test command; the command then runs on one core while the other waits.
Here the command starts first, from plain code: the arguments, the configuration and the flags'
claim are read just far enough to know what to run, and the run is started exactly as
``test_run`` would start it (:func:`donegate.sealed._launch.start`). The collect then goes on as
always, and loads, parses and validates everything while the tests run.

Nothing is decided here. The run is taken over only by a ``test_run`` check whose validated
settings, place and claim are exactly those it was started for (click's reading of the arguments,
the configuration's models, the claim's models); anything else (a configuration or claim that
turns out invalid, a different reading, more than one check) stops it, and the collect runs what
it would have run without it. Whatever this module does not recognise, it leaves to that path:
a claim file, ``--help``, a second ``--config``, a configuration with other checks or keys.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from donegate import configtext, statedir
from donegate.errors import InvalidInput
from donegate.record import Record
from donegate.sealed import _launch
from donegate.sealed._bytecode import STORE_DIR

_VALUED = ("--config", "--task-id", "--claimed-outcome", "--mutation")
_SWITCHES = ("--json", "--enforce", "--sign")
# The keys of a test_run table that Launch holds, and those that do not change what runs.
# must_pass changes what runs: its tests run a second time, in another order.


class Flags(Record):
    """What a collect builds its claim from, and the configuration it reads."""

    config: Path
    task_id: str
    outcome: str
    mutations: tuple[str, ...]


class Prestart(Record):
    """A collect's test command, started for ``flags``; ``claimed_ns`` times the flags' claim."""

    flags: Flags
    claimed_ns: int
    started: _launch.Started

    def run_for(self, flags: Flags) -> _launch.Started | None:
        """The run, when ``flags`` (as click read them) are those it was started for."""
        return self.started if flags == self.flags else None

    def close(self) -> None:
        """Stop the run if nothing took it over, and clean up."""
        self.started.close()


def prestart(args: list[str]) -> Prestart | None:
    """Start the test command of ``donegate collect ARGS``, when it is plain what it is."""
    claimed_ns = time.time_ns()  # the flags' mutations are timed when the command began
    flags = _flags(args)
    if flags is None:
        return None
    try:
        started = _start(flags)
    except (InvalidInput, OSError, ValueError):
        return None  # the collect itself reads the same and says what is wrong
    return None if started is None else Prestart(flags, claimed_ns, started)


def bytecode_store() -> Path | None:
    """Where test runs keep donegate's bytecode: the state directory's store, if there is one."""
    try:
        return statedir.ensure() / STORE_DIR
    except InvalidInput:
        return None  # no state directory: every run compiles its imports anew


def _start(flags: Flags) -> _launch.Started | None:
    mutations = [spec.partition(":") for spec in flags.mutations]
    if not flags.task_id or not all(kind and sep and target for kind, sep, target in mutations):
        return None
    raw, _ = configtext.expanded(configtext.read_text(flags.config), os.environ, str(flags.config))
    launch = _launch.plain_launch(raw)
    if launch is None:
        return None
    base_dir = flags.config.resolve().parent
    place = _launch.Place(
        base_dir=base_dir,
        run_dir=base_dir,
        mutations=tuple((f"m{i}", m[2]) for i, m in enumerate(mutations, start=1)),
        bytecode=bytecode_store(),
    )
    started = _launch.start(launch, place)
    return started if isinstance(started, _launch.Started) else None


def _flags(args: list[str]) -> Flags | None:
    """The arguments, when they are only the options named above (else click reads them)."""
    values: dict[str, str] = {}
    mutations: list[str] = []
    rest = iter(args)
    for arg in rest:
        name, equals, value = arg.partition("=")
        if arg in _SWITCHES:
            continue
        if name not in _VALUED:
            return None
        if not equals:
            following = next(rest, None)
            if following is None:
                return None
            value = following
        if name == "--mutation":
            mutations.append(value)
        elif name in values:
            return None
        else:
            values[name] = value
    config = Path(values.get("--config", "donegate.toml"))
    task_id, outcome = values.get("--task-id", ""), values.get("--claimed-outcome", "")
    return Flags(config, task_id, outcome, tuple(mutations))
