"""Starting a ``test_run``'s command, and ending it: everything but the judging, in plain code.

``test_run`` validates its settings with pydantic and judges what ran; what decides the command,
what must be refused before it runs, the environment, the witness, the bytecode store and the
reports live here, without pydantic or the claim models. So ``donegate collect`` can start the
team's command before it has loaded those (:mod:`donegate.cli.prestart`): the same function
starts a run either way, and a run started early counts only for the very :class:`Launch` and
:class:`Place` it was started for (see :meth:`Started.fits`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shlex
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from donegate import globs
from donegate.checks import runners
from donegate.checks.runners import _reportfile
from donegate.record import Record
from donegate.sealed import (
    _bytecode,
    _isolation,
    _rewrites,
    _runenv,
    _scratch,
    _watch,
    _witness,
)
from donegate.sealed._isolation import Isolation
from donegate.sealed._process import Running, RunResult, start_group
from donegate.sealed._rewrites import Rewritten
from donegate.sealed._witness import WitnessReport, WitnessSetup
from donegate.workspace.runnerfiles import JUDGE_FILES, RUNNER_FILES

if TYPE_CHECKING:
    from donegate.checks.runners._junit import TestReport
    from donegate.checks.runners._outcomes import Outcomes

_PYTEST_IN_SHELL = re.compile(r"(?:^|[\s/;&|(])(?:py\.test|pytest)(?:\s|$|;|&|\|)")
DEFAULT_TIMEOUT_S = 900.0


# The default of a mapping field: one shared value, so one nobody can change.
NOTHING: Mapping[str, str] = MappingProxyType({})


class Launch(Record):
    """What a ``test_run`` runs, and how: the part of its settings that decides the command."""

    command: tuple[str, ...] | str
    shell: bool = False
    cwd: str | None = None
    env: Mapping[str, str] = NOTHING
    timeout_s: float = DEFAULT_TIMEOUT_S
    protect: tuple[str, ...] = ()
    protect_runner_files: bool = True
    runner: runners.Runner | None = None
    report: str | None = None
    # Tests run a second time, in the same process: pytest's, in the reverse order; go test's
    # and node --test's, all of them (see runners.repeats).
    again: tuple[str, ...] = ()
    isolation: Isolation = Isolation()

    def runner_kind(self) -> runners.Runner | None:
        """The runner: as configured, ``junit`` with a ``report``, else told from the command."""
        if self.runner is not None:
            return self.runner
        if self.report is not None:
            return "junit"
        if self.is_pytest():
            return "pytest"
        return None if isinstance(self.command, str) else runners.detect(list(self.command))

    def is_pytest(self) -> bool:
        """Does the command run pytest (so that donegate can ask it for a JUnit report)?"""
        if self.runner is not None or self.report is not None:
            return self.runner == "pytest"
        if isinstance(self.command, str):
            return bool(_PYTEST_IN_SHELL.search(self.command))
        names = [Path(arg).name for arg in self.command[:4]]
        return any(n in ("pytest", "py.test") for n in names)


class Place(Record):
    """Where a run happens, and for which claim.

    ``mutations`` are the claim's, as (id, target) pairs; the rest is as
    :class:`~donegate.checks.CheckContext` says.
    """

    base_dir: Path
    run_dir: Path
    mutations: tuple[tuple[str, str], ...] = ()
    tainted: frozenset[str] = frozenset()
    pythonpath: tuple[str, ...] = ()
    bytecode: Path | None = None
    lasting: bool = False  # run_dir is a kept sealed copy: the same path at the next run


class Refusal(Record):
    """Why the command was not run at all."""

    why: str
    detail: Mapping[str, str] = NOTHING


class Invocation(Record):
    """The command as donegate runs it, and where its reports go."""

    argv: list[str]
    env: dict[str, str]
    junit: Path | None = None
    witness: WitnessSetup | None = None
    runner_report: runners.RunnerReport | None = None


class Reports(Record):
    """What the run reported: the witness and JUnit (pytest), or another runner's report."""

    witness: WitnessReport | None = None
    junit: TestReport | None = None
    summary: TestReport | None = None
    outcomes: Outcomes | None = None
    unread: str | None = None


class Started:
    """A run under way: its command started (or failed to start), its scratch directory and
    bytecode prefix held until :meth:`finish` or :meth:`close`.

    ``at_ns`` is the wall-clock time (ns since the epoch) just before the command started: when
    the observation began. ``started`` is the monotonic time of the same moment.
    """

    def __init__(self, launch: Launch, place: Place) -> None:
        self.launch, self.place = launch, place
        self.at_ns, self.started = time.time_ns(), time.monotonic()
        self._open = contextlib.ExitStack()
        self._running: Running | None = None
        self._ended: RunResult | None = None
        self.invocation: Invocation | None = None
        # The sandbox the command runs in (see _isolation), or why it runs in none.
        self.isolated_by: str | None = None
        self.not_isolated: str | None = None
        self._counted = False  # waited for by finish(): the run is judged, not stopped or void
        self._parked: _Parked | None = None  # started, not yet given its run (see park)

    def fits(self, launch: Launch, place: Place) -> bool:
        """Is this the run of ``launch`` at ``place`` (and not finished, nor closed, nor parked)?"""
        unparked = self._parked is None
        return self.running and unparked and self.launch == launch and self.place == place

    def release(self, place: Place, refreshed: Sequence[Path] = ()) -> bool:
        """Give a parked run (see :func:`park`) the run of its launch at ``place``: the place it
        was parked for, but for what is known once the copy is ready. False, and
        nothing given, where that run would not be the one it was started as (another sandbox,
        another environment, a place bound anew, a protected write): the caller closes it and
        starts the run anew. ``refreshed``: the copy brought up to date since it was parked
        (its whole tree: a conftest above the run's directory is imported too)."""
        parked, running, invocation = self._parked, self._running, self.invocation
        if parked is None or running is None or invocation is None or running.proc.stdin is None:
            return False
        # The copy's import roots, the claim's mutations and what is tainted are known once
        # the snapshot is taken: a parked run is started without them.
        known = place._replace(mutations=(), tainted=frozenset(), pythonpath=())
        if known != self.place._replace(mutations=(), tainted=frozenset(), pythonpath=()):
            return False
        if protected_write(self.launch, place) is not None:
            return False  # start() refuses it, and says why
        given = _invocation(self.launch, place, parked.scratch, invocation.witness)
        env = {**given.env, "PYTHONPYCACHEPREFIX": str(parked.prefix)}
        isolated = self._wrapped(given.argv, env, place, parked.scratch, parked.prefix)
        if isolated.by is not None:
            _isolation.environment(env)
        sandbox = isolated.argv[: len(isolated.argv) - len(given.argv)]
        bound = _bound(sandbox, self.cwd)
        if (sandbox, _startup(env), bound) != (parked.sandbox, parked.env, parked.bound):
            return False
        # The copy was brought up to date since the prefix was checked: its sources again.
        _bytecode.recheck(parked.prefix, [place.run_dir, *refreshed])
        path = env.get("PYTHONPATH", "").split(os.pathsep)
        run = {"argv": given.argv, "env": env, "path": path, "parked": parked.started_with}
        written = parked.scratch / _PARKED_RUN
        try:
            temporary = written.with_name(f".{_PARKED_RUN}")
            temporary.write_text(json.dumps(run), encoding="utf-8")
            os.replace(temporary, written)
            running.proc.stdin.write(_GO)
            running.proc.stdin.close()
        except OSError:
            return False  # it died: the caller starts the run anew
        self.place, self.invocation, self._parked = place, given, None
        self.at_ns, self.started = time.time_ns(), time.monotonic()
        self._running = running._replace(started=self.started)
        return True

    @property
    def running(self) -> bool:
        """Whether the command was started and is not yet waited for."""
        return self._running is not None

    def finish(self) -> tuple[RunResult, Reports]:
        """Wait for the command, read its reports, and clean up."""
        assert self.invocation is not None
        try:
            run = self._wait()
            reports = _read_reports(self.invocation, run, self.cwd)
            self._counted = True
        finally:
            self.close()
        return run, reports

    def close(self) -> None:
        """Stop the command if it still runs, and clean up; idempotent."""
        running, self._running = self._running, None
        if running is not None:
            running.stop()
        self._open.close()

    @property
    def cwd(self) -> Path:
        """The directory the command runs in."""
        return self.place.run_dir / (self.launch.cwd or ".")

    def _wait(self) -> RunResult:
        if self._ended is None:
            running, self._running = self._running, None
            assert running is not None
            self._ended = running.wait(self.launch.timeout_s)
        return self._ended

    def _rewritten(self, sources: list[str], timeout_s: float) -> Iterator[Rewritten]:
        """The run's own pytest's bytecode for ``sources`` (see ``_rewrites``): only after a run
        that is judged, in a kept copy, isolated (where the code under test could not reach the
        environment that compiles it)."""
        if not (self._counted and self.place.lasting and self.isolated_by is not None):
            return iter(())
        assert self.invocation is not None
        python = _rewrites.interpreter(self.invocation.argv, self.invocation.env, self.cwd)
        if python is None:
            return iter(())
        return _rewrites.rewritten(python, sources, [self.place.run_dir], timeout_s)

    def _begin(self, *, park: bool = False) -> Refusal | None:
        # Made for this run only, 0700, with a random name: the report paths cannot be pre-made.
        scratch = _scratch.make_dir("donegate-run-", _runs_dir(self.place))
        self._open.callback(_scratch.remove_dir, scratch)
        try:
            self.invocation = _invocation(self.launch, self.place, scratch)
        except runners.RunnerCommandError as exc:
            return Refusal(str(exc))
        prefix = self._open.enter_context(
            _bytecode_prefix(
                self.launch, self.place, scratch, self.invocation.witness, self._rewritten
            )
        )
        env = {**self.invocation.env, "PYTHONPYCACHEPREFIX": str(prefix)}
        # Python makes the prefix as it writes; an isolated run can only write where it exists.
        with contextlib.suppress(OSError):
            prefix.mkdir(parents=True, exist_ok=True, mode=0o700)
        command = self.invocation.argv
        isolated = self._wrapped(command, env, self.place, scratch, prefix)
        self.isolated_by, self.not_isolated = isolated.by, isolated.why_not
        if not isolated.argv:
            return Refusal(
                f'isolation = "required", and the run cannot be isolated: {isolated.why_not}',
                {"not_isolated": isolated.why_not or ""},
            )
        if isolated.by is not None:
            _isolation.environment(env)
        else:  # it may leave a process behind that writes to the copy once the run is over
            _watch.note_unisolated(self.place.run_dir)
        argv = isolated.argv
        if park:
            sandbox = argv[: len(argv) - len(command)]
            bound = _bound(sandbox, self.cwd)
            argv = [*sandbox, command[0], "-c", _PARKER.read_text(encoding="utf-8")]
            assert self.invocation.witness is not None  # a parked launch runs pytest
            env = {**env, "PYTHONPATH": str(self.invocation.witness.plugin_dir)}
            env[_RUN_FILE_VAR] = str(scratch / _PARKED_RUN)
            self._parked = _Parked(sandbox, _startup(env), bound, scratch, prefix, env)
        self.at_ns, self.started = time.time_ns(), time.monotonic()
        running = start_group(argv, self.cwd, env, given=park)
        if isinstance(running, RunResult):
            self._ended = running
        else:
            self._running = running
        return None

    def _places(self, place: Place, scratch: Path, prefix: Path) -> tuple[list[Path], list[Path]]:
        """Where a run at ``place`` may write, and what else of ``/tmp`` it sees."""
        writable = [place.run_dir, scratch, prefix]
        return writable, [place.base_dir, *map(Path, place.pythonpath)]

    def _wrapped(
        self, argv: list[str], env: Mapping[str, str], place: Place, scratch: Path, prefix: Path
    ) -> _isolation.Outcome:
        writable, visible = self._places(place, scratch, prefix)
        cwd = place.run_dir / (self.launch.cwd or ".")
        return _isolation.wrap(argv, self.launch.isolation, writable, visible, env, cwd)


class _Parked(Record):
    """What a parked run was started with: its sandbox (bubblewrap's argv before the command),
    its environment but what a run is given (see :func:`_startup`), each place bound into the
    sandbox with its device and inode, its scratch directory and bytecode prefix."""

    sandbox: list[str]
    env: dict[str, str]
    bound: list[tuple[str, int, int]]
    scratch: Path
    prefix: Path
    started_with: dict[str, str]  # the whole environment it was started with


# The parked interpreter (see _parker), run with -c: never imported here. What it is given:
# the word on its standard input, the run in this file of its scratch directory (named by the
# variable), as _parker's RUN_FILE_VAR and GO say.
_PARKER = Path(__file__).with_name("_parker.py")
_PARKED_RUN = "parked-run.json"
_RUN_FILE_VAR = "DONEGATE_PARKED_RUN"
_GO = b"go"
PARKED_NOT_GIVEN = 70  # its exit status when it was given anything else, or nothing


def _startup(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` but what a parked run is given when it is released: its ``PYTHONPATH``, the
    witness's settings (read once pytest loads the witness) and where its run is written. The
    rest (``PYTHONSAFEPATH``, ``PYTHONPYCACHEPREFIX``...) the interpreter read as it started:
    it must be the run's."""
    return {
        name: value
        for name, value in env.items()
        if name not in ("PYTHONPATH", _RUN_FILE_VAR) and not name.startswith(_witness.ENV_PREFIX)
    }


RUNS_DIR = "runs"  # under donegate's state directory: the scratch of the sealed runs
_STALE_RUN_S = 24 * 3600.0  # a scratch directory this old was left by a hook that was killed


def _runs_dir(place: Place) -> Path | None:
    """Where a run at ``place`` keeps its scratch (its reports, the witness, and what it is
    given when parked): in donegate's state directory for a run of the sealed copy, out of reach
    of a confined agent's commands, which may write the temporary directory (Codex's
    ``workspace-write`` lets them write all of ``/tmp``); None (the temporary directory) for a
    run with no state directory. One that cannot be made is an ``OSError``: never the temporary
    directory in its place, where such a job could rewrite the reports."""
    if place.bytecode is None:
        return None
    runs = place.bytecode.parent / RUNS_DIR
    runs.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):  # a sweep that fails leaves old scratch, nothing worse
        _sweep(runs)
    return runs


def _sweep(runs: Path) -> None:
    now = time.time()
    for entry in os.scandir(runs):
        with contextlib.suppress(OSError):
            if now - entry.stat(follow_symlinks=False).st_mtime > _STALE_RUN_S:
                _scratch.remove_dir(Path(entry.path))


def _bound(sandbox: list[str], cwd: Path) -> list[tuple[str, int, int]]:
    """Each place bubblewrap binds in ``sandbox`` (its argv), and ``cwd``, with its device and
    inode: a directory made anew at the same path after the parked run started is not the one
    it sees (-1, -1: gone)."""
    places = [arg for flag, arg in itertools.pairwise(sandbox) if flag in ("--bind", "--ro-bind")]
    found = []
    for place in [*places, str(cwd)]:
        try:
            st = os.stat(place)
        except OSError:
            found.append((place, -1, -1))
            continue
        found.append((place, st.st_dev, st.st_ino))
    return found


def parkable(launch: Launch, place: Place) -> bool:
    """Whether ``launch`` can be parked at ``place``: ``python -m pytest ...`` as an argv, in a
    kept copy (a fresh copy's path is known only once it is made)."""
    command = launch.command
    return (
        place.lasting
        and not launch.shell
        and launch.runner is None
        and launch.report is None
        and isinstance(command, tuple)
        and len(command) >= 3
        and Path(command[0]).name.startswith("python")
        and command[1:3] == ("-m", "pytest")
    )


def park(launch: Launch, place: Place) -> Started | None:
    """``launch``'s pytest started at ``place`` and held before it reads a file of the project
    (see :mod:`._parker`), to be given its run by :meth:`Started.release` once the kept copy is
    up to date; None where it cannot be parked (see :func:`parkable`) or would be refused."""
    if not parkable(launch, place) or protected_write(launch, place) is not None:
        return None
    started = Started(launch, place)
    try:
        refused = started._begin(park=True)
    except BaseException:
        started.close()
        raise
    if refused is not None or not started.running:
        started.close()
        return None
    return started


def start(launch: Launch, place: Place) -> Started | Refusal:
    """Start ``launch``'s command at ``place``, unless it must not run (then why not)."""
    refused = protected_write(launch, place)
    if refused is not None:
        return refused
    started = Started(launch, place)
    try:
        refused = started._begin()
    except BaseException:
        started.close()
        raise
    if refused is not None:
        started.close()
        return refused
    return started


def _bytecode_prefix(
    launch: Launch,
    place: Place,
    scratch: Path,
    witness: WitnessSetup | None,
    foreign: _bytecode.Foreign | None = None,
) -> contextlib.AbstractContextManager[Path]:
    """Bytecode only from a cache of donegate's (see ``_bytecode``), so that a ``.pyc`` planted
    in a ``__pycache__`` directory is never used."""
    # Runs of one command import much alike, in any project: they share their bytecode.
    command = launch.command if isinstance(launch.command, str) else list(launch.command)
    key = json.dumps([command, launch.cwd])
    # The store keeps what has the same path at the next run: not this run's scratch, nor a
    # fresh sealed copy (a new path at every run). A project run in place, or in a kept copy,
    # keeps its compiles, checked against their sources before each run as the libraries' are
    # (the agent can write either): rewriting a 50-test module's assertions costs pytest some
    # 20 ms at every run, and a project's own modules are compiled anew at every fresh copy.
    fleeting = [scratch]
    if not place.lasting:
        fleeting += map(Path, place.pythonpath)
        if place.run_dir != place.base_dir:
            fleeting += [place.base_dir, place.run_dir]
    # The witness is the same at every run, under a new name: its compile is kept as "witness".
    ours = {} if witness is None else {witness.plugin_dir / f"{witness.module}.py": "witness"}
    return _bytecode.run_prefix(place.bytecode, key, scratch / "pycache", fleeting, ours, foreign)


def protected_write(launch: Launch, place: Place) -> Refusal | None:
    """Why the command must not run: a write (or unaccepted content) a protected pattern covers."""
    always = (*RUNNER_FILES, *JUDGE_FILES) if launch.protect_runner_files else ()
    patterns = [*launch.protect, *always]
    # Content an agent wrote in an earlier session and no person accepted judges nothing either.
    for target in sorted(place.tainted):
        pattern = globs.first_match(target, patterns)
        if pattern is not None:
            return Refusal(
                # Said to the agent: accepting is the person's act, never the agent's.
                f"{target!r} (protected by {pattern!r}) holds content an agent wrote that no "
                "person has accepted: restore it as a person last left it, or ask the person "
                "to review it; only they can accept it",
                {"protected_write": target},
            )
    for mutation_id, written in place.mutations:
        target = globs.normalise(written, str(place.base_dir))
        pattern = globs.first_match(target, patterns)
        if pattern is not None:
            return Refusal(
                f"mutation {mutation_id} wrote {target!r}, which matches the protected pattern "
                f"{pattern!r}: a run after editing what judges the run shows nothing",
                {"protected_write": target},
            )
    return None


def _invocation(
    launch: Launch, place: Place, scratch: Path, witness: WitnessSetup | None = None
) -> Invocation:
    env = _runenv.base_environment(launch.env)
    team_path = launch.env.get("PYTHONPATH", "").split(os.pathsep)
    code_path = _runenv.search_path(place.pythonpath, team_path)
    if isinstance(launch.command, str):
        argv = [runners.bash(), "-o", "pipefail", "-c", launch.command]
    else:
        argv = list(launch.command)
    if not launch.is_pytest():
        _set(env, "PYTHONPATH", code_path)
        return _runner_invocation(launch, argv, env, place, scratch)
    return _pytest_invocation(launch, argv, env, code_path, witness or _witness.prepare(scratch))


def _runner_invocation(
    launch: Launch, argv: list[str], env: dict[str, str], place: Place, scratch: Path
) -> Invocation:
    runner = launch.runner_kind()
    if runner is None:
        return Invocation(argv, env)
    if launch.report is not None:
        # The runner writes where the team configured: a file found there now is stale.
        cwd = place.run_dir / (launch.cwd or ".")
        path = cwd / runners.report_flag_path(launch.report)
        before = _reportfile.clear(path)
        return Invocation(argv, env, runner_report=runners.RunnerReport(runner, path, before))
    if launch.shell:
        raise runners.RunnerCommandError(
            f"runner {runner!r}: donegate adds its reporter flags to an argv command, not to a "
            'shell line; give command as a list, or have it write JUnit to report = "junit:PATH"'
        )
    # must_pass tests run a second time in the same process, where the runner can.
    again = bool(launch.again) and runners.repeats(runner)
    argv, path = runners.with_reporter(runner, argv, scratch, again)
    return Invocation(argv, env, runner_report=runners.RunnerReport(runner, path, again=again))


def _pytest_invocation(
    launch: Launch,
    argv: list[str],
    env: dict[str, str],
    code_path: str | None,
    witness: WitnessSetup,
) -> Invocation:
    junit = witness.plugin_dir.parent / "junit.xml"
    ours = ["-p", witness.module, f"--junitxml={junit}"]
    # The witness gives these back as the team set them, so that the code under test (and the
    # processes it starts) sees the team's environment, not where the reports go.
    restore = {name: launch.env.get(name) for name in ("PYTHONSAFEPATH", "PYTEST_ADDOPTS")}
    restore["PYTHONPATH"] = code_path
    # No working directory first on sys.path: a pytest.py there cannot replace the runner.
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONPATH"] = _runenv.search_path([code_path or ""], [str(witness.plugin_dir)]) or ""
    env[witness.env_var] = witness.settings(restore, cwd_last=True, again=launch.again)
    if launch.shell:
        # The shell line is the team's; donegate's options travel in the environment.
        env["PYTEST_ADDOPTS"] = shlex.join([*shlex.split(env.get("PYTEST_ADDOPTS", "")), *ours])
    else:
        argv = [*argv, *ours]
    return Invocation(argv, env, junit, witness)


def _set(env: dict[str, str], name: str, value: str | None) -> None:
    if value is None:
        env.pop(name, None)
    else:
        env[name] = value


def _read_reports(invocation: Invocation, run: RunResult, run_dir: Path) -> Reports:
    # Imported after the run (by then test_run has imported it): starting needs no parser.
    from donegate.checks.runners._junit import read_junit, read_summary

    if invocation.runner_report is not None:
        outcomes, unread = runners.read(invocation.runner_report, run_dir)
        return Reports(outcomes=outcomes, unread=unread)
    if invocation.witness is None or invocation.junit is None:
        return Reports()
    return Reports(
        witness=_witness.read_report(invocation.witness.report),
        junit=read_junit(invocation.junit),
        summary=read_summary(run.output_tail),
    )


# What a plain test_run table may hold (anything else: the validated settings decide).
_PLAIN_KEYS = frozenset(
    {"command", "shell", "cwd", "env", "timeout_s", "protect", "protect_runner_files", "must_pass"}
)
_OTHER_PLAIN_KEYS = frozenset({"check_type", "name", "target", "covers", "expected", "satisfies"})


def plain_launch(raw: Mapping[str, Any]) -> Launch | None:
    """The launch of a configuration (its TOML, expanded) whose one check is a ``test_run``
    with plain values; None for any other (the validated settings are then the only reading)."""
    checks = raw.get("checks")
    if not isinstance(checks, list) or len(checks) != 1 or not isinstance(checks[0], dict):
        return None
    table: dict[str, Any] = checks[0]
    if table.get("check_type") != "test_run" or not set(table) <= _PLAIN_KEYS | _OTHER_PLAIN_KEYS:
        return None
    shell, command = table.get("shell", False), table.get("command", "")
    if not isinstance(shell, bool) or not (_text(command) if shell else _texts(command, 1)):
        return None
    env, cwd = table.get("env", {}), table.get("cwd")
    timeout = table.get("timeout_s", DEFAULT_TIMEOUT_S)
    protect, runner_files = table.get("protect", []), table.get("protect_runner_files", True)
    again = table.get("must_pass", [])
    plain = (
        (cwd is None or isinstance(cwd, str))
        and isinstance(env, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        and isinstance(timeout, int | float)
        and not isinstance(timeout, bool)
        and 0 < timeout < float("inf")
        and _texts(protect)
        and isinstance(runner_files, bool)
        and _texts(again)
    )
    if not plain:
        return None
    return Launch(
        command=command if isinstance(command, str) else tuple(command),
        shell=shell,
        cwd=cwd,
        env=env,
        timeout_s=timeout,
        protect=tuple(protect),
        protect_runner_files=runner_files,
        again=tuple(again),
    )


def _text(value: object) -> bool:
    return isinstance(value, str) and value != ""


def _texts(value: object, at_least: int = 0) -> bool:
    return isinstance(value, list) and len(value) >= at_least and all(_text(v) for v in value)
