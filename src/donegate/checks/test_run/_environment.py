"""Whether a run that did not count failed for want of something the environment lacks.

Two such wants are told: the command's program is not installed (not found on ``PATH``), and the
interpreter of a ``python -m pytest`` command has no pytest. Either is said to the person, since
the agent cannot fix it, and the stop is let go as not verified rather than sent back. A shell
line (``shell = true``) that exits 127 is asked the first: each program its simple commands start
is looked up here, never read from what the run printed (the code under test can print "command
not found" and exit 127 too).

Said only of what lies outside the project: a program or an interpreter inside it (a virtualenv,
``node_modules/.bin``) the agent can have removed, and can restore, so a failure there stays the
agent's. An agent that breaks an interpreter outside the project escapes only being sent back:
the stop is never verified, and the person is told what is missing.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from donegate.record import Record

# Asked in isolated mode (-I): neither the working directory, PYTHONPATH nor the user's site
# can lend the interpreter a pytest it does not have.
_HAS_PYTEST = "import importlib.util, sys; sys.exit(importlib.util.find_spec('pytest') is None)"
_PROBE_TIMEOUT_S = 30.0


class Lack(Record):
    """What a run lacked, in words, and whether the agent can have caused it (it lies in the
    project, where the agent writes): then it is the agent's to restore, not the person's."""

    words: str
    in_project: bool


def missing(
    command: Sequence[str], env: Mapping[str, str], project: Sequence[Path], pytest_run: bool
) -> Lack | None:
    """What ``command`` (an argv list) lacked, if that is why its run did not count; ``project``
    names the directories the agent writes."""
    path = env.get("PATH", os.environ.get("PATH", ""))
    written = "/" in command[0]
    program = command[0] if written else shutil.which(command[0], path=path)
    if program is None or not os.path.exists(program):
        # A path written in the command, or a PATH that reaches into the project: the program
        # may have been in the agent's tree, and it can put it back.
        reach = [command[0]] if written else [d for d in path.split(os.pathsep) if d]
        agents = any(_inside(place, project) for place in reach)
        return Lack(f"the test command's program {command[0]!r} is not installed", agents)
    if pytest_run and list(command[1:3]) == ["-m", "pytest"] and _lacks_pytest(program):
        return Lack(
            f"the checks' interpreter {program} has no pytest: install pytest for it, or make "
            "the check's command an interpreter that has it",
            _inside(program, project),
        )
    return None


def missing_in_shell(
    line: str, env: Mapping[str, str], project: Sequence[Path], cwd: Path
) -> Lack | None:
    """What the shell line ``line``, run in ``cwd``, lacked, if a program it starts is not
    installed."""
    for program in programs(line):
        written = os.path.join(cwd, program) if "/" in program else program
        lack = missing([written], env, project, pytest_run=False)
        if lack is not None:
            return Lack(f"the test command's program {program!r} is not installed", lack.in_project)
    return None


# Words that start a simple command without being its program: the program is a later word.
_PREFIXES = frozenset({"!", "{", "(", "if", "then", "elif", "else", "while", "until", "do"})
_WRAPPERS = frozenset({"exec", "command", "env", "time", "nohup"})
# Shell builtins and keywords: nothing on PATH to look for.
_BUILTINS = frozenset(
    {"cd", "true", "false", ":", ".", "source", "export", "set", "unset", "echo", "printf",
     "test", "[", "[[", "exit", "return", "eval", "ulimit", "umask", "wait", "}", ")", "fi",
     "done", "for", "case", "esac", "in", "shift", "read", "trap", "local", "declare"}
)  # fmt: skip
_PUNCTUATION = "();&|"


def programs(line: str) -> list[str]:
    """The programs the simple commands of a shell line start, in order, each once (none when
    the line does not split as shell words)."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=_PUNCTUATION)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return []
    found: list[str] = []
    expecting = True  # the next word may be a command's program
    for word in words:
        if set(word) <= set(_PUNCTUATION):
            expecting = True
        elif expecting and not _leads(word):
            expecting = False
            if word not in _BUILTINS and word not in found:
                found.append(word)
    return found


def _leads(word: str) -> bool:
    """Whether ``word`` comes before a command's program (a keyword, a wrapper such as ``env``
    or ``exec``, its option, a variable assignment)."""
    return word in _PREFIXES or word in _WRAPPERS or word.startswith("-") or _assignment(word)


def _assignment(word: str) -> bool:
    name, equals, _ = word.partition("=")
    return bool(equals) and name.isidentifier()


def _inside(program: str, project: Sequence[Path]) -> bool:
    # Both as written and with links followed: a virtualenv's python links out of the project.
    spelled = (os.path.abspath(program), os.path.realpath(program))
    roots = {os.path.abspath(p) for p in project} | {os.path.realpath(p) for p in project}
    return any(p == root or p.startswith(root + os.sep) for p in spelled for root in roots)


def _lacks_pytest(interpreter: str) -> bool:
    """True only when the interpreter answers that it has no pytest (not when it cannot say)."""
    try:
        probe = subprocess.run(
            [interpreter, "-I", "-c", _HAS_PYTEST],
            cwd="/",
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 1
