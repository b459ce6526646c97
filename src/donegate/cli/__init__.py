"""The ``donegate`` command line: one subcommand per module, exit codes decided in one place.

``main`` is the console script. The hosts' hooks run ``donegate hook HOST`` at every agent stop,
in a fresh process: that one path skips loading the command-line framework (a quarter of its
start-up time). ``donegate collect`` starts its test command before loading it
(:mod:`donegate.cli.prestart`), and ``donegate verify --jsonl`` in its plain form answers its batch
without it (:mod:`donegate.cli.batch`). Everything else, ``donegate hook --help`` included, goes
through the click application in :mod:`donegate.cli.app`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    fast = _hook_args(args)
    if fast is not None:
        from donegate.hooks.run import run_hook

        # This process's own command ends with the answer (and leaves its commits in the log).
        code = run_hook(*fast, ends_process=argv is None)
        if argv is None:
            _exit_at_once(code)
        return code
    if args[:1] == ["verify"] and "--jsonl" in args:
        answered = _batch(args[1:])
        if answered is not None:
            if argv is None:
                _exit_at_once(answered)
            return answered
    if args[:1] == ["collect"]:
        code = _collect(args)
        if argv is None:  # this process's own command: pydantic and click need no tidying away
            _exit_at_once(code)
        return code
    from donegate.cli.app import run

    return run(args)


def _collect(args: list[str]) -> int:
    """``donegate collect``, its test command started before click and the models are loaded."""
    from donegate.cli.prestart import prestart

    early = prestart(args[1:])
    try:
        from donegate.cli.app import run

        code = run(args, early)
    finally:
        if early is not None:
            early.close()  # a run nothing took over: stopped, and its scratch removed
    return code


def _batch(args: list[str]) -> int | None:
    """``donegate verify --jsonl`` in its plain form, without click (see :mod:`.batch`)."""
    from donegate.cli import batch

    plain = batch.plain_args(args)
    return None if plain is None else batch.run(plain)


def _hook_args(args: list[str]) -> tuple[str, str | None] | None:
    """``hook HOST [--state-dir DIR]`` exactly, else None (click parses and explains the rest)."""
    if len(args) not in (2, 4) or args[0] != "hook":
        return None
    from donegate.hooks import ADAPTERS

    if args[1] not in ADAPTERS:
        return None
    if len(args) == 2:
        return args[1], None
    if args[2] != "--state-dir" or not args[3]:
        return None
    return args[1], args[3]


def _exit_at_once(code: int) -> NoReturn:
    """End the process once its answer is out, without finalising the interpreter.

    Finalising runs the cycle collector over every object of every module, frees them module by
    module (20 ms of a collect, with pydantic and click loaded), and closes what is still open:
    the database connections :func:`donegate.sqlitefile.hold` keeps open so that a stop's commits
    are not checkpointed (and synced) at its end. Everything the command wrote is already
    written: its files were closed, its commits made, its runs ended; only its output is flushed.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # the host stopped reading: no one to tell
            stream.flush()
    os._exit(code)
