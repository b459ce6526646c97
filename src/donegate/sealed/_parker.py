# ruff: noqa: UP004, UP006, UP035
"""A pytest run started before its copy is ready (a standalone program; it never imports donegate).

donegate starts this file's text with ``python -c``, in the run's sandbox, as a stop begins: the
interpreter starts and imports pytest from its own packages while the stop takes its snapshot and
brings the kept copy up to date, which is most of a small suite's time. It then waits on its
standard input for the word to go, and reads the run a cold start would have been (that start's
argv, its environment and its ``PYTHONPATH``) from a file of donegate's. Until then, nothing of
the project is on ``sys.path`` (donegate starts it with the witness's directory alone there) and
nothing of the project has run.

What is loaded early must be what the cold start would have loaded. The cold start puts the
project's import roots first on ``sys.path``, so a module of the project named like one pytest
imports (or tried to import and did not find), or like ``sitecustomize``, would have replaced it.
So each top-level name this process looked up or holds is looked for in the roots that are new to
it; if one of them provides it, or if anything here goes wrong, this process ``exec``s the cold
start instead, in the same sandbox with the same environment: the run is then exactly the cold
one. An interpreter without ``safe_path`` (before 3.11) would have put its working directory on
``sys.path`` too: it warms nothing, and ``exec``s the cold start.

Its standard input is ``/dev/null`` once the run is given, as a cold start's is.
"""

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Set

# The exit status when donegate closed the pipe without giving a run: it is no one's run.
NOT_GIVEN = 70
# What donegate writes to the pipe, and closes it, once the run is in the file this variable
# names (in the run's scratch directory, in donegate's state directory). Only the file says what
# to run: a process that opens the pipe through /proc (same user) can do no more than write
# other bytes into it, and then nothing runs.
RUN_FILE_VAR = "DONEGATE_PARKED_RUN"
GO = b"go"


def _main() -> None:
    given_in = os.environ.pop(RUN_FILE_VAR, "")
    started_with = dict(os.environ)  # as the sandbox passed it on (bubblewrap sets PWD)
    parked = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    seen: Set[str] = set()

    class _Seen(object):
        """Notes the top-level name of each import that reaches the path finders."""

        @staticmethod
        def find_spec(name: str, path: object = None, target: object = None) -> None:
            seen.add(name.partition(".")[0])

    warm = bool(getattr(sys.flags, "safe_path", False))
    warm = warm and sys.path[: len(parked)] == [os.path.abspath(p) for p in parked]
    import json

    if warm:
        sys.meta_path.insert(0, _Seen)
        try:
            import importlib.machinery  # noqa: F401  # what the check below uses
            import runpy  # what starts pytest as `-m` does

            import pytest  # noqa: F401
        except BaseException:  # the cold start meets the same error, and reports it
            warm = False
        finally:
            sys.meta_path.remove(_Seen)
    signal = _read_all(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    if signal != GO or not given_in:
        os._exit(NOT_GIVEN)
    with open(given_in, "rb") as given:
        run = json.loads(given.read().decode("utf-8"))
    argv = run["argv"]
    env = _as_passed_on(run["env"], run["parked"], started_with)
    warm = warm and _rerooted(run["path"], len(parked), seen)
    os.environ.clear()
    os.environ.update(env)
    if not warm:
        os.execvpe(argv[0], argv, env)
    sys.argv = ["-m", *argv[3:]]
    import runpy

    runpy._run_module_as_main("pytest")  # type: ignore[attr-defined]  # as `python -m pytest` runs it


def _as_passed_on(
    env: "Dict[str, str]", given: "Dict[str, str]", got: "Dict[str, str]"
) -> "Dict[str, str]":
    """``env`` as the sandbox would have passed it on: what it changed of the environment this
    process was ``given`` (and ``got``), changed alike."""
    env = dict(env)
    for name in set(given) | set(got):
        if given.get(name) != got.get(name):
            if name in got:
                env[name] = got[name]
            else:
                env.pop(name, None)
    return env


def _read_all(fd: int) -> bytes:
    chunks: List[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _rerooted(path: "List[str]", parked: int, seen: "Set[str]") -> bool:
    """Put the cold start's ``PYTHONPATH`` entries where the parked ones are, unless one of the
    new entries provides a module this process looked up or loaded."""
    import importlib
    from importlib.machinery import PathFinder

    wanted = [os.path.abspath(p) for p in path if p]
    added = [p for p in wanted if p not in sys.path[:parked]]
    names = seen | {name.partition(".")[0] for name in sys.modules}
    names |= {"sitecustomize", "usercustomize"}  # imported at a cold start, from its roots too
    names.discard("__main__")
    try:
        if any(PathFinder.find_spec(name, added) is not None for name in sorted(names)):
            return False
    except Exception:  # an entry that cannot be read: the cold start decides
        return False
    sys.path[:parked] = wanted
    importlib.invalidate_caches()
    return True


_main()
