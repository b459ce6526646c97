"""What every collector shares: its settings' base model, what it is given, and what it returns.

A collector observes the world by the team's configuration alone. It is handed the claim's
mutations (as data, to know which files were written), never anything to run: commands, URLs and
queries are fields of its settings, which come only from ``donegate.toml``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from donegate.claim import Mutation
from donegate.redact import NO_SECRETS, Redactor

if TYPE_CHECKING:
    from donegate.sealed._launch import Started

PositiveSeconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class CheckSettings(BaseModel):
    """One ``[[checks]]`` table: the keys every check type accepts.

    ``covers`` holds globs over mutation targets (default: every mutation); ``target`` is what the
    evidence names (default: derived from the check, secrets masked); ``name`` labels the check in
    output. ``satisfies`` names the ``[[requirements]]`` rows (role ``check``) this check's
    passing evidence meets.
    """

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid", allow_inf_nan=False)

    check_type: str
    name: str | None = None
    target: str | None = None
    covers: list[str] | None = None
    expected: dict[str, JsonValue] = Field(default_factory=dict)
    satisfies: list[str] | None = None

    def default_target(self) -> str:
        """The evidence target when the configuration names none."""
        return self.check_type

    def warnings(self) -> list[str]:
        """Weaknesses worth telling the team about; the check still runs."""
        return []


@dataclass(frozen=True, slots=True)
class CheckContext:
    """What a collector may know besides its settings.

    ``base_dir`` is the directory of the configuration file (relative paths start there);
    ``mutations`` are the claim's, read as data only; ``redactor`` masks secrets in any text the
    collector reports.

    ``workdir``, when set, is a sealed copy of ``base_dir`` (the exact bytes donegate hashed at a
    stop, where no process of the agent can change them): commands run there instead, with
    ``pythonpath`` put first so that the code under test is imported from the copy.
    ``workdir_lasts``: the copy is kept from stop to stop at the same path, so what a run
    compiles there is worth keeping for the next.
    ``tainted`` holds paths (relative to ``base_dir``) whose content an agent wrote and no person
    has accepted: a check whose judge reads one of them (a runner file, a protected test) does not
    count. ``bytecode``, when set, is where donegate keeps the bytecode it compiled for earlier
    test runs (see :mod:`donegate.sealed._bytecode`); without it every run compiles anew.
    ``on_spawn``, when set, is called once a check's command has started: the caller may then use
    the idle core for work it needs only after the run (see :mod:`donegate.collect`).
    ``prestarted`` is a ``test_run`` command started before the checks were loaded (see
    :mod:`donegate.cli.prestart`); the check it was started for takes it over.
    ``state_dir`` is the state directory of the gate or command collecting (where a check keeps
    what its evidence names, such as a screenshot); None: the default one.
    """

    base_dir: Path
    mutations: tuple[Mutation, ...] = ()
    redactor: Redactor = NO_SECRETS
    workdir: Path | None = None
    workdir_lasts: bool = False
    pythonpath: tuple[str, ...] = ()
    tainted: frozenset[str] = frozenset()
    bytecode: Path | None = None
    on_spawn: Callable[[], None] | None = None
    prestarted: Started | None = None
    state_dir: Path | None = None

    @property
    def run_dir(self) -> Path:
        """Where commands run: the sealed copy when there is one, else ``base_dir``."""
        return self.workdir if self.workdir is not None else self.base_dir


@dataclass(frozen=True, slots=True)
class Observation:
    """What a collector saw.

    ``observed`` is None when the check could not observe (it timed out, crashed, could not
    connect, ran nothing, or its result does not count); ``why_not`` then says why, and the
    evidence is recorded as ``absent``. ``detail`` is for people: duration, attempts, output tail.
    Keys the collector did not observe are left out of ``observed``, never set to null.
    """

    observed: dict[str, JsonValue] | None
    detail: dict[str, JsonValue] = field(default_factory=dict)
    why_not: str | None = None

    @classmethod
    def seen(cls, observed: dict[str, JsonValue], **detail: JsonValue) -> Observation:
        """An observation that counts."""
        return cls(observed=observed, detail=detail)

    @classmethod
    def absent(cls, why: str, **detail: JsonValue) -> Observation:
        """No observation that counts, and why."""
        return cls(observed=None, detail=detail, why_not=why)


S_contra = TypeVar("S_contra", bound=CheckSettings, contravariant=True)


class Collector(Protocol[S_contra]):
    """A check type: the model of its ``[[checks]]`` table and the function that observes."""

    @property
    def settings_model(self) -> type[CheckSettings]:
        """The pydantic model that validates this check type's configuration table."""
        ...

    def collect(self, settings: S_contra, context: CheckContext) -> Observation:
        """Observe the world as ``settings`` say; never raise for a failed observation."""
        ...


AnyCollector = Collector[Any]
